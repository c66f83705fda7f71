package io.ordertimeout.aws;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The merchant secret's two modes side by side, and the contradictions that fail the load. */
class PartnerSecretTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String ARN = "arn:aws:secretsmanager:ap-southeast-1:123456789012:secret:m";

  /** A sub-merchant entry: the provider's keys under spMchid/spAppid, the sub-merchant's ids. */
  static Map<String, Object> subMerchant(
      Map<String, Object> provider, String sub, String subAppid) {
    Map<String, Object> m = new LinkedHashMap<>(provider);
    m.put("mode", "partner");
    m.put("spMchid", m.remove("mchid"));
    m.put("spAppid", m.remove("appid"));
    m.put("subMchid", sub);
    if (subAppid != null) {
      m.put("subAppid", subAppid);
    }
    return m;
  }

  @Test
  void directAndSubMerchantTenantsLoadSideBySide() throws Exception {
    Map<String, Object> provider = SecretsEmulatorTest.merchant("1900000100");
    JsonNode json =
        JSON.valueToTree(
            Map.of(
                "tenants",
                Map.of(
                    "mall-direct", SecretsEmulatorTest.merchant("1900000001"),
                    "shop-a", subMerchant(provider, "1900000201", "wx1111111111111111"),
                    "shop-b", subMerchant(provider, "1900000202", null))));

    SecretsMerchantDirectory directory = SecretsMerchantDirectory.parse(ARN, json);

    assertThat(directory.forTenant("mall-direct").partner()).isFalse();
    assertThat(directory.forTenant("mall-direct").tradeMchid()).isEqualTo("1900000001");
    var a = directory.forTenant("shop-a");
    assertThat(a.partner()).isTrue();
    assertThat(a.mchid()).isEqualTo("1900000100");
    assertThat(a.tradeMchid()).isEqualTo("1900000201");
    assertThat(a.payerAppid()).isEqualTo("wx1111111111111111");
    assertThat(directory.forTenant("shop-b").payerAppid()).isEqualTo("wx8888888888888888");
    assertThat(directory.tenantOfSubMerchant("1900000100", "1900000201")).contains("shop-a");
    assertThat(directory.tenantOfSubMerchant("1900000100", "1900000202")).contains("shop-b");
    assertThat(directory.tenantOfSubMerchant("1900000100", "1900000001")).isEmpty();
    assertThat(directory.tenantOfSubMerchant("1900000999", "1900000201")).isEmpty();
    assertThat(directory.provider("1900000100").orElseThrow().apiV3Key())
        .isEqualTo(provider.get("apiV3Key"));
    assertThat(directory.provider("1900000001")).isEmpty();
  }

  @Test
  void unknownModeIsRefused() throws Exception {
    Map<String, Object> m = SecretsEmulatorTest.merchant("1900000001");
    m.put("mode", "service-provider");

    assertThatThrownBy(() -> SecretsMerchantDirectory.parse(ARN, JSON.valueToTree(m)))
        .isInstanceOf(SecretUnavailableException.class)
        .hasMessageContaining("mode must be 'direct' or 'partner'");
  }

  @Test
  void directMerchantWithPartnerFieldIsRefused() throws Exception {
    Map<String, Object> m = SecretsEmulatorTest.merchant("1900000001");
    m.put("subMchid", "1900000201");

    assertThatThrownBy(() -> SecretsMerchantDirectory.parse(ARN, JSON.valueToTree(m)))
        .isInstanceOf(SecretUnavailableException.class)
        .hasMessageContaining("'subMchid' contradicts mode direct")
        .hasMessageContaining("\"mode\":\"partner\"");
  }

  @Test
  void subMerchantWithMchidIsRefused() throws Exception {
    Map<String, Object> m =
        subMerchant(SecretsEmulatorTest.merchant("1900000100"), "1900000201", null);
    m.put("mchid", "1900000201");

    assertThatThrownBy(() -> SecretsMerchantDirectory.parse(ARN, JSON.valueToTree(m)))
        .isInstanceOf(SecretUnavailableException.class)
        .hasMessageContaining("'mchid' contradicts mode partner");
  }

  @Test
  void subMerchantWithoutSubMchidNamesTheField() throws Exception {
    Map<String, Object> m =
        subMerchant(SecretsEmulatorTest.merchant("1900000100"), "1900000201", null);
    m.remove("subMchid");

    assertThatThrownBy(() -> SecretsMerchantDirectory.parse(ARN, JSON.valueToTree(m)))
        .isInstanceOf(SecretUnavailableException.class)
        .hasMessageContaining("'subMchid'");
  }

  @Test
  void subMchidEqualToTheProvidersIsRefused() throws Exception {
    Map<String, Object> m =
        subMerchant(SecretsEmulatorTest.merchant("1900000100"), "1900000100", null);

    assertThatThrownBy(() -> SecretsMerchantDirectory.parse(ARN, JSON.valueToTree(m)))
        .isInstanceOf(SecretUnavailableException.class)
        .hasMessageContaining("provider's own spMchid");
  }

  @Test
  void twoTenantsAsOneSubMerchantAreRefused() throws Exception {
    Map<String, Object> provider = SecretsEmulatorTest.merchant("1900000100");
    JsonNode json =
        JSON.valueToTree(
            Map.of(
                "tenants",
                Map.of(
                    "shop-a", subMerchant(provider, "1900000201", null),
                    "shop-b", subMerchant(provider, "1900000201", null))));

    assertThatThrownBy(() -> SecretsMerchantDirectory.parse(ARN, json))
        .isInstanceOf(SecretUnavailableException.class)
        .hasMessageContaining("are both sub-merchant 1900000201 of provider 1900000100");
  }

  @Test
  void oneProviderWithTwoKeysIsRefused() throws Exception {
    Map<String, Object> b =
        subMerchant(SecretsEmulatorTest.merchant("1900000100"), "1900000202", null);
    b.put("apiV3Key", "fedcba9876543210fedcba9876543210");
    JsonNode json =
        JSON.valueToTree(
            Map.of(
                "tenants",
                Map.of(
                    "shop-a",
                    subMerchant(SecretsEmulatorTest.merchant("1900000100"), "1900000201", null),
                    "shop-b",
                    b)));

    assertThatThrownBy(() -> SecretsMerchantDirectory.parse(ARN, json))
        .isInstanceOf(SecretUnavailableException.class)
        .hasMessageContaining("name provider 1900000100 with different keys")
        .hasMessageNotContaining("fedcba9876543210");
  }

  @Test
  void subMchidThatIsAnotherTenantsDirectMchidIsRefused() throws Exception {
    JsonNode json =
        JSON.valueToTree(
            Map.of(
                "tenants",
                Map.of(
                    "mall-direct",
                    SecretsEmulatorTest.merchant("1900000201"),
                    "shop-a",
                    subMerchant(SecretsEmulatorTest.merchant("1900000100"), "1900000201", null))));

    assertThatThrownBy(() -> SecretsMerchantDirectory.parse(ARN, json))
        .isInstanceOf(SecretUnavailableException.class)
        .hasMessageContaining("subMchid 1900000201 of tenant shop-a")
        .hasMessageContaining("direct mchid of tenant mall-direct");
  }
}
