package io.ordertimeout.wechat;

import com.fasterxml.jackson.databind.JsonNode;
import io.ordertimeout.wechat.InvalidNotificationException.Reason;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Verifies and decrypts one refund notification with exactly the checks of a payment notification
 * ({@link NotificationReader#signed}: body size, headers, 5-minute freshness, the tenant's key id,
 * the SDK's signature check), then the SDK decrypts the resource into its {@code
 * RefundNotification} model and the refund must name the tenant's merchant.
 */
final class RefundNotificationReader {

  /**
   * The SDK's model lacks {@code mchid}, which WeChat's refund resource carries; Gson fills this
   * field by its name, as it fills the model's own fields.
   */
  static final class MerchantRefund
      extends com.wechat.pay.java.service.refund.model.RefundNotification {
    private String mchid;

    String mchid() {
      return mchid;
    }
  }

  private final NotificationReader checks;

  RefundNotificationReader(NotificationReader checks) {
    this.checks = checks;
  }

  RefundNotification read(
      String tenantId, Supplier<TenantClients> tenant, Map<String, String> headers, String body) {
    NotificationReader.Verified<MerchantRefund> signed =
        checks.verify(tenantId, tenant, headers, body, MerchantRefund.class);
    MerchantRefund refund = signed.resource();
    MerchantCredentials merchant = signed.clients().credentials();
    if (!merchant.mchid().equals(refund.mchid())) {
      throw new InvalidNotificationException(
          Reason.MERCHANT_MISMATCH,
          tenantId,
          "out_refund_no " + refund.getOutRefundNo() + " names mchid " + refund.mchid(),
          null);
    }
    if (refund.getOutRefundNo() == null
        || refund.getOutTradeNo() == null
        || refund.getRefundStatus() == null
        || refund.getAmount() == null
        || refund.getAmount().getRefund() == null
        || refund.getAmount().getTotal() == null) {
      throw new InvalidNotificationException(
          Reason.MALFORMED,
          tenantId,
          "refund lacks out_refund_no, out_trade_no, refund_status or amount",
          null);
    }
    JsonNode envelope = NotificationReader.envelope(body);
    return new RefundNotification(
        envelope.path("id").asText(null),
        envelope.path("event_type").asText(null),
        signed.nonce(),
        signed.timestamp(),
        refund.mchid(),
        refund.getOutTradeNo(),
        refund.getTransactionId(),
        refund.getOutRefundNo(),
        refund.getRefundId(),
        RefundStatus.valueOf(refund.getRefundStatus().name()),
        successTime(tenantId, refund.getSuccessTime()),
        refund.getAmount().getTotal(),
        refund.getAmount().getRefund(),
        refund.getAmount().getPayerTotal(),
        refund.getAmount().getPayerRefund(),
        refund.getUserReceivedAccount());
  }

  private static Instant successTime(String tenantId, String rfc3339) {
    try {
      return WeChatPayGateway.instant(rfc3339);
    } catch (DateTimeParseException e) {
      throw new InvalidNotificationException(
          Reason.MALFORMED, tenantId, "success_time is not RFC 3339", null);
    }
  }
}
