package io.ordertimeout.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.embedded.wechat.Endpoint;
import io.ordertimeout.embedded.wechat.Fault;
import io.ordertimeout.testing.Await;
import io.ordertimeout.testing.TestStack;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The mixed workload for {@code -Dotc.soak.minutes} (30 for the full soak; not in the default
 * suite) on ONE stack and one set of workers, as long-lived Lambda environments would be, with a
 * fault every round (Redis restart keeping its data, Redis connections reset, Redis black hole,
 * MariaDB connections KILLed, WeChat errors, none). After every round every order of the round is
 * final and in its right state; at the end none is lost, the invariants hold, and live threads,
 * MariaDB connections and Redis clients are flat (the last third's highest no higher than the first
 * third's plus a small allowance), and so is the live heap after warm-up: the median of the last
 * third of the samples at most {@link #HEAP_GROWTH_ALLOWANCE_MB} above the middle third's. Heap is
 * the live bytes of a class histogram (a full GC, then a walk of the heap in the same pause), so
 * nothing the workers allocate meanwhile counts; the classes that grew most from the end of warm-up
 * to the end are printed, to name what grows.
 *
 * <p>The test keeps nothing per round (each round's outcome is checked when it drains), and the
 * WeChat simulator forgets a round's trades {@link #FORGET_AFTER_ROUNDS} rounds later: before both,
 * heap dumps of a 10-minute run grew ~40 KB a round, ~90% of it the simulator's trades (~1.5 KB
 * each) and this test's kept workloads (the rest a Process per Redis restart, see OwnRedis), which
 * is what the 30-minute run's "26-29 MB first, 33-36 MB last" was.
 *
 * <p>{@code TZ=Asia/Shanghai ./mvnw -B -ntp -o -q -pl shared -am test -Dtest=SoakTest
 * -Dotc.soak.minutes=30 -Dsurefire.failIfNoSpecifiedTests=false -Djacoco.skip=true}
 */
@EnabledIfSystemProperty(named = "otc.soak.minutes", matches = "\\d+")
@Tag("integration")
class SoakTest {
  static final int ORDERS_PER_ROUND = 40;

  /**
   * Live heap growth allowed from the middle third's median to the last third's. Measured on this
   * test with nothing left growing (an 8-minute and a 30-minute run): the two medians within 0.1
   * MB, a third's samples spread 0.7-1.0 MB (MariaDB-KILL rounds read ~0.5 MB higher while the pool
   * reconnects). A leak of 1 KB per order is ~3 MB in the ~80 rounds (~10 minutes) between the two
   * medians of a 30-minute run; 8 KB per closed order, injected, failed a 6-minute run at +3.9 MB.
   */
  static final double HEAP_GROWTH_ALLOWANCE_MB = 1.5;

  /**
   * A round's trades are forgotten by the WeChat simulator this many rounds (~40 s) later, when no
   * notification retry or close of theirs can still be in flight.
   */
  static final int FORGET_AFTER_ROUNDS = 5;

  static FaultHarness h;

  @BeforeAll
  static void start() {
    h = FaultHarness.start();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  record Sample(int round, double heapMb, int threads, long dbConnections, long redisClients) {
    @Override
    public String toString() {
      return String.format(
          Locale.ROOT,
          "(%d, %.1f, %d, %d, %d)",
          round,
          heapMb,
          threads,
          dbConnections,
          redisClients);
    }
  }

  @Test
  void mixedWorkloadWithFaultsAtIntervalsLosesNothingAndStaysFlat() throws IOException {
    long minutes = Long.getLong("otc.soak.minutes");
    long started = System.currentTimeMillis();
    long until = started + minutes * 60_000;
    List<Sample> samples = new ArrayList<>();
    List<String> lost = new ArrayList<>();
    List<String> wrong = new ArrayList<>();
    Deque<List<String>> toForget = new ArrayDeque<>();
    List<String> faultsRun = new ArrayList<>();
    // the histogram at the end of warm-up waits in a file: kept in the heap, it would be growth
    Path warmedUp = Files.createTempFile("otc-soak-histogram-", ".txt");
    boolean warm = false;
    int orders = 0;
    try (FaultProxy proxy = FaultProxy.to(URI.create(h.redis.uri()).getPort());
        TestStack stack =
            TestStack.withEnvironment(
                "soak",
                env -> {
                  env.putAll(h.overrides());
                  env.put("OTC_REDIS_URI", "redis://127.0.0.1:" + proxy.port());
                  return env;
                },
                TestStack.gatewayFor(h.wechat, Duration.ofSeconds(1)))) {
      h.current = stack;
      try (Workers workers = new Workers(stack.app(), 2, 2, 2_000)) {
        for (int round = 0; System.currentTimeMillis() < until; round++) {
          FaultWorkload work = new FaultWorkload(stack, h.wechat, round == 0);
          // the round in base 36: "<prefix>-r100-abandon_prepaid-11" is 33 characters, one over
          // the 32 of an out_trade_no (the 30-minute run failed at round 100 on it)
          work.place(
              stack.app().config().keyPrefix() + "-" + Integer.toString(round, 36),
              ORDERS_PER_ROUND,
              4);
          work.payAndCancel(round);
          faultsRun.add(injectFault(round, stack, proxy));
          drain(stack, work);
          checkFinalStates(stack, work, lost, wrong);
          orders += work.size();
          toForget.addLast(ids(work));
          if (toForget.size() > FORGET_AFTER_ROUNDS) {
            h.wechat.forget(toForget.removeFirst());
          }
          HeapHistogram live = HeapHistogram.take();
          samples.add(sample(round, stack, live));
          if (!warm && System.currentTimeMillis() - started >= (until - started) / 3) {
            live.writeTo(warmedUp); // the first third is warm-up: JIT, pools, buffers, caches
            warm = true;
          }
        }
      }
      lost.addAll(stack.dump("SELECT order_id FROM orders WHERE status = 'UNPAID'"));
      FaultWorkload.Outcome end = new FaultWorkload(stack, h.wechat, false).outcome();
      System.out.printf(
          "%nSoak: %d min, %d rounds, %d orders, %d lost, faults %s%nsamples (round, live heap MB,"
              + " threads, db conns, redis clients): %s%n%s%n",
          minutes,
          samples.size(),
          orders,
          lost.size(),
          faultsRun.stream()
              .collect(
                  Collectors.groupingBy(f -> f, java.util.TreeMap::new, Collectors.counting())),
          samples.stream().map(String::valueOf).collect(Collectors.joining(" ")),
          heapSummary(samples));
      if (warm) {
        System.out.printf(
            "live heap growth by class from the end of warm-up to the end (top 10):%n  %s%n",
            HeapHistogram.take().growthSince(HeapHistogram.read(warmedUp), 10).stream()
                .map(String::valueOf)
                .collect(Collectors.joining("\n  ")));
      }
      assertThat(lost).as("orders lost (still UNPAID)").isEmpty();
      assertThat(wrong).as("orders in the wrong final state").isEmpty();
      assertThat(end.closedEarly()).as("orders closed before their deadline").isZero();
      assertThat(end.paidAfterClose()).as("paid-after-close cases").isZero();
      assertThat(end.invariantViolations()).as("invariant violations").isEmpty();
      assertThat(samples.size()).as("rounds sampled").isGreaterThanOrEqualTo(3);
      assertFlat(samples);
    } finally {
      h.current = null;
      Files.deleteIfExists(warmedUp);
    }
  }

  /** One fault per round, in rotation; answers its name. */
  private static String injectFault(int round, TestStack stack, FaultProxy proxy) {
    // each fault starts 1 s into the round and lasts about 4 s: the 4 s deadlines fall inside
    Workers.pause(1_000);
    switch (round % 6) {
      case 0 -> {
        h.redis.shutdownSaving();
        Workers.pause(4_000);
        h.redis.startAgain();
        return "redis-restart";
      }
      case 1 -> {
        long end = System.currentTimeMillis() + 4_000;
        while (System.currentTimeMillis() < end) {
          proxy.dropAll();
          Workers.pause(200);
        }
        return "redis-reset";
      }
      case 2 -> {
        proxy.blackHole(true);
        Workers.pause(4_000);
        proxy.blackHole(false);
        return "redis-blackhole";
      }
      case 3 -> {
        h.killConnections(stack.schema(), Duration.ofSeconds(4));
        return "mariadb-kill";
      }
      case 4 -> {
        h.wechat.injectFault(Endpoint.QUERY, Fault.SYSTEM_ERROR, 6);
        h.wechat.injectFault(Endpoint.CLOSE, Fault.FREQUENCY_LIMITED, 6);
        Workers.pause(4_000);
        return "wechat-errors";
      }
      default -> {
        Workers.pause(4_000);
        return "none";
      }
    }
  }

  private static void drain(TestStack stack, FaultWorkload work) {
    Await.reached(
        Await.await("the round's orders final", Duration.ofSeconds(120))
            .pollInterval(Duration.ofMillis(500)),
        () -> {
          try {
            work.retryCancels();
            return work.unpaid() == 0;
          } catch (RuntimeException deadPooledConnection) {
            // the test's own read met a connection the last KILL round cut: look again
            return false;
          }
        });
  }

  /**
   * Every order of the round in its right final state (PAY PAID; CANCEL CLOSED USER_CANCEL; ABANDON
   * and ABANDON_PREPAID CLOSED TIMEOUT), read once the round drained: final states do not change,
   * so the run need not keep the round to read it again at the end.
   */
  private static void checkFinalStates(
      TestStack stack, FaultWorkload work, List<String> lost, List<String> wrong) {
    Map<String, String> expected = new java.util.LinkedHashMap<>();
    for (FaultWorkload.Role role : FaultWorkload.Role.values()) {
      String state =
          switch (role) {
            case PAY -> "PAID|null|";
            case CANCEL -> "CLOSED|USER_CANCEL|";
            case ABANDON, ABANDON_PREPAID -> "CLOSED|TIMEOUT|";
          };
      work.ids(role).forEach(id -> expected.put(id, state));
    }
    String in =
        expected.keySet().stream().map(id -> "'" + id + "'").collect(Collectors.joining(","));
    List<String> rows = new ArrayList<>();
    Await.reached(
        Await.await("the round's final states read", Duration.ofSeconds(30))
            .pollInterval(Duration.ofMillis(500)),
        () -> {
          try {
            rows.clear();
            rows.addAll(
                stack.dump(
                    "SELECT order_id, status, close_reason FROM orders WHERE order_id IN ("
                        + in
                        + ")"));
            return true;
          } catch (RuntimeException deadPooledConnection) {
            return false; // as in drain: a connection the last KILL round cut
          }
        });
    Map<String, String> actual = new java.util.HashMap<>();
    for (String row : rows) {
      int bar = row.indexOf('|');
      actual.put(row.substring(0, bar), row.substring(bar + 1));
    }
    expected.forEach(
        (id, state) -> {
          String is = actual.get(id);
          if (is == null || is.startsWith("UNPAID|")) {
            lost.add(id + " is " + (is == null ? "not read" : "still UNPAID"));
          } else if (!is.equals(state)) {
            wrong.add(id + " is " + is + " expected " + state);
          }
        });
  }

  private static List<String> ids(FaultWorkload work) {
    List<String> ids = new ArrayList<>();
    for (FaultWorkload.Role role : FaultWorkload.Role.values()) {
      ids.addAll(work.ids(role));
    }
    return ids;
  }

  private static Sample sample(int round, TestStack stack, HeapHistogram live) {
    double heap = live.totalBytes() / 1_048_576.0;
    int threads = ManagementFactory.getThreadMXBean().getThreadCount();
    long db =
        stack.count(
            "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = ?", stack.schema());
    long redisClients =
        stack.app().redis().sync().clientList().lines().filter(l -> !l.isBlank()).count();
    return new Sample(round, heap, threads, db, redisClients);
  }

  /**
   * Flat: the live heap's median over the last third no more than {@link #HEAP_GROWTH_ALLOWANCE_MB}
   * above the middle third's (the first third is warm-up); the last third's highest no more than
   * the first third's highest plus 8 threads (a reconnect's transient Netty or Hikari threads), 4
   * DB connections and 4 Redis clients.
   */
  static void assertFlat(List<Sample> samples) {
    int third = Math.max(1, samples.size() / 3);
    List<Sample> first = samples.subList(0, third);
    List<Sample> last = samples.subList(samples.size() - third, samples.size());
    assertThat(heapGrowthMb(samples))
        .as(
            "live heap (MB), last third's median minus the middle third's: %s",
            heapSummary(samples))
        .isLessThanOrEqualTo(HEAP_GROWTH_ALLOWANCE_MB);
    assertThat(max(last, s -> (long) s.threads()))
        .as("live threads, last third vs first")
        .isLessThanOrEqualTo(max(first, s -> (long) s.threads()) + 8);
    assertThat(max(last, Sample::dbConnections))
        .as("MariaDB connections, last third vs first")
        .isLessThanOrEqualTo(max(first, Sample::dbConnections) + 4);
    assertThat(max(last, Sample::redisClients))
        .as("Redis clients, last third vs first")
        .isLessThanOrEqualTo(max(first, Sample::redisClients) + 4);
  }

  /** The last third's median live heap minus the middle third's, in MB. */
  static double heapGrowthMb(List<Sample> samples) {
    int third = Math.max(1, samples.size() / 3);
    return median(samples.subList(samples.size() - third, samples.size()), Sample::heapMb)
        - median(samples.subList(third, samples.size() - third), Sample::heapMb);
  }

  static String heapSummary(List<Sample> samples) {
    int third = Math.max(1, samples.size() / 3);
    List<Sample> first = samples.subList(0, third);
    List<Sample> middle = samples.subList(third, samples.size() - third);
    List<Sample> last = samples.subList(samples.size() - third, samples.size());
    return String.format(
        Locale.ROOT,
        "live heap MB (min/median/max) warm-up third %s, middle third %s, last third %s; growth"
            + " %+.1f MB (allowed %.1f)",
        spread(first),
        spread(middle),
        spread(last),
        heapGrowthMb(samples),
        HEAP_GROWTH_ALLOWANCE_MB);
  }

  private static String spread(List<Sample> samples) {
    return String.format(
        Locale.ROOT,
        "%.1f/%.1f/%.1f",
        samples.stream().mapToDouble(Sample::heapMb).min().orElse(0),
        median(samples, Sample::heapMb),
        samples.stream().mapToDouble(Sample::heapMb).max().orElse(0));
  }

  private static double median(List<Sample> samples, ToDoubleFunction<Sample> f) {
    double[] v = samples.stream().mapToDouble(f).sorted().toArray();
    if (v.length == 0) {
      return 0;
    }
    return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }

  private static long max(List<Sample> samples, java.util.function.ToLongFunction<Sample> f) {
    return samples.stream().mapToLong(f).max().orElse(0);
  }
}
