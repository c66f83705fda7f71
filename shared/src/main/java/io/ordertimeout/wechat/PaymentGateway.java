package io.ordertimeout.wechat;

import java.time.LocalDate;
import java.util.Map;

/**
 * The payment port the close path, the prepay route and the notification handler use. Each call
 * names the tenant whose merchant account it acts for.
 *
 * <p>Definite answers come back as results. An answer that only says "not now" (HTTP 5xx,
 * SYSTEM_ERROR, FREQUENCY_LIMITED, RULE_LIMIT, USERPAYING on close, timeouts, I/O errors, an
 * unverifiable response) is a {@link PaymentTransientException}: the caller leaves the order as it
 * is and tries again later. A request WeChat refuses for good (PARAM_ERROR, OUT_TRADE_NO_USED,
 * SIGN_ERROR, ...) is a {@link PaymentRejectedException}.
 *
 * <p>Trade calls name a {@link WeChatTrade} from the trade binding; a trade whose mchid is not the
 * tenant's merchant's is refused (MCHID_MISMATCH) before anything is sent.
 */
public interface PaymentGateway {

  /**
   * The mchid of the tenant's merchant account, the one its trades are keyed by: for a sub-merchant
   * of a service provider its sub_mchid (see {@link MerchantCredentials#tradeMchid()}).
   *
   * @throws IllegalArgumentException when the tenant has no merchant account
   */
  String merchantId(String tenantId);

  /** JSAPI prepay; answers the parameters the mini-program passes to wx.requestPayment. */
  MiniProgramPayment prepay(String tenantId, PrepayCommand command);

  /**
   * Queries the trade by out_trade_no; a trade WeChat never saw is {@link TradeState#NOT_FOUND}.
   */
  TradeStatus query(String tenantId, WeChatTrade trade);

  /**
   * Closes an unpaid trade; ALREADY_PAID means the caller must take the paid path instead. CLOSED
   * (a 204) and NOT_FOUND do not prove the trade's state: the caller confirms them by a query.
   */
  WeChatCloseOutcome close(String tenantId, WeChatTrade trade);

  /**
   * Refunds {@code amountFen} of a paid trade; repeating an outRefundNo is idempotent on WeChat.
   */
  RefundResult refund(
      String tenantId, WeChatTrade trade, String outRefundNo, long amountFen, String reason);

  RefundResult queryRefund(String tenantId, String outRefundNo);

  /**
   * Verifies and decrypts a payment notification. Header names may be in any case (API Gateway
   * lower- cases them). Replay protection is the caller's: it must remember {@link
   * PaymentNotification#nonce()} for at least the 5-minute freshness window this method enforces.
   *
   * @throws InvalidNotificationException on a bad signature, stale timestamp, malformed body,
   *     failed decryption or a transaction of another merchant
   */
  PaymentNotification parseNotification(String tenantId, Map<String, String> headers, String body);

  /**
   * Verifies and decrypts a notification posted to service provider {@code spMchid}'s URL with the
   * provider's keys, and names the tenant that is the sub-merchant its resource names. Replay
   * protection is the caller's, as for {@link #parseNotification}.
   *
   * @throws InvalidNotificationException as {@link #parseNotification}; UNKNOWN_TENANT when no
   *     tenant is a sub-merchant of {@code spMchid}, MERCHANT_MISMATCH when the resource names
   *     another provider or a sub-merchant (or appid) no tenant is
   */
  default ProviderNotification parseProviderNotification(
      String spMchid, Map<String, String> headers, String body) {
    throw new InvalidNotificationException(
        InvalidNotificationException.Reason.UNKNOWN_TENANT,
        "provider " + spMchid,
        "this gateway has no service provider accounts",
        null);
  }

  /**
   * Verifies and decrypts a refund notification, with the checks of {@link #parseNotification}
   * (signature, freshness, decryption, the tenant's merchant). Gateways that cannot read refund
   * notifications (a test's fake of another port) refuse every one as malformed, so the webhook
   * answers 400 and WeChat's retry or the compensation's query brings the outcome instead.
   *
   * @throws InvalidNotificationException as {@link #parseNotification}
   */
  default RefundNotification parseRefundNotification(
      String tenantId, Map<String, String> headers, String body) {
    throw new InvalidNotificationException(
        InvalidNotificationException.Reason.MALFORMED,
        tenantId,
        getClass().getSimpleName() + " reads no refund notifications",
        null);
  }

  /**
   * Day {@code day}'s trade bill (bill_type ALL) of the tenant's merchant, downloaded and its SHA1
   * digest verified; the caller closes it. A day without trades is an empty bill. A bill WeChat is
   * still preparing (STATEMENT_CREATING) or a download whose digest does not match is a {@link
   * PaymentTransientException}.
   *
   * @param day a day in Asia/Shanghai, WeChat's business day
   */
  default TradeBill tradeBill(String tenantId, LocalDate day) {
    throw new UnsupportedOperationException(
        getClass().getSimpleName() + " serves no trade bills (tenant " + tenantId + ")");
  }
}
