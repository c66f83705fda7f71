package io.ordertimeout.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Isolated;

// alone in its JVM while it runs (the fast tier runs classes in parallel): it restarts the JVM's
// MariaDB
@Isolated
@ExtendWith(EmbeddedServersExtension.class)
class EmbeddedServersTest {

  private final EmbeddedServers servers;

  EmbeddedServersTest(EmbeddedServers servers) {
    this.servers = servers;
  }

  @Test
  void resolvesTheOneInstancePerJvm(EmbeddedServers parameter) {
    assertThat(parameter).isSameAs(servers).isSameAs(EmbeddedServers.get());
  }

  @Test
  void redisAnswersPingAndTime() {
    assertThat(servers.redisUri()).matches("redis://127\\.0\\.0\\.1:\\d+");
    RedisClient client = RedisClient.create(servers.redisUri());
    try (StatefulRedisConnection<String, String> connection = client.connect()) {
      RedisCommands<String, String> redis = connection.sync();
      assertThat(redis.ping()).isEqualTo("PONG");
      List<String> time = redis.time();
      Instant serverNow = Instant.ofEpochSecond(Long.parseLong(time.get(0)));
      assertThat(Duration.between(serverNow, Instant.now()).abs())
          .isLessThan(Duration.ofSeconds(5));
    } finally {
      client.shutdown();
    }
  }

  @Test
  void createdSchemaIsUsableAndUtc() throws SQLException {
    String schema = servers.createSchema("Servers Test!");
    assertThat(schema).matches("otc_servers_test_[0-9a-f]{8}");
    try (Connection connection = connect(schema);
        Statement statement = connection.createStatement()) {
      statement.execute("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(10))");
      statement.executeUpdate("INSERT INTO t VALUES (1, 'a'), (2, 'b')");
      assertThat(queryLong(statement, "SELECT SUM(id) FROM t")).isEqualTo(3);
      assertThat(queryString(statement, "SELECT @@session.time_zone")).isIn("UTC", "+00:00");
      assertThat(queryString(statement, "SELECT @@character_set_database")).isEqualTo("utf8mb4");
      assertThat(queryString(statement, "SELECT @@collation_database")).isEqualTo("utf8mb4_bin");
    } finally {
      servers.dropSchema(schema);
    }
    assertThat(schemaExists(schema)).isFalse();
  }

  @Test
  void schemasAndKeyPrefixesAreFresh() {
    assertThat(servers.newKeyPrefix("a"))
        .matches("t[0-9a-f]{8}")
        .isNotEqualTo(servers.newKeyPrefix("a"));
    String first = servers.createSchema("fresh");
    String second = servers.createSchema("fresh");
    try {
      assertThat(first).isNotEqualTo(second);
      assertThat(schemaExists(first)).isTrue();
    } finally {
      servers.dropSchema(first);
      servers.dropSchema(second);
    }
  }

  @Test
  void stoppingRedisLosesItsData() {
    assumeFalse(servers.external(), "needs the embedded Redis");
    String key = servers.newKeyPrefix("restart") + ":k";
    RedisClient client = RedisClient.create(servers.redisUri());
    try {
      try (StatefulRedisConnection<String, String> connection = client.connect()) {
        connection.sync().set(key, "v");
        assertThat(connection.sync().get(key)).isEqualTo("v");
      }
      servers.stopRedis();
      servers.startRedis();
      try (StatefulRedisConnection<String, String> connection = client.connect()) {
        assertThat(connection.sync().get(key)).isNull();
        assertThat(connection.sync().dbsize()).isZero();
      }
    } finally {
      client.shutdown();
    }
  }

  @Test
  void restartingMariaDbKeepsCommittedData() throws SQLException {
    assumeFalse(servers.external(), "needs the embedded MariaDB");
    String schema = servers.createSchema("restart");
    try {
      try (Connection connection = connect(schema);
          Statement statement = connection.createStatement()) {
        statement.execute("CREATE TABLE t (id INT PRIMARY KEY)");
        statement.executeUpdate("INSERT INTO t VALUES (7)");
      }
      servers.restartMariaDb();
      try (Connection connection = connect(schema);
          Statement statement = connection.createStatement()) {
        assertThat(queryLong(statement, "SELECT id FROM t")).isEqualTo(7);
      }
    } finally {
      servers.dropSchema(schema);
    }
  }

  private Connection connect(String schema) throws SQLException {
    return DriverManager.getConnection(
        servers.jdbcUrl(schema), servers.mysqlUser(), servers.mysqlPassword());
  }

  private boolean schemaExists(String schema) {
    try (Connection connection = connect("information_schema");
        Statement statement = connection.createStatement()) {
      return queryLong(
              statement, "SELECT COUNT(*) FROM SCHEMATA WHERE SCHEMA_NAME = '" + schema + "'")
          == 1;
    } catch (SQLException e) {
      throw new IllegalStateException("could not look up schema " + schema, e);
    }
  }

  static long queryLong(Statement statement, String sql) throws SQLException {
    try (ResultSet rows = statement.executeQuery(sql)) {
      rows.next();
      return rows.getLong(1);
    }
  }

  static String queryString(Statement statement, String sql) throws SQLException {
    try (ResultSet rows = statement.executeQuery(sql)) {
      rows.next();
      return rows.getString(1);
    }
  }
}
