package io.ordertimeout.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.embedded.wechat.Endpoint;
import io.ordertimeout.redis.RedisTimeSource;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The servers themselves misbehave while the mixed workload runs: MariaDB goes read-only (as the
 * old writer does in a failover) or out of connections, Redis reaches maxmemory under noeviction,
 * the due-clock steps, and WeChat answers every call just under the gateway's timeout. Each test
 * asserts no order lost, no invariant broken (none closed early above all), and that the fault
 * really reached the code; recovery and detection go to {@link ReliabilityTable}.
 *
 * <p>The MariaDB faults change global settings of the JVM-shared server and restore them in a
 * finally block; Surefire runs classes one after another, so no other class is running then.
 *
 * <p>The default suite runs the faults without {@code @EnabledIfSystemProperty}; the others (about
 * 16 s each, more for the slow ones) run with {@code -Dotc.faults.all=true}, so the default suite
 * grows by about 2 minutes on a 2-core machine, not 6.
 */
@Tag("integration")
class ServerFaultTest {
  static final String APP_USER = "otc_app";
  static final String APP_PASSWORD = "otc-app-pw";

  static FaultHarness h;

  @BeforeAll
  static void start() {
    h = FaultHarness.start();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  private static void assertNothingLost(FaultHarness.Outcome outcome) {
    assertThat(outcome.lost()).as("orders lost (still UNPAID)").isEmpty();
    assertThat(outcome.wrongFinalStates()).as("orders in the wrong final state").isEmpty();
    assertThat(outcome.closedEarly()).as("orders closed before their deadline").isZero();
    assertThat(outcome.paidAfterClose()).as("paid-after-close cases").isZero();
    assertThat(outcome.invariantViolations()).as("invariant violations").isEmpty();
  }

  private static Connection admin() throws SQLException {
    EmbeddedServers s = EmbeddedServers.get();
    return DriverManager.getConnection(s.jdbcUrl(""), s.mysqlUser(), s.mysqlPassword());
  }

  private static void adminSql(String... statements) {
    try (Connection c = admin();
        Statement st = c.createStatement()) {
      for (String sql : statements) {
        st.execute(sql);
      }
    } catch (SQLException e) {
      throw new IllegalStateException("admin SQL failed: " + e.getMessage(), e);
    }
  }

  /**
   * The stack connects as a user without SUPER (an RDS application user): read_only does not apply
   * to SUPER, and the tests' root is one.
   */
  private static Map<String, String> asAppUser(Map<String, String> env) {
    Matcher m = Pattern.compile("//[^/]+/([A-Za-z0-9_]+)").matcher(env.get("OTC_MYSQL_URL"));
    if (!m.find()) {
      throw new IllegalStateException("no schema in " + env.get("OTC_MYSQL_URL"));
    }
    String schema = m.group(1);
    List<String> grants = new ArrayList<>();
    for (String host : List.of("localhost", "127.0.0.1", "%")) {
      String user = "'" + APP_USER + "'@'" + host + "'";
      grants.add("CREATE USER IF NOT EXISTS " + user + " IDENTIFIED BY '" + APP_PASSWORD + "'");
      grants.add("GRANT ALL ON `" + schema + "`.* TO " + user);
    }
    adminSql(grants.toArray(String[]::new));
    env.put("OTC_MYSQL_USER", APP_USER);
    env.put("OTC_MYSQL_PASSWORD", APP_PASSWORD);
    return env;
  }

  @Test
  void mariaDbReadOnlyForFiveSecondsAsInAWriterFailoverLosesNoOrder() {
    assumeFalse(EmbeddedServers.get().externalMysql(), "sets a global on the embedded server");
    AtomicLong refused = new AtomicLong();
    try {
      FaultHarness.Outcome outcome =
          h.run(
              "MariaDB read_only, 5 s",
              false,
              ServerFaultTest::asAppUser,
              ctx -> {},
              (ctx, probe) -> {
                long before = probe.canaryFailures();
                probe.faultStarts();
                adminSql("SET GLOBAL read_only = 1");
                // the failover window, not a wait for an outcome
                Workers.pause(5_000);
                adminSql("SET GLOBAL read_only = 0");
                probe.faultEnds();
                refused.set(probe.canaryFailures() - before);
              },
              FaultHarness.RECOVERY_GOAL_SECONDS,
              "app user without SUPER; same server writable again after 5 s");
      assertThat(refused.get()).as("placements refused while read-only").isPositive();
      assertNothingLost(outcome);
    } finally {
      adminSql("SET GLOBAL read_only = 0");
    }
  }

  @Test
  @EnabledIfSystemProperty(named = "otc.faults.all", matches = "true")
  void mariaDbOutOfConnectionsForFiveSecondsLosesNoOrder() throws SQLException {
    assumeFalse(EmbeddedServers.get().externalMysql(), "sets a global on the embedded server");
    List<Connection> hogs = new ArrayList<>();
    AtomicLong refusedHogs = new AtomicLong();
    AtomicLong killed = new AtomicLong();
    long maxBefore;
    try (Connection c = admin();
        Statement st = c.createStatement();
        var rs = st.executeQuery("SELECT @@GLOBAL.max_connections")) {
      rs.next();
      maxBefore = rs.getLong(1);
    }
    try {
      FaultHarness.Outcome outcome =
          h.run(
              "MariaDB out of connections, 5 s",
              false,
              env -> env,
              ctx -> {},
              (ctx, probe) -> {
                probe.faultStarts();
                try (Connection a = admin();
                    Statement st = a.createStatement()) {
                  // another client takes every connection left, then the app's are cut
                  st.execute("SET GLOBAL max_connections = 40");
                  while (true) {
                    try {
                      hogs.add(admin());
                    } catch (SQLException tooMany) {
                      refusedHogs.incrementAndGet();
                      break;
                    }
                  }
                  // the held admin connection cuts the app's: a new one could not get in now
                  for (long id : h.connectionIds(a, ctx.schema())) {
                    try {
                      st.execute("KILL " + id);
                      killed.incrementAndGet();
                    } catch (SQLException gone) {
                      // it ended on its own meanwhile
                    }
                  }
                }
                // the outage window, not a wait for an outcome
                Workers.pause(5_000);
                closeAll(hogs);
                adminSql("SET GLOBAL max_connections = " + maxBefore);
                probe.faultEnds();
              },
              FaultHarness.RECOVERY_GOAL_SECONDS,
              "other clients hold every connection; the app's are KILLed");
      assertThat(refusedHogs.get()).as("the server refused a connection: it was full").isOne();
      assertThat(killed.get()).as("the app's connections cut").isPositive();
      assertNothingLost(outcome);
    } finally {
      closeAll(hogs);
      adminSql("SET GLOBAL max_connections = " + maxBefore);
    }
  }

  private static void closeAll(List<Connection> connections) {
    for (Connection c : connections) {
      try {
        c.close();
      } catch (SQLException ignored) {
        // gone already
      }
    }
    connections.clear();
  }

  @Test
  void redisAtMaxmemoryWithNoevictionForFiveSecondsLosesNoOrder() {
    RedisClient client = RedisClient.create(RedisURI.create(h.redis.uri()));
    try (StatefulRedisConnection<String, String> admin = client.connect()) {
      var redis = admin.sync();
      AtomicLong refusedWrites = new AtomicLong();
      try {
        FaultHarness.Outcome outcome =
            h.run(
                "Redis maxmemory, noeviction, 5 s",
                false,
                env -> env,
                ctx -> {},
                (ctx, probe) -> {
                  probe.faultStarts();
                  redis.configSet("maxmemory-policy", "noeviction");
                  // 1 byte: any write that needs memory is refused with OOM, reads still work
                  redis.configSet("maxmemory", "1");
                  try {
                    redis.set("otc-fault-probe", "x");
                  } catch (RuntimeException oom) {
                    refusedWrites.incrementAndGet();
                  }
                  // the fault window, not a wait for an outcome
                  Workers.pause(5_000);
                  redis.configSet("maxmemory", "0");
                  probe.faultEnds();
                },
                FaultHarness.RECOVERY_GOAL_SECONDS,
                "writes answered OOM, reads and deletes served");
        assertThat(refusedWrites.get()).as("a write refused with OOM").isOne();
        assertNothingLost(outcome);
      } finally {
        redis.configSet("maxmemory", "0");
      }
    } finally {
      client.shutdown(Duration.ZERO, Duration.ofSeconds(1));
    }
  }

  /**
   * Redis TIME cannot be stepped on a real server (the database side: DbClockStepTest), so the step
   * is injected where the code reads its due-clock: the stack's TimeSource (Redis TIME,
   * docs/concepts/design.md section 7) jumps 10 s ahead for 5 s, then back. The closing UPDATE's
   * {@code expire_at <= NOW(3)} must refuse every early close; timers claimed or rescheduled in the
   * jumped clock come back 10 s late, so the step's size bounds the recovery, plus the claim lease
   * a close may take once its timer is due again (the bound was 10 s until a run measured 10.8 s).
   */
  @Test
  @EnabledIfSystemProperty(named = "otc.faults.all", matches = "true")
  void dueClockSteppedTenSecondsAheadClosesNoOrderEarly() {
    RedisClient client = RedisClient.create(RedisURI.create(h.redis.uri()));
    AtomicLong offset = new AtomicLong();
    try (StatefulRedisConnection<String, String> clock = client.connect()) {
      RedisTimeSource redisTime = new RedisTimeSource(clock.sync());
      FaultHarness.Outcome outcome =
          h.run(
              "due-clock (Redis TIME side) +10 s step, 5 s",
              false,
              env -> env,
              () -> redisTime.nowMillis() + offset.get(),
              ctx -> {},
              (ctx, probe) -> {
                probe.faultStarts();
                offset.set(10_000);
                // the stepped window, not a wait for an outcome
                Workers.pause(5_000);
                offset.set(0);
                probe.faultEnds();
              },
              10 + FaultHarness.CLAIM_LEASE_MS / 1000.0,
              "bound: the step's 10 s (timers claimed or rescheduled in the stepped clock come"
                  + " back 10 s late) + the 1 s claim lease the close itself may take");
      assertNothingLost(outcome);
    } finally {
      client.shutdown(Duration.ZERO, Duration.ofSeconds(1));
    }
  }

  /** {@code -Dotc.faults.wechatSlowSeconds} (default 20; the soak uses minutes). */
  static final long WECHAT_SLOW_SECONDS = Long.getLong("otc.faults.wechatSlowSeconds", 20);

  @Test
  @EnabledIfSystemProperty(named = "otc.faults.all", matches = "true")
  void weChatAnsweringEveryCallJustUnderItsTimeoutLosesNoOrder() {
    try {
      FaultHarness.Outcome outcome =
          h.run(
              "WeChat 900 ms per call (timeout 1 s), " + WECHAT_SLOW_SECONDS + " s",
              false,
              env -> env,
              ctx -> {},
              (ctx, probe) -> {
                probe.faultStarts();
                h.wechat.setLatency(Endpoint.QUERY, Duration.ofMillis(900));
                h.wechat.setLatency(Endpoint.CLOSE, Duration.ofMillis(900));
                // the slow window, not a wait for an outcome
                Workers.pause(WECHAT_SLOW_SECONDS * 1_000);
                h.wechat.setLatency(Endpoint.QUERY, Duration.ZERO);
                h.wechat.setLatency(Endpoint.CLOSE, Duration.ZERO);
                probe.faultEnds();
              },
              FaultHarness.RECOVERY_GOAL_SECONDS,
              "query + close of a prepaid order take ~1.8 s");
      assertThat(h.wechat.callCount(Endpoint.QUERY)).as("WeChat queried").isPositive();
      assertNothingLost(outcome);
    } finally {
      h.wechat.setLatency(Endpoint.QUERY, Duration.ZERO);
      h.wechat.setLatency(Endpoint.CLOSE, Duration.ZERO);
    }
  }
}
