package io.ordertimeout.wechat;

/**
 * The notify_url a refund request gives WeChat, which posts the refund's outcome (REFUND.SUCCESS,
 * REFUND.ABNORMAL, REFUND.CLOSED) there. It sits beside the payment webhook: a merchant's notify
 * URL {@code https://host/stage/wechatpay/notify[/<id>]} gives {@code
 * https://host/stage/wechatpay/refund-notify/<tenantId>}, always with the tenant (the route is new,
 * no merchant registered a URL without one). A notify URL of the merchant's own proxy (not ending
 * in the webhook path) gives none: WeChat then posts to the refund URL configured on the merchant
 * platform, if any, and compensation's query settles the refund either way.
 */
public final class RefundNotifyUrls {

  /** The refund webhook's path; the tenant's route is this plus "/{tenantId}". */
  public static final String WEBHOOK_PATH = "/wechatpay/refund-notify";

  private RefundNotifyUrls() {}

  /**
   * @return the tenant's refund notify URL, or null when the merchant's notify URL is not this
   *     deployment's webhook
   */
  public static String forTenant(MerchantCredentials merchant, String tenantId) {
    String paymentUrl = merchant.notifyUrlFor(tenantId);
    int at = paymentUrl.lastIndexOf(MerchantCredentials.WEBHOOK_PATH);
    if (at < 0) {
      return null;
    }
    String rest = paymentUrl.substring(at + MerchantCredentials.WEBHOOK_PATH.length());
    if (!rest.isEmpty() && !rest.equals("/" + tenantId)) {
      return null; // a deeper path or another suffix: the merchant's own routing
    }
    return paymentUrl.substring(0, at) + WEBHOOK_PATH + "/" + tenantId;
  }
}
