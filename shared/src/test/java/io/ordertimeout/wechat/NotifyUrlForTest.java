package io.ordertimeout.wechat;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The notify_url each tenant's prepay gives WeChat (MerchantCredentials.notifyUrlFor). */
class NotifyUrlForTest {

  private static MerchantCredentials withUrl(String notifyUrl) {
    return new MerchantCredentials(
        "1900000109",
        "wxd678efh567hg6787",
        "5157F09EFDC096DE15EBE81A47057A7232F1B8E1",
        "-----BEGIN PRIVATE KEY-----\n-----END PRIVATE KEY-----",
        "0123456789abcdef0123456789abcdef",
        "PUB_KEY_ID_0114232134912410000000000000",
        "-----BEGIN PUBLIC KEY-----\n-----END PUBLIC KEY-----",
        notifyUrl);
  }

  @Test
  void theOldUrlStaysTheDefaultTenantsAndGainsTheTenantForOthers() {
    MerchantCredentials old = withUrl("https://api.example.com/wechatpay/notify");
    assertThat(old.notifyUrlFor("default")).isEqualTo("https://api.example.com/wechatpay/notify");
    assertThat(old.notifyUrlFor("shop-a"))
        .isEqualTo("https://api.example.com/wechatpay/notify/shop-a");
  }

  @Test
  void aConfiguredTenantUrlIsReplacedByTheOrdersTenant() {
    MerchantCredentials own = withUrl("https://api.example.com/prod/wechatpay/notify/shop-a");
    assertThat(own.notifyUrlFor("shop-a"))
        .isEqualTo("https://api.example.com/prod/wechatpay/notify/shop-a");
    // a copy-pasted entry naming another tenant would send B's notifications to A's URL, where
    // A's keys refuse them for ever: the order's tenant wins
    assertThat(own.notifyUrlFor("shop-b"))
        .isEqualTo("https://api.example.com/prod/wechatpay/notify/shop-b");
    assertThat(own.notifyUrlFor("default"))
        .isEqualTo("https://api.example.com/prod/wechatpay/notify/default");
  }

  @Test
  void aUrlOfTheMerchantsOwnIsSentAsConfigured() {
    assertThat(withUrl("https://pay.mall.example/hooks/wx").notifyUrlFor("shop-a"))
        .isEqualTo("https://pay.mall.example/hooks/wx");
    assertThat(withUrl("https://pay.mall.example/wechatpay/notify/a/b").notifyUrlFor("shop-a"))
        .isEqualTo("https://pay.mall.example/wechatpay/notify/a/b");
    assertThat(withUrl("https://pay.mall.example/wechatpay/notifyx").notifyUrlFor("shop-a"))
        .isEqualTo("https://pay.mall.example/wechatpay/notifyx");
  }
}
