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

/** OTC_WECHAT_* configuration, proven by a prepay against the WeChat Pay simulator. */
class EnvironmentMerchantDirectoryTest {
  WeChatPaySimulator wechat;

  @BeforeEach
  void start() {
    wechat = WeChatPaySimulator.start();
  }

  @AfterEach
  void stop() {
    wechat.close();
  }

  /** The environment a local run sets, PEMs on one line with literal \n. */
  private Map<String, String> env() {
    Map<String, String> env = new HashMap<>();
    env.put("OTC_WECHAT_MCHID", wechat.mchid());
    env.put("OTC_WECHAT_APPID", " " + wechat.appid() + " ");
    env.put("OTC_WECHAT_MERCHANT_SERIAL", wechat.merchantSerialNumber());
    env.put("OTC_WECHAT_PRIVATE_KEY", wechat.merchantPrivateKeyPem().replace("\n", "\\n"));
    env.put("OTC_WECHAT_APIV3_KEY", wechat.apiV3Key());
    env.put("OTC_WECHAT_PUBLIC_KEY_ID", wechat.platformPublicKeyId());
    env.put("OTC_WECHAT_PUBLIC_KEY", wechat.platformPublicKeyPem().replace("\n", "\\n"));
    env.put("OTC_WECHAT_NOTIFY_URL", "https://mall.example.com/wechatpay/notify");
    env.put("OTC_WECHAT_BASE_URL", wechat.baseUrl().toString());
    return env;
  }

  @Test
  void theConfiguredMerchantPrepaysAtTheConfiguredEndpoint() {
    PaymentGateway gateway = Components.gatewayFromEnvironment(env());

    MiniProgramPayment payment =
        gateway.prepay(
            EnvironmentMerchantDirectory.DEFAULT_TENANT,
            new PrepayCommand(
                "ord-env-01",
                "Order ord-env-01",
                1999,
                "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o",
                Instant.now().plusSeconds(600)));

    assertThat(payment.appId()).isEqualTo(wechat.appid());
    assertThat(wechat.trade("ord-env-01").orElseThrow().prepayId()).isEqualTo(payment.prepayId());
    assertThat(wechat.trade("ord-env-01").orElseThrow().amountFen()).isEqualTo(1999);
  }

  @Test
  void withoutAMerchantIdPaymentsAreOff() {
    Map<String, String> env = env();
    env.put("OTC_WECHAT_MCHID", " ");

    assertThat(EnvironmentMerchantDirectory.fromEnvironment(env)).isEmpty();
    assertThat(EnvironmentMerchantDirectory.fromEnvironment(Map.of())).isEmpty();
    assertThat(Components.gatewayFromEnvironment(Map.of())).isNull();
  }

  @Test
  void aMissingValueNamesTheVariable() {
    Map<String, String> env = env();
    env.remove("OTC_WECHAT_APIV3_KEY");

    assertThatThrownBy(() -> EnvironmentMerchantDirectory.fromEnvironment(env))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("OTC_WECHAT_APIV3_KEY");
  }

  @Test
  void theBaseUrlDefaultsToWeChat() {
    assertThat(EnvironmentMerchantDirectory.settings(Map.of()))
        .isEqualTo(GatewaySettings.production());
    assertThat(EnvironmentMerchantDirectory.settings(env()))
        .isEqualTo(GatewaySettings.production().withBaseUrl(wechat.baseUrl()));
  }
}
