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
   * @param tenant the tenant's SDK objects, asked for only when the signature is to be verified: a
   *     tenant without keys then fails at the very step a bad signature fails, so both answer alike
   *     whatever else is wrong with the request (UNKNOWN_TENANT)
   */
  PaymentNotification read(
      String tenantId,
      Supplier<TenantClients> tenant,
      Map<String, String> rawHeaders,
      String body) {
    Map<String, String> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    headers.putAll(rawHeaders);
    if (body == null || body.isBlank()) {
      throw new InvalidNotificationException(Reason.MALFORMED, tenantId, "empty body", null);
    }
    String nonce = required(headers, "Wechatpay-Nonce", tenantId);
    Instant timestamp =
        freshTimestamp(required(headers, "Wechatpay-Timestamp", tenantId), tenantId);
    RequestParam request =
        new RequestParam.Builder()
            .serialNumber(required(headers, "Wechatpay-Serial", tenantId))
            .signature(required(headers, "Wechatpay-Signature", tenantId))
            .signType(headers.get("Wechatpay-Signature-Type"))
            .timestamp(headers.get("Wechatpay-Timestamp"))
            .nonce(nonce)
            .body(body)
            .build();
    TenantClients clients = tenant.get();
    Transaction transaction = decrypt(tenantId, clients, request);
    checkMerchant(tenantId, clients.credentials(), transaction);
    return toNotification(tenantId, envelope(body), nonce, timestamp, transaction);
  }

  private Instant freshTimestamp(String epochSeconds, String tenantId) {
    Instant signedAt;
    try {
      signedAt = Instant.ofEpochSecond(Long.parseLong(epochSeconds.trim()));
    } catch (NumberFormatException e) {
      throw new InvalidNotificationException(
          Reason.MALFORMED, tenantId, "Wechatpay-Timestamp " + epochSeconds, e);
    }
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

  private static Transaction decrypt(String tenantId, TenantClients tenant, RequestParam request) {
    try {
      return tenant.notifications().parse(request, Transaction.class);
    } catch (ValidationException e) {
      throw new InvalidNotificationException(Reason.BAD_SIGNATURE, tenantId, e.getMessage(), e);
    } catch (DecryptionException e) {
      throw new InvalidNotificationException(Reason.DECRYPTION_FAILED, tenantId, e.getMessage(), e);
    } catch (MalformedMessageException e) {
      throw new InvalidNotificationException(Reason.MALFORMED, tenantId, e.getMessage(), e);
    } catch (RuntimeException e) {
      // Untrusted input: bad base64, JSON the SDK's Gson cannot read, a nonce of the wrong
      // length...
      throw new InvalidNotificationException(Reason.MALFORMED, tenantId, String.valueOf(e), e);
    }
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

  private static JsonNode envelope(String body) {
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
    return value;
  }
}
