package io.ordertimeout.aws;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Secret JSON shapes and the configuration rules that need no AWS API. */
class SecretShapesTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String ARN = "arn:aws:secretsmanager:ap-southeast-1:123456789012:secret:x";

  @Test
  void singleMerchantServesEveryTenant() throws Exception {
    var directory =
        SecretsMerchantDirectory.parse(
            ARN, JSON.valueToTree(SecretsEmulatorTest.merchant("1900000002")));

    assertThat(directory.forTenant("any").mchid()).isEqualTo("1900000002");
    assertThat(directory.forTenant("other").mchid()).isEqualTo("1900000002");
  }

  @Test
  void missingMerchantFieldNamesFieldAndTenantButNoValue() throws Exception {
    Map<String, Object> merchant = new HashMap<>(SecretsEmulatorTest.merchant("1900000003"));
    merchant.remove("wechatPayPublicKey");
    JsonNode json = JSON.valueToTree(Map.of("tenants", Map.of("mall-a", merchant)));

    assertThatThrownBy(() -> SecretsMerchantDirectory.parse(ARN, json))
        .isInstanceOf(SecretUnavailableException.class)
        .hasMessageContaining("tenant mall-a")
        .hasMessageContaining("'wechatPayPublicKey'")
        .hasMessageNotContaining("PRIVATE KEY");
  }

  @Test
  void shortApiV3KeyFailsAtLoad() throws Exception {
    Map<String, Object> merchant = new HashMap<>(SecretsEmulatorTest.merchant("1900000004"));
    merchant.put("apiV3Key", "too-short-key");

    assertThatThrownBy(() -> SecretsMerchantDirectory.parse(ARN, JSON.valueToTree(merchant)))
        .isInstanceOf(SecretUnavailableException.class)
        .hasMessageContaining("1900000004")
        .hasMessageNotContaining("too-short-key");
  }

  @Test
  void dbSecretWithoutPasswordIsRefused() {
    JsonNode json = JSON.valueToTree(Map.of("username", "otc_app"));

    assertThatThrownBy(() -> DbCredentials.parse(ARN, json))
        .isInstanceOf(SecretUnavailableException.class)
        .hasMessage("secret " + ARN + " has no 'password'");
  }

  @Test
  void plainPasswordOnLambdaFailsInit() {
    Map<String, String> env =
        Map.of(
            "AWS_LAMBDA_FUNCTION_NAME", "otc-order-created",
            "OTC_MYSQL_URL", "jdbc:mysql://db:3306/otc",
            "OTC_REDIS_URI", "rediss://redis:6379",
            "OTC_MYSQL_PASSWORD", "plain");

    assertThatThrownBy(
            () ->
                ConfigLoader.load(
                    env,
                    () -> {
                      throw new AssertionError("no secret is named");
                    }))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("OTC_MYSQL_PASSWORD is set on Lambda function otc-order-created")
        .hasMessageNotContaining("plain");
  }

  @Test
  void localRunWithoutSecretsNeverBuildsAClient() {
    Map<String, String> env =
        Map.of(
            "OTC_MYSQL_URL", "jdbc:mysql://127.0.0.1:3306/otc",
            "OTC_REDIS_URI", "redis://127.0.0.1:6379",
            "OTC_MYSQL_USER", "dev",
            "OTC_MYSQL_PASSWORD", "dev-pass");

    var config =
        ConfigLoader.load(
            env,
            () -> {
              throw new AssertionError("no secret is named");
            });

    assertThat(config.mysqlUser()).isEqualTo("dev");
    assertThat(config.mysqlPassword()).isEqualTo("dev-pass");
  }
}
