package io.ordertimeout.wechat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import io.ordertimeout.wiring.Components;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Sub-merchant configuration outside the secret: OTC_WECHAT_SUB_* (proven by a partner prepay
 * against the simulator as provider), the static directory's contradictions, the provider's notify
 * URL.
 */
class SubMerchantConfigTest {
  WeChatPaySimulator provider;

  @BeforeEach
  void start() {
    provider = WeChatPaySimulator.start();
    provider.subMerchants().register("1900000201", "wx1111111111111111");
  }

  @AfterEach
  void stop() {
    provider.close();
  }

  private Map<String, String> env() {
    Map<String, String> env = new HashMap<>();
    env.put("OTC_WECHAT_MCHID", provider.mchid());
    env.put("OTC_WECHAT_APPID", provider.appid());
    env.put("OTC_WECHAT_MERCHANT_SERIAL", provider.merchantSerialNumber());
    env.put("OTC_WECHAT_PRIVATE_KEY", provider.merchantPrivateKeyPem().replace("\n", "\\n"));
    env.put("OTC_WECHAT_APIV3_KEY", provider.apiV3Key());
    env.put("OTC_WECHAT_PUBLIC_KEY_ID", provider.platformPublicKeyId());
    env.put("OTC_WECHAT_PUBLIC_KEY", provider.platformPublicKeyPem().replace("\n", "\\n"));
    env.put("OTC_WECHAT_NOTIFY_URL", "https://mall.example.com/wechatpay/notify");
    env.put("OTC_WECHAT_BASE_URL", provider.baseUrl().toString());
    env.put("OTC_WECHAT_SUB_MCHID", "1900000201");
    env.put("OTC_WECHAT_SUB_APPID", "wx1111111111111111");
    return env;
  }

  @Test
  void subMchidInTheEnvironmentMakesTheDefaultTenantASubMerchant() {
    PaymentGateway gateway = Components.gatewayFromEnvironment(env());

    MiniProgramPayment payment =
        gateway.prepay(
            EnvironmentMerchantDirectory.DEFAULT_TENANT,
            new PrepayCommand(
                "ord-sub-01",
                "Order ord-sub-01",
                700,
                "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o",
                Instant.now().plusSeconds(600)));

    assertThat(payment.appId()).isEqualTo("wx1111111111111111");
    assertThat(provider.subMerchants().trade("1900000201", "ord-sub-01").orElseThrow().amountFen())
        .isEqualTo(700);
    assertThat(provider.trade("ord-sub-01")).isEmpty();
    assertThat(gateway.merchantId(EnvironmentMerchantDirectory.DEFAULT_TENANT))
        .isEqualTo("1900000201");
  }

  @Test
  void aSubAppidWithoutSubMchidIsRefused() {
    Map<String, String> env = env();
    env.remove("OTC_WECHAT_SUB_MCHID");

    assertThatThrownBy(() -> EnvironmentMerchantDirectory.fromEnvironment(env))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("OTC_WECHAT_SUB_APPID is set but OTC_WECHAT_SUB_MCHID is not");
  }

  @Test
  void aSubMchidThatIsNotDigitsIsRefused() {
    Map<String, String> env = env();
    env.put("OTC_WECHAT_SUB_MCHID", "shop-a");

    assertThatThrownBy(() -> EnvironmentMerchantDirectory.fromEnvironment(env))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("OTC_WECHAT_SUB_MCHID")
        .hasMessageContaining("1-32 digits");
  }

  private static MerchantCredentials sub(String sp, String subMchid, String apiV3Key, String url) {
    return new MerchantCredentials(
        sp,
        "wx8888888888888888",
        "SERIAL",
        "-----BEGIN PRIVATE KEY-----",
        apiV3Key,
        "PUB_KEY_ID_01",
        "-----BEGIN PUBLIC KEY-----",
        url,
        new SubMerchant(subMchid, null));
  }

  @Test
  void theStaticDirectoryRefusesTwoTenantsAsOneSubMerchant() {
    String key = "0123456789abcdef0123456789abcdef";
    String url = "https://mall.example.com/wechatpay/notify";
    Map<String, MerchantCredentials> tenants =
        Map.of(
            "shop-a", sub("1900000100", "1900000201", key, url),
            "shop-b", sub("1900000100", "1900000201", key, url));

    assertThatThrownBy(() -> new StaticMerchantDirectory(tenants))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("are both sub-merchant 1900000201 of provider 1900000100");
  }

  @Test
  void theStaticDirectoryRoutesBySpMchidAndSubMchid() {
    String key = "0123456789abcdef0123456789abcdef";
    String url = "https://mall.example.com/wechatpay/notify";
    StaticMerchantDirectory directory =
        new StaticMerchantDirectory(
            Map.of(
                "shop-a", sub("1900000100", "1900000201", key, url),
                "shop-b", sub("1900000100", "1900000202", key, url),
                "shop-c", sub("1900000110", "1900000201", key, url)));

    assertThat(directory.tenantOfSubMerchant("1900000100", "1900000201")).contains("shop-a");
    assertThat(directory.tenantOfSubMerchant("1900000100", "1900000202")).contains("shop-b");
    assertThat(directory.tenantOfSubMerchant("1900000110", "1900000201")).contains("shop-c");
    assertThat(directory.tenantOfSubMerchant("1900000110", "1900000202")).isEmpty();
  }

  @Test
  void aSubMerchantsNotifyUrlIsTheProvidersRoute() {
    String key = "0123456789abcdef0123456789abcdef";
    String provider = "https://api.example.com/wechatpay/notify/provider/1900000100";

    assertThat(
            sub("1900000100", "1900000201", key, "https://api.example.com/wechatpay/notify")
                .notifyUrlFor("shop-a"))
        .isEqualTo(provider);
    assertThat(
            sub("1900000100", "1900000201", key, "https://api.example.com/wechatpay/notify/shop-a")
                .notifyUrlFor("shop-a"))
        .isEqualTo(provider);
    assertThat(sub("1900000100", "1900000201", key, provider).notifyUrlFor("default"))
        .isEqualTo(provider);
    assertThat(
            sub("1900000100", "1900000201", key, "https://proxy.example.com/wx")
                .notifyUrlFor("shop-a"))
        .isEqualTo("https://proxy.example.com/wx");
  }
}
