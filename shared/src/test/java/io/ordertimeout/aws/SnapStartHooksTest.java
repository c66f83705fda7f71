package io.ordertimeout.aws;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.ordertimeout.config.OtcConfig;
import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.testing.MigratedSchema;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.wiring.Components;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The CRaC hooks called as the runtime calls them (a CRaC JVM is not needed for that), watched from
 * the servers' side: Redis CLIENT LIST and MariaDB's PROCESSLIST, through connections of the test's
 * own. The environment's DB user is one of its own, so its sessions are the only ones listed.
 */
class SnapStartHooksTest {
  private final EmbeddedServers servers = EmbeddedServers.get();
  private final String user = "snap_" + UUID.randomUUID().toString().substring(0, 8);
  private String schema;

  @BeforeEach
  void createUser() throws SQLException {
    schema = MigratedSchema.create(servers, "snapstart");
    for (String host : new String[] {"localhost", "%"}) {
      asRoot("CREATE USER '" + user + "'@'" + host + "' IDENTIFIED BY 'snap-pw'");
      asRoot("GRANT ALL ON `" + schema + "`.* TO '" + user + "'@'" + host + "'");
    }
  }

  @AfterEach
  void dropUser() throws SQLException {
    asRoot("DROP USER IF EXISTS '" + user + "'@'localhost', '" + user + "'@'%'");
    servers.dropSchema(schema);
  }

  @Test
  void checkpointClosesEveryDbAndRedisConnectionAndRestoreOpensNewOnesThatWork()
      throws SQLException {
    OtcConfig config =
        TestStack.testConfig(servers, schema, servers.newKeyPrefix("snapstart")).toBuilder()
            .mysqlUser(user)
            .mysqlPassword("snap-pw")
            .build();
    RedisClient observerClient = RedisClient.create(servers.redisUri());
    try (Components app = new Components(config);
        StatefulRedisConnection<String, String> observer = observerClient.connect()) {
      SnapStartHooks hooks = new SnapStartHooks(app.dataSource(), app.redis());
      app.redis().sync().set(config.keyPrefix() + ":snap", "before");
      long redisBefore = app.redis().sync().clientId();
      assertThat(observer.sync().clientList()).contains("id=" + redisBefore + " ");
      assertThat(sessionsOf(user)).as("the pool's sessions at init").isPositive();

      hooks.beforeCheckpoint(null);

      // the pool's sockets are closed when beforeCheckpoint returns; the server ends each session
      // once its thread reads the client's quit, and Redis drops the client from its list on its
      // next event-loop turn
      long until = System.nanoTime() + 2_000_000_000L;
      while (sessionsOf(user) > 0 && System.nanoTime() < until) {
        Thread.onSpinWait();
      }
      assertThat(sessionsOf(user)).as("DB sessions left for the snapshot").isZero();
      while (observer.sync().clientList().contains("id=" + redisBefore + " ")
          && System.nanoTime() < until) {
        Thread.onSpinWait();
      }
      assertThat(observer.sync().clientList())
          .as("the shared Redis connection is closed")
          .doesNotContain("id=" + redisBefore + " ");
      assertThat(app.dataSource().getHikariPoolMXBean().getTotalConnections()).isZero();

      hooks.afterRestore(null);

      assertThat(sessionsOf(user)).as("one DB connection opened at restore").isPositive();
      long redisAfter = app.redis().sync().clientId();
      assertThat(redisAfter).isNotEqualTo(redisBefore);
      assertThat(observer.sync().clientList()).contains("id=" + redisAfter + " ");
      assertThat(app.redis().sync().get(config.keyPrefix() + ":snap")).isEqualTo("before");
      try (Connection c = app.dataSource().getConnection();
          Statement s = c.createStatement()) {
        s.executeUpdate(
            "INSERT INTO stock (tenant_id, sku_id, available, total) VALUES ('default', 'sku-snap', 5, 5)");
        try (ResultSet rs =
            s.executeQuery("SELECT available FROM stock WHERE sku_id = 'sku-snap'")) {
          assertThat(rs.next()).isTrue();
          assertThat(rs.getLong(1)).isEqualTo(5);
        }
      }
    } finally {
      observerClient.shutdown();
    }
  }

  private long sessionsOf(String dbUser) throws SQLException {
    try (Connection c =
            DriverManager.getConnection(
                servers.jdbcUrl(schema), servers.mysqlUser(), servers.mysqlPassword());
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = ?")) {
      ps.setString(1, dbUser);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  private void asRoot(String sql) throws SQLException {
    try (Connection c =
            DriverManager.getConnection(
                servers.jdbcUrl(schema), servers.mysqlUser(), servers.mysqlPassword());
        Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }
}
