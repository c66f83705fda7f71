package io.ordertimeout.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.embedded.EmbeddedServers;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The network between the functions and Redis, and between them and MariaDB, misbehaves while the
 * mixed workload runs: latency, connections reset, a black hole (partition). A {@link FaultProxy}
 * per test sits in front of the tests' own Redis or the shared MariaDB; the stack's OTC_REDIS_URI
 * or OTC_MYSQL_URL points at it. Each test asserts no order lost, no invariant broken, and that the
 * fault really reached the code; recovery and detection go to {@link ReliabilityTable}.
 *
 * <p>The default suite runs the faults without {@code @EnabledIfSystemProperty}; the others (about
 * 16 s each, more for the slow ones) run with {@code -Dotc.faults.all=true}, so the default suite
 * grows by about 2 minutes on a 2-core machine, not 6.
 */
@Tag("integration")
class NetworkFaultTest {
  /** 200 ms per hop each way: a cross-AZ hop is ~1 ms, so this is a badly degraded network. */
  static final Duration LATENCY = Duration.ofMillis(200);

  static FaultHarness h;

  @BeforeAll
  static void start() {
    h = FaultHarness.start();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  private static int redisPort() {
    return URI.create(h.redis.uri()).getPort();
  }

  static int mariaDbPort() {
    Matcher m = Pattern.compile("//[^/:]+:(\\d+)/").matcher(EmbeddedServers.get().jdbcUrl(""));
    if (!m.find()) {
      throw new IllegalStateException("no port in " + EmbeddedServers.get().jdbcUrl(""));
    }
    return Integer.parseInt(m.group(1));
  }

  private static UnaryOperator<Map<String, String>> redisThrough(FaultProxy proxy) {
    return env -> {
      env.put("OTC_REDIS_URI", "redis://127.0.0.1:" + proxy.port());
      return env;
    };
  }

  static UnaryOperator<Map<String, String>> mariaDbThrough(FaultProxy proxy) {
    return env -> {
      String url = env.get("OTC_MYSQL_URL");
      String through = url.replaceFirst(":" + mariaDbPort() + "/", ":" + proxy.port() + "/");
      if (through.equals(url)) {
        throw new IllegalStateException("cannot route " + url + " through the proxy");
      }
      env.put("OTC_MYSQL_URL", through);
      return env;
    };
  }

  private static void assertNothingLost(FaultHarness.Outcome outcome) {
    assertThat(outcome.lost()).as("orders lost (still UNPAID)").isEmpty();
    assertThat(outcome.wrongFinalStates()).as("orders in the wrong final state").isEmpty();
    assertThat(outcome.closedEarly()).as("orders closed before their deadline").isZero();
    assertThat(outcome.paidAfterClose()).as("paid-after-close cases").isZero();
    assertThat(outcome.invariantViolations()).as("invariant violations").isEmpty();
  }

  @Test
  @EnabledIfSystemProperty(named = "otc.faults.all", matches = "true")
  void redisLatencyOf200MsEachWayForSixSecondsLosesNoOrder() {
    try (FaultProxy proxy = FaultProxy.to(redisPort())) {
      FaultHarness.Outcome outcome =
          h.run(
              "Redis +200 ms each way, 6 s",
              false,
              redisThrough(proxy),
              ctx -> {},
              (ctx, probe) -> {
                probe.faultStarts();
                proxy.latency(LATENCY);
                // the fault window, not a wait for an outcome
                Workers.pause(6_000);
                proxy.latency(Duration.ZERO);
                probe.faultEnds();
              },
              10,
              "proxy in front of Redis; bound: the 10 s shard lease of a sweep invocation that"
                  + " failed on Redis and whose lease release the fault also lost (ShardLeaseSet),"
                  + " 0.2-0.3 s when the releases get through");
      assertNothingLost(outcome);
    }
  }

  @Test
  @EnabledIfSystemProperty(named = "otc.faults.all", matches = "true")
  void redisConnectionsResetEvery200MsForFourSecondsLoseNoOrder() {
    AtomicInteger resets = new AtomicInteger();
    try (FaultProxy proxy = FaultProxy.to(redisPort())) {
      FaultHarness.Outcome outcome =
          h.run(
              "Redis connections reset, 4 s",
              false,
              redisThrough(proxy),
              ctx -> {},
              (ctx, probe) -> {
                probe.faultStarts();
                long until = System.currentTimeMillis() + 4_000;
                while (System.currentTimeMillis() < until) {
                  resets.addAndGet(proxy.dropAll());
                  // pacing the fault: a reset round every 200 ms
                  Workers.pause(200);
                }
                probe.faultEnds();
              },
              10,
              "proxy in front of Redis; bound: the 10 s shard lease of a sweep invocation that"
                  + " failed on Redis and whose lease release the fault also lost (ShardLeaseSet),"
                  + " 0.2-0.3 s when the releases get through");
      assertThat(resets.get()).as("Redis connections reset").isPositive();
      assertThat(proxy.connections()).as("reconnects through the proxy").isGreaterThan(1);
      assertNothingLost(outcome);
    }
  }

  @Test
  void redisBlackHoleForSixSecondsLosesNoOrder() {
    try (FaultProxy proxy = FaultProxy.to(redisPort())) {
      FaultHarness.Outcome outcome =
          h.run(
              "Redis black hole, 6 s",
              false,
              redisThrough(proxy),
              ctx -> {},
              (ctx, probe) -> {
                probe.faultStarts();
                proxy.blackHole(true);
                // the partition itself, not a wait
                Workers.pause(6_000);
                proxy.blackHole(false);
                probe.faultEnds();
              },
              FaultHarness.RECOVERY_GOAL_SECONDS,
              "proxy in front of Redis; bytes held, not lost");
      assertNothingLost(outcome);
    }
  }

  @Test
  @EnabledIfSystemProperty(named = "otc.faults.all", matches = "true")
  void mariaDbLatencyOf200MsEachWayForSixSecondsLosesNoOrder() {
    try (FaultProxy proxy = FaultProxy.to(mariaDbPort())) {
      FaultHarness.Outcome outcome =
          h.run(
              "MariaDB +200 ms each way, 6 s",
              false,
              mariaDbThrough(proxy),
              ctx -> {},
              (ctx, probe) -> {
                probe.faultStarts();
                proxy.latency(LATENCY);
                // the fault window, not a wait for an outcome
                Workers.pause(6_000);
                proxy.latency(Duration.ZERO);
                probe.faultEnds();
              },
              FaultHarness.RECOVERY_GOAL_SECONDS,
              "proxy in front of MariaDB");
      assertNothingLost(outcome);
    }
  }

  @Test
  @EnabledIfSystemProperty(named = "otc.faults.all", matches = "true")
  void mariaDbConnectionsResetEvery200MsForFourSecondsLoseNoOrder() {
    AtomicInteger resets = new AtomicInteger();
    try (FaultProxy proxy = FaultProxy.to(mariaDbPort())) {
      FaultHarness.Outcome outcome =
          h.run(
              "MariaDB connections reset, 4 s",
              false,
              mariaDbThrough(proxy),
              ctx -> {},
              (ctx, probe) -> {
                probe.faultStarts();
                long until = System.currentTimeMillis() + 4_000;
                while (System.currentTimeMillis() < until) {
                  resets.addAndGet(proxy.dropAll());
                  // pacing the fault: a reset round every 200 ms
                  Workers.pause(200);
                }
                probe.faultEnds();
              },
              FaultHarness.RECOVERY_GOAL_SECONDS,
              "proxy in front of MariaDB");
      assertThat(resets.get()).as("MariaDB connections reset").isPositive();
      assertThat(proxy.connections()).as("reconnects through the proxy").isGreaterThan(8);
      assertNothingLost(outcome);
    }
  }

  @Test
  void mariaDbBlackHoleForSixSecondsLosesNoOrder() {
    try (FaultProxy proxy = FaultProxy.to(mariaDbPort())) {
      FaultHarness.Outcome outcome =
          h.run(
              "MariaDB black hole, 6 s",
              false,
              mariaDbThrough(proxy),
              ctx -> {},
              (ctx, probe) -> {
                probe.faultStarts();
                proxy.blackHole(true);
                // the partition itself, not a wait
                Workers.pause(6_000);
                proxy.blackHole(false);
                probe.faultEnds();
              },
              FaultHarness.RECOVERY_GOAL_SECONDS,
              "proxy in front of MariaDB; bytes held, not lost");
      assertNothingLost(outcome);
    }
  }
}
