package io.ordertimeout.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.ordertimeout.aws.DbCredentials;
import io.ordertimeout.aws.Secrets;
import io.ordertimeout.aws.SnapStartHooks;
import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.mysql.Database;
import io.ordertimeout.mysql.DbLogin;
import io.ordertimeout.mysql.LoginSource;
import io.ordertimeout.redis.RedisConnector;
import io.ordertimeout.testing.Await;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;

/**
 * SnapStart's afterRestore while every endpoint it touches hangs: Secrets Manager accepts the
 * connection and never answers, MariaDB and Redis sit behind a black hole. Lambda kills a restore
 * whose hooks take over 10 s; the hook must return within its own budget (2 s) and leave the
 * clients to connect on first use, which works once the endpoints answer again.
 *
 * <p>Before the bound, the three steps ran in a row, each with its own timeouts: the hook took 21 s
 * here (the secret read through the SDK's retries, then Hikari's 5 s, then Redis).
 */
@Tag("integration")
class SnapStartRestoreBoundTest {
  private static final String SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:db";

  @Test
  void restoreReturnsWithinItsBudgetWhenSecretsDbAndRedisHangAndTheClientsConnectOnFirstUse()
      throws Exception {
    EmbeddedServers servers = EmbeddedServers.get();
    String schema = servers.createSchema("snaprestore");
    try (ServerSocket hangingSecrets = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Secrets secrets =
            Secrets.create(
                "us-east-1",
                URI.create("http://127.0.0.1:" + hangingSecrets.getLocalPort()),
                StaticCredentialsProvider.create(
                    AwsBasicCredentials.create("AKIDEXAMPLE", "not-a-secret")));
        FaultProxy db = FaultProxy.to(NetworkFaultTest.mariaDbPort());
        FaultProxy redisProxy = FaultProxy.to(URI.create(servers.redisUri()).getPort())) {
      LoginSource logins =
          () -> {
            DbCredentials c = DbCredentials.parse(SECRET, secrets.freshJson(SECRET));
            return new DbLogin(c.username(), c.password());
          };
      String url =
          servers
              .jdbcUrl(schema)
              .replace(":" + NetworkFaultTest.mariaDbPort() + "/", ":" + db.port() + "/");
      try (HikariDataSource pool =
              Database.pool(
                  url,
                  new DbLogin(servers.mysqlUser(), servers.mysqlPassword()),
                  logins,
                  2,
                  "snap-restore",
                  10,
                  true);
          RedisConnector redis =
              RedisConnector.connect("redis://127.0.0.1:" + redisProxy.port(), false)) {
        SnapStartHooks hooks = new SnapStartHooks(pool, redis, () -> {}, Duration.ofSeconds(2));
        hooks.beforeCheckpoint(null);
        db.blackHole(true);
        redisProxy.blackHole(true);

        long started = System.nanoTime();
        hooks.afterRestore(null);
        long tookMs = (System.nanoTime() - started) / 1_000_000;

        System.out.println("afterRestore with every endpoint hanging took " + tookMs + " ms");
        // 2 s budget; 4 s leaves a loaded 2-core machine its margin and is far under Lambda's 10 s
        assertThat(tookMs).as("afterRestore ms").isLessThan(4_000);

        db.blackHole(false);
        redisProxy.blackHole(false);
        try (Connection c = pool.getConnection();
            Statement s = c.createStatement();
            ResultSet rs = s.executeQuery("SELECT 1")) {
          assertThat(rs.next()).isTrue();
        }
        Await.until(
            "Redis answers on the connector's own reconnect",
            Duration.ofSeconds(20),
            () -> {
              try {
                return "PONG".equals(redis.sync().ping());
              } catch (RuntimeException notYet) {
                return false;
              }
            });
      }
    } finally {
      servers.dropSchema(schema);
    }
  }
}
