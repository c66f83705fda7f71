package io.ordertimeout.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** External-server mode: nothing is started, URLs come from the environment, fault hooks refuse. */
class ExternalServersTest {

  private static final Map<String, String> ENV =
      Map.of(
          "OTC_REDIS_URI", "redis://10.0.0.5:6380",
          "OTC_MYSQL_URL", "jdbc:mysql://10.0.0.6:3306/",
          "OTC_MYSQL_USER", "otc",
          "OTC_MYSQL_PASSWORD", "secret");

  private final EmbeddedServers servers =
      new EmbeddedServers(EmbeddedConfig.fromEnvironment(ENV), Path.of("/nonexistent-never-used"));

  @Test
  void usesTheConfiguredServers() {
    assertThat(servers.external()).isTrue();
    assertThat(servers.redisUri()).isEqualTo("redis://10.0.0.5:6380");
    assertThat(servers.jdbcUrl("otc_x_0123abcd"))
        .isEqualTo("jdbc:mysql://10.0.0.6:3306/otc_x_0123abcd?" + EmbeddedServers.JDBC_PARAMETERS);
    assertThat(servers.mysqlUser()).isEqualTo("otc");
    assertThat(servers.mysqlPassword()).isEqualTo("secret");
  }

  @Test
  void faultHooksRefuseExternalServers() {
    assertThatThrownBy(servers::stopRedis)
        .isInstanceOf(UnsupportedOperationException.class)
        .hasMessageContaining("OTC_REDIS_URI");
    assertThatThrownBy(servers::startRedis).isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(servers::restartMariaDb)
        .isInstanceOf(UnsupportedOperationException.class)
        .hasMessageContaining("OTC_MYSQL_URL");
  }

  @Test
  void jdbcUrlKeepsParametersAndHandlesMissingSlash() {
    assertThat(JdbcUrls.forSchema("jdbc:mysql://h:3306", "s", "a=1"))
        .isEqualTo("jdbc:mysql://h:3306/s?a=1");
    assertThat(JdbcUrls.forSchema("jdbc:mysql://h:3306/old?sslMode=REQUIRED", "s", "a=1"))
        .isEqualTo("jdbc:mysql://h:3306/s?sslMode=REQUIRED&a=1");
  }

  @Test
  void rejectsContradictoryOrMalformedEnvironment() {
    assertThatThrownBy(() -> EmbeddedConfig.fromEnvironment(Map.of("OTC_MYSQL_USER", "otc")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("OTC_MYSQL_URL is not");
    assertThatThrownBy(
            () -> EmbeddedConfig.fromEnvironment(Map.of("OTC_REDIS_URI", "10.0.0.5:6379")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("10.0.0.5:6379");
    assertThatThrownBy(
            () -> EmbeddedConfig.fromEnvironment(Map.of("OTC_MYSQL_URL", "jdbc:postgresql://h/")))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void schemaHintsAreSanitisedAndBounded() {
    assertThat(EmbeddedServers.sanitize("Close Path / Hot-SKU!")).isEqualTo("close_path_hot_sku");
    assertThat(EmbeddedServers.sanitize("")).isEqualTo("schema");
    assertThat(EmbeddedServers.sanitize("x".repeat(100))).hasSize(40);
  }
}
