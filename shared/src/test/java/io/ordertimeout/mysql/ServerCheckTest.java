package io.ordertimeout.mysql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.testing.TestStack;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Which servers init accepts, on the real test server and on version strings seen in the wild. */
class ServerCheckTest {
  private final EmbeddedServers servers = EmbeddedServers.get();
  private String schema;

  @AfterEach
  void dropSchema() {
    if (schema != null) {
      servers.dropSchema(schema);
    }
  }

  /** Only the tests that talk to the server create a schema. */
  private String schema() {
    if (schema == null) {
      schema = servers.createSchema("server-check");
    }
    return schema;
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "10.11.19-MariaDB-0+deb12u1",
        "10.11.6-MariaDB-log",
        "11.4.5-MariaDB",
        "11.8.2-MariaDB-ubu2404",
        "5.5.5-10.11.19-MariaDB",
        "8.0.19",
        "8.0.40",
        "8.4.3",
        "9.1.0",
        "8.0.mysql_aurora.3.05.2"
      })
  void supportedVersionsPass(String version) {
    assertThat(ServerCheck.requireSupported(version).text()).isEqualTo(version);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "10.6.18-MariaDB",
        "10.5.27-MariaDB-log",
        "5.5.5-10.4.34-MariaDB",
        "8.0.15",
        "8.0.18",
        "5.7.44-log",
        "5.6.51",
        "not a version"
      })
  void unsupportedVersionsAreRefusedByName(String version) {
    assertThatThrownBy(() -> ServerCheck.requireSupported(version))
        .isInstanceOf(ServerCheck.UnsupportedServerException.class)
        .hasMessageContaining("'" + version + "'")
        .hasMessageContaining("MariaDB 10.11+ or MySQL 8.0.19+");
  }

  @Test
  void theTestServerIsSupportedAndNamedByItsVersion() throws SQLException {
    try (HikariDataSource pool = pool(servers.jdbcUrl(schema()));
        Connection c = pool.getConnection();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT VERSION()")) {
      rs.next();

      assertThat(ServerCheck.verify(pool)).isEqualTo(rs.getString(1));
    }
  }

  /**
   * A URL that sets the session to UTC+8 would make NOW(3) and every deadline guard 8 hours off:
   * init refuses it (the same app started without complaint before).
   */
  @Test
  void aSessionOutsideUtcIsRefusedAtInit() {
    String url =
        servers.jdbcUrl(schema()).replace("connectionTimeZone=UTC", "connectionTimeZone=%2B08:00");

    assertThatThrownBy(
            () -> TestStack.withOverrides("server-check-tz", Map.of("OTC_MYSQL_URL", url), null))
        .hasMessageContaining("time zone is '+08:00'")
        .hasMessageContaining("28800 s from UTC")
        .hasMessageContaining("connectionTimeZone=UTC");
  }

  private HikariDataSource pool(String url) {
    return Database.pool(url, servers.mysqlUser(), servers.mysqlPassword(), 2, "server-check");
  }
}
