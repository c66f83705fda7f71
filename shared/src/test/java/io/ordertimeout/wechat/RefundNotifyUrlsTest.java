package io.ordertimeout.wechat;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The notify_url of a tenant's refunds, derived from its merchant's notify URL. */
class RefundNotifyUrlsTest {

  private static MerchantCredentials merchant(String notifyUrl) {
    return new MerchantCredentials(
        "1900000109",
        "wxd678efh567hg6787",
        "SERIAL",
        "PEM",
        "0123456789abcdef0123456789abcdef",
        "PUB_KEY_ID_01",
        "PUBLIC PEM",
        notifyUrl);
  }

  @Test
  void theWebhooksNotifyUrlGivesTheTenantsRefundRoute() {
    String base = "https://abc.execute-api.ap-east-1.amazonaws.com";

    assertThat(RefundNotifyUrls.forTenant(merchant(base + "/wechatpay/notify"), "shop-a"))
        .isEqualTo(base + "/wechatpay/refund-notify/shop-a");
    assertThat(RefundNotifyUrls.forTenant(merchant(base + "/wechatpay/notify/other"), "shop-a"))
        .isEqualTo(base + "/wechatpay/refund-notify/shop-a");
    // the default tenant keeps its plain payment URL, but its refund route names it
    assertThat(RefundNotifyUrls.forTenant(merchant(base + "/wechatpay/notify"), "default"))
        .isEqualTo(base + "/wechatpay/refund-notify/default");
  }

  @Test
  void aNotifyUrlOfTheMerchantsOwnGivesNone() {
    assertThat(RefundNotifyUrls.forTenant(merchant("https://mall.example.com/pay/cb"), "shop-a"))
        .isNull();
    assertThat(
            RefundNotifyUrls.forTenant(
                merchant("https://mall.example.com/wechatpay/notify/a/b"), "shop-a"))
        .isNull();
    assertThat(
            RefundNotifyUrls.forTenant(
                merchant("https://mall.example.com/wechatpay/notify-proxy"), "shop-a"))
        .isNull();
  }
}
