package io.ordertimeout.embedded.wechat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.security.PrivateKey;
import java.time.Clock;
import java.time.Instant;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

/**
 * Builds one payment notification in WeChat's wire format. By default it is exactly what WeChat
 * sends; each setter departs from that in one way, so attack tests can forge signatures, keys,
 * timestamps, nonces and ciphertexts. Obtain one from {@link
 * WeChatPaySimulator#notification(String)}.
 */
public final class NotificationBuilder {

  static final String SIGNATURE_TYPE = "WECHATPAY2-SHA256-RSA2048";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final String transactionJson;
  private final Clock clock;
  private String id = UUID.randomUUID().toString();
  private String eventType = "TRANSACTION.SUCCESS";
  private PrivateKey signingKey;
  private String serial;
  private String apiV3Key;
  private Instant timestamp;
  private String nonce;
  private boolean tamperCiphertext;
  private String resourceType = "transaction";
  private String summary = "支付成功";

  NotificationBuilder(
      String transactionJson, PrivateKey signingKey, String serial, String apiV3Key, Clock clock) {
    this.transactionJson = transactionJson;
    this.signingKey = signingKey;
    this.serial = serial;
    this.apiV3Key = apiV3Key;
    this.clock = clock;
  }

  /** The notification id; WeChat repeats it on every retry of one event. */
  public NotificationBuilder id(String notificationId) {
    this.id = notificationId;
    return this;
  }

  public NotificationBuilder eventType(String type) {
    this.eventType = type;
    return this;
  }

  /** Sign with another key than the platform key: a forgery. */
  public NotificationBuilder signedWith(PrivateKey key) {
    this.signingKey = key;
    return this;
  }

  /** The Wechatpay-Serial header, normally the platform public key id. */
  public NotificationBuilder serial(String wechatpaySerial) {
    this.serial = wechatpaySerial;
    return this;
  }

  /** Encrypt the resource with another APIv3 key. */
  public NotificationBuilder encryptedWith(String otherApiV3Key) {
    this.apiV3Key = otherApiV3Key;
    return this;
  }

  /** The signed Wechatpay-Timestamp, e.g. ten minutes ago for a stale notification. */
  public NotificationBuilder timestamp(Instant signedAt) {
    this.timestamp = signedAt;
    return this;
  }

  /** The signed Wechatpay-Nonce, e.g. one already seen for a replay. */
  public NotificationBuilder nonce(String wechatpayNonce) {
    this.nonce = wechatpayNonce;
    return this;
  }

  /**
   * Flip one byte of the ciphertext and sign the result: the signature holds, GCM's tag does not.
   */
  public NotificationBuilder tamperCiphertext() {
    this.tamperCiphertext = true;
    return this;
  }

  /**
   * The resource's original_type and associated_data ("refund" for a refund notification) and the
   * summary.
   */
  NotificationBuilder resource(String originalType, String eventSummary) {
    this.resourceType = originalType;
    this.summary = eventSummary;
    return this;
  }

  public SignedNotification build() {
    return sign(body());
  }

  String notificationId() {
    return id;
  }

  String body() {
    String resourceNonce = WeChatCrypto.nonce(12);
    String ciphertext =
        WeChatCrypto.encrypt(apiV3Key, resourceType, resourceNonce, transactionJson);
    if (tamperCiphertext) {
      byte[] raw = Base64.getDecoder().decode(ciphertext);
      raw[0] ^= 0x01;
      ciphertext = Base64.getEncoder().encodeToString(raw);
    }
    ObjectNode root =
        JSON.createObjectNode()
            .put("id", id)
            .put("create_time", TradeBook.rfc3339(clock.instant()))
            .put("resource_type", "encrypt-resource")
            .put("event_type", eventType)
            .put("summary", summary);
    root.putObject("resource")
        .put("original_type", resourceType)
        .put("algorithm", "AEAD_AES_256_GCM")
        .put("ciphertext", ciphertext)
        .put("associated_data", resourceType)
        .put("nonce", resourceNonce);
    return root.toString();
  }

  /**
   * Signs "timestamp\nnonce\nbody\n"; WeChat re-signs each retry with a fresh timestamp and nonce.
   */
  SignedNotification sign(String body) {
    String ts = String.valueOf((timestamp == null ? clock.instant() : timestamp).getEpochSecond());
    String n = nonce == null ? WeChatCrypto.nonce(32) : nonce;
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put("Wechatpay-Serial", serial);
    headers.put(
        "Wechatpay-Signature", WeChatCrypto.sign(signingKey, ts + "\n" + n + "\n" + body + "\n"));
    headers.put("Wechatpay-Timestamp", ts);
    headers.put("Wechatpay-Nonce", n);
    headers.put("Wechatpay-Signature-Type", SIGNATURE_TYPE);
    return new SignedNotification(headers, body);
  }
}
