package io.ordertimeout.wechat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.wechat.pay.java.core.exception.DecryptionException;
import com.wechat.pay.java.core.exception.MalformedMessageException;
import com.wechat.pay.java.core.exception.ValidationException;
import com.wechat.pay.java.core.notification.RequestParam;
import com.wechat.pay.java.service.payments.model.Transaction;
import io.ordertimeout.wechat.InvalidNotificationException.Reason;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * Verifies and decrypts one payment notification. The SDK's NotificationParser checks the signature
 * and decrypts, but ignores the timestamp; this class adds the 5-minute freshness check against our
 * clock (so a captured notification cannot be replayed later) and the merchant check.
 */
final class NotificationReader {

  /** WeChat's own rule for signed messages; also bounds how long callers must remember nonces. */
  static final Duration MAX_SKEW = Duration.ofMinutes(5);

  private static final ObjectMapper JSON = new ObjectMapper();

  private final Clock clock;

  NotificationReader(Clock clock) {
    this.clock = clock;
  }

  /**
   * Checks in the order of their cost, so that nothing an unauthenticated caller sends reaches a
   * key before it passed the cheap ones: the body's size and the headers' form (400, 413), the
   * timestamp's freshness (401), then the tenant's keys: the serial must be its WeChat Pay public
   * key id (401, without the SDK, which would log an ERROR per wrong serial), then the SDK verifies
   * the signature and decrypts. No refusal's message carries the body, the nonce or the signature.
   *
   * @param tenant the tenant's SDK objects, asked for only when the signature is to be verified: a
   *     tenant without keys then fails at the very step a bad signature fails, so both answer alike
   *     whatever else is wrong with the request (UNKNOWN_TENANT)
   */
  PaymentNotification read(
      String tenantId,
      Supplier<TenantClients> tenant,
      Map<String, String> rawHeaders,
      String body) {
    Signed signed = signed(tenantId, tenant, rawHeaders, body);
    Transaction transaction =
        decrypt(tenantId, signed.clients(), signed.request(), Transaction.class);
    checkMerchant(tenantId, signed.clients().credentials(), transaction);
    return toNotification(
        tenantId, envelope(body), signed.nonce(), signed.timestamp(), transaction);
  }

  /**
   * A request that passed every check before decryption, with the tenant's SDK objects to decrypt
   * it: what the payment and the refund notification share.
   */
  record Signed(TenantClients clients, RequestParam request, String nonce, Instant timestamp) {}

  /** The checks of {@link #read} up to decryption, in the same order; see there. */
  Signed signed(
      String tenantId,
      Supplier<TenantClients> tenant,
      Map<String, String> rawHeaders,
      String body) {
    if (body == null || body.isEmpty()) {
      throw new InvalidNotificationException(Reason.MALFORMED, tenantId, "empty body", null);
    }
    NotificationLimits.checkBodySize(tenantId, NotificationLimits.utf8Length(body));
    if (body.isBlank()) {
      throw new InvalidNotificationException(Reason.MALFORMED, tenantId, "empty body", null);
    }
    Map<String, String> headers = caseInsensitive(tenantId, rawHeaders);
    String nonce = required(headers, "Wechatpay-Nonce", tenantId);
    String serial = required(headers, "Wechatpay-Serial", tenantId);
    String signature = required(headers, "Wechatpay-Signature", tenantId);
    String signedAt = required(headers, "Wechatpay-Timestamp", tenantId);
    Instant timestamp = fresh(NotificationLimits.timestamp(tenantId, signedAt), tenantId);
    TenantClients clients = tenant.get();
    checkSerial(tenantId, clients.credentials(), serial);
    RequestParam request =
        new RequestParam.Builder()
            .serialNumber(serial)
            .signature(signature)
            .signType(headers.get("Wechatpay-Signature-Type"))
            .timestamp(signedAt)
            .nonce(nonce)
            .body(body)
            .build();
    return new Signed(clients, request, nonce, timestamp);
  }

  /**
   * The headers by name whatever their case (API Gateway lower-cases them, other callers may not).
   * One Wechatpay-* header given twice with two values is refused: which one the signature covers
   * would depend on the map's order.
   */
  private static Map<String, String> caseInsensitive(String tenantId, Map<String, String> raw) {
    Map<String, String> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    for (Map.Entry<String, String> e :
        raw == null ? Map.<String, String>of().entrySet() : raw.entrySet()) {
      if (e.getKey() == null || e.getValue() == null) {
        continue;
      }
      String before = headers.put(e.getKey(), e.getValue());
      if (before != null
          && !before.equals(e.getValue())
          && e.getKey().regionMatches(true, 0, "Wechatpay-", 0, 10)) {
        throw new InvalidNotificationException(
            Reason.MALFORMED,
            tenantId,
            "header " + NotificationLimits.printable(e.getKey(), 40) + " given twice",
            null);
      }
    }
    return headers;
  }

  private Instant fresh(Instant signedAt, String tenantId) {
    Duration skew = Duration.between(signedAt, clock.instant()).abs();
    if (skew.compareTo(MAX_SKEW) > 0) {
      throw new InvalidNotificationException(
          Reason.STALE_TIMESTAMP,
          tenantId,
          "signed at " + signedAt + ", " + skew.toSeconds() + " s off our clock",
          null);
    }
    return signedAt;
  }

  /**
   * In public key mode the serial must be the public key's id. The SDK checks it too, but logs an
   * ERROR for each mismatch: one per forged request would drown the runbook's ERROR search.
   */
  private static void checkSerial(String tenantId, MerchantCredentials merchant, String serial) {
    if (!merchant.wechatPayPublicKeyId().equals(serial)) {
      throw new InvalidNotificationException(
          Reason.UNKNOWN_SERIAL,
          tenantId,
          "Wechatpay-Serial "
              + NotificationLimits.printable(serial, 64)
              + " is not the tenant's WeChat Pay public key id "
              + merchant.wechatPayPublicKeyId(),
          null);
    }
  }

  /**
   * The SDK's exceptions are not kept, nor their messages: a failed signature's message holds the
   * whole signed message (timestamp, nonce, body) and the signature, the others the notification.
   */
  static <T> T decrypt(
      String tenantId, TenantClients tenant, RequestParam request, Class<T> resource) {
    try {
      return tenant.notifications().parse(request, resource);
    } catch (ValidationException e) {
      throw new InvalidNotificationException(
          Reason.BAD_SIGNATURE,
          tenantId,
          "Wechatpay-Signature does not verify with the WeChat Pay public key",
          null);
    } catch (DecryptionException e) {
      throw new InvalidNotificationException(
          Reason.DECRYPTION_FAILED,
          tenantId,
          "resource does not decrypt with the tenant's APIv3 key",
          null);
    } catch (MalformedMessageException e) {
      throw new InvalidNotificationException(
          Reason.MALFORMED, tenantId, "not a notification: " + sdkFailure(e), null);
    } catch (RuntimeException e) {
      // Untrusted input: bad base64, JSON the SDK's Gson cannot read, a nonce of the wrong
      // length...
      throw new InvalidNotificationException(
          Reason.MALFORMED, tenantId, "the SDK cannot read it: " + sdkFailure(e), null);
    }
  }

  /** The exception's class only: SDK and Gson messages quote the input they could not read. */
  private static String sdkFailure(RuntimeException e) {
    return e.getClass().getSimpleName();
  }

  private static void checkMerchant(String tenantId, MerchantCredentials merchant, Transaction t) {
    if (!merchant.mchid().equals(t.getMchid()) || !merchant.appid().equals(t.getAppid())) {
      throw new InvalidNotificationException(
          Reason.MERCHANT_MISMATCH,
          tenantId,
          "out_trade_no "
              + t.getOutTradeNo()
              + " names mchid "
              + t.getMchid()
              + " appid "
              + t.getAppid(),
          null);
    }
  }

  static JsonNode envelope(String body) {
    try {
      return JSON.readTree(body);
    } catch (IOException e) {
      throw new IllegalStateException("notification body verified by the SDK is not JSON", e);
    }
  }

  private static PaymentNotification toNotification(
      String tenantId, JsonNode envelope, String nonce, Instant timestamp, Transaction t) {
    if (t.getOutTradeNo() == null || t.getTradeState() == null || t.getAmount() == null) {
      throw new InvalidNotificationException(
          Reason.MALFORMED,
          tenantId,
          "transaction lacks out_trade_no, trade_state or amount",
          null);
    }
    return new PaymentNotification(
        envelope.path("id").asText(null),
        envelope.path("event_type").asText(null),
        nonce,
        timestamp,
        t.getOutTradeNo(),
        t.getTransactionId(),
        WeChatPayGateway.tradeState(t.getTradeState()),
        t.getAmount().getTotal() == null ? 0 : t.getAmount().getTotal(),
        t.getMchid(),
        t.getAppid(),
        WeChatPayGateway.instant(t.getSuccessTime()));
  }

  private static String required(Map<String, String> headers, String name, String tenantId) {
    String value = headers.get(name);
    if (value == null || value.isBlank()) {
      throw new InvalidNotificationException(
          Reason.MALFORMED, tenantId, "header " + name + " missing", null);
    }
    NotificationLimits.checkHeaderLength(tenantId, name, value);
    return value;
  }
}
