package io.ordertimeout.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class TenantSettingsTest {
  static final TenantSettings MAPPING =
      TenantSettings.parse(
          "{\"arn:aws:iam::123456789012:role/mall-a\":[\"shop-a\"],"
              + "\"arn:aws:iam::123456789012:role/teams/mall-b\":[\"shop-b\"],"
              + "\"arn:aws:iam::123456789012:user/ci\":[\"shop-a\",\"shop-c\"],"
              + "\"arn:aws:sts::123456789012:assumed-role/mall-a/batch\":[\"shop-z\"],"
              + "\"arn:aws-cn:iam::123456789012:role/platform\":[\"*\"]}");

  @Test
  void aRoleEntryMatchesItsSessionsByPartitionAccountAndRoleName() {
    assertThat(MAPPING.tenantsOf("arn:aws:sts::123456789012:assumed-role/mall-a/any"))
        .containsExactly("shop-a");
    // a role with a path: the session ARN carries none, the name decides
    assertThat(MAPPING.tenantsOf("arn:aws:sts::123456789012:assumed-role/mall-b/s"))
        .containsExactly("shop-b");
    // a session entry of its own adds to the role's
    assertThat(MAPPING.tenantsOf("arn:aws:sts::123456789012:assumed-role/mall-a/batch"))
        .containsExactlyInAnyOrder("shop-a", "shop-z");
    assertThat(MAPPING.tenantsOf("arn:aws-cn:sts::123456789012:assumed-role/platform/x"))
        .containsExactly("*");
  }

  @Test
  void nothingElseMatches() {
    // another account, another partition, a role whose name only starts alike, the role ARN's
    // user namesake
    assertThat(MAPPING.tenantsOf("arn:aws:sts::999999999999:assumed-role/mall-a/s")).isEmpty();
    assertThat(MAPPING.tenantsOf("arn:aws:sts::123456789012:assumed-role/platform/x")).isEmpty();
    assertThat(MAPPING.tenantsOf("arn:aws:sts::123456789012:assumed-role/mall-ab/s")).isEmpty();
    assertThat(MAPPING.tenantsOf("arn:aws:iam::123456789012:user/mall-a")).isEmpty();
    assertThat(MAPPING.tenantsOf(null)).isEmpty();
    assertThat(MAPPING.tenantsOf("arn:aws:iam::123456789012:user/ci"))
        .containsExactlyInAnyOrder("shop-a", "shop-c");
  }

  @Test
  void unsetEveryCallerActsForTheDefaultTenantOnly() {
    TenantSettings unset = OtcConfig.fromEnvironment(env(Map.of())).tenants();

    assertThat(unset.isSet()).isFalse();
    assertThat(unset.tenantsOf("arn:aws:iam::123456789012:user/anyone")).containsExactly("default");
    assertThat(unset.tenantsOf(null)).containsExactly("default");
    assertThat(OtcConfig.fromEnvironment(env(Map.of("OTC_TENANT_PRINCIPALS", " "))).tenants())
        .isEqualTo(TenantSettings.UNSET);
  }

  @Test
  void theEnvironmentVariableIsReadAndValidatedAtInit() {
    OtcConfig config =
        OtcConfig.fromEnvironment(
            env(Map.of("OTC_TENANT_PRINCIPALS", "{\"arn:aws:iam::123456789012:role/r\":[\"t\"]}")));
    assertThat(config.tenants().tenantsOf("arn:aws:sts::123456789012:assumed-role/r/s"))
        .containsExactly("t");
    assertThat(config.toString())
        .contains("tenantPrincipals={arn:aws:iam::123456789012:role/r=[t]}");

    assertThatThrownBy(() -> OtcConfig.fromEnvironment(env(Map.of("OTC_TENANT_PRINCIPALS", "["))))
        .hasMessageContaining("OTC_TENANT_PRINCIPALS is not valid JSON");
  }

  @Test
  void badMappingsFailWithTheOffendingEntryNamed() {
    assertThatThrownBy(() -> TenantSettings.parse("{}"))
        .hasMessageContaining("OTC_TENANT_PRINCIPALS must be a non-empty JSON object");
    assertThatThrownBy(() -> TenantSettings.parse("[\"x\"]"))
        .hasMessageContaining("must be a non-empty JSON object");
    assertThatThrownBy(() -> TenantSettings.parse("{\"mall-a\":[\"shop-a\"]}"))
        .hasMessageContaining("key 'mall-a' is not an IAM role, user or assumed-role ARN");
    assertThatThrownBy(() -> TenantSettings.parse("{\"arn:aws:iam::12345:role/r\":[\"t\"]}"))
        .hasMessageContaining("key 'arn:aws:iam::12345:role/r'");
    assertThatThrownBy(() -> TenantSettings.parse("{\"arn:aws:iam::123456789012:role/r\":[]}"))
        .hasMessageContaining(
            "'arn:aws:iam::123456789012:role/r' must map to a non-empty array of tenant ids");
    assertThatThrownBy(() -> TenantSettings.parse("{\"arn:aws:iam::123456789012:role/r\":\"t\"}"))
        .hasMessageContaining("must map to a non-empty array");
    assertThatThrownBy(
            () -> TenantSettings.parse("{\"arn:aws:iam::123456789012:role/r\":[\"a b\"]}"))
        .hasMessageContaining("'arn:aws:iam::123456789012:role/r' lists \"a b\"");
  }

  private static Map<String, String> env(Map<String, String> extra) {
    Map<String, String> env = new java.util.HashMap<>(extra);
    env.put("OTC_MYSQL_URL", "jdbc:mysql://localhost/otc");
    env.put("OTC_REDIS_URI", "redis://localhost");
    return env;
  }
}
