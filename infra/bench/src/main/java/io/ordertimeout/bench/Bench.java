package io.ordertimeout.bench;

import io.ordertimeout.config.SweepSettings;
import io.ordertimeout.embedded.EmbeddedServers;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The scenario bench: every selected scenario against every selected system, one after the other in
 * this JVM on the same Redis and MariaDB, each on a fresh schema and key prefix. Prints the table
 * and writes report.md and lag.svg under the results directory. Figures are printed, never
 * asserted; only correctness decides the exit code.
 *
 * <p>Run: {@code ./mvnw -q -pl infra/bench -am verify -DskipTests -Pbench -Dbench.args="--scale 0.1
 * --scenario S1,S2,S3 --system otc,redisson,zset-100ms,cron-1s,cron-30s,raw-sql"}. Other options:
 * --orders N (every scenario), --time-scale F (S1 spread, S3 backlog age and cron periods),
 * --batch, --parallelism (0: as OrderTimeout wires it), --pool, --shards, --raw-threads,
 * --raw-batch, --max-drain-seconds, --out DIR (default bench-results).
 */
public final class Bench {
  private Bench() {}

  public static void main(String[] args) throws Exception {
    List<CellResult> results = run(BenchSettings.parse(args), true);
    System.exit(results.stream().allMatch(Bench::correct) ? 0 : 1);
  }

  static boolean correct(CellResult r) {
    return r.invariantsOk() && r.unpaidLeft() == 0 && r.drained();
  }

  /**
   * Before the measured cells, every selected system closes a shorter S1 (the warm-up orders, at
   * S1's rate): the JIT compiles what the systems share (the JDBC driver, Lettuce, Netty, the
   * closer) before any of them is measured, so the table compares warm systems rather than charging
   * the JVM's warm-up to whichever runs first. Warm-up cells are checked like measured ones; one
   * that fails joins the report (labelled "warm-up") so the failure is seen, the others are
   * dropped.
   */
  private static List<CellResult> warmUp(CellRunner runner, BenchSettings settings, boolean print)
      throws Exception {
    if (settings.warmupOrders() <= 0) {
      return List.of();
    }
    // S1 at its own rate (its deadlines spread in proportion to the orders): the passes, batch
    // sizes and payments the measured cells see, so the JIT compiles for their profile
    Scenario s1 = Scenario.all(1, settings.timeScale()).get(0);
    Scenario warm =
        Scenario.all(1, settings.timeScale() * settings.warmupOrders() / s1.orders())
            .get(0)
            .withOrders(settings.warmupOrders());
    List<Scenario.Order> orders = warm.generate();
    List<CellResult> done = new ArrayList<>();
    for (String system : settings.systems()) {
      CellResult r = runner.run(warm, orders, system);
      done.add(r.labelled("warm-up " + r.system()));
      if (print) {
        System.out.printf(
            "warm-up %s x %s: %d orders, %s%n",
            warm.name(), system, warm.orders(), correct(r) ? "correct" : "FAILED: " + r.notes());
      }
    }
    return done;
  }

  /** Runs the selected cells and writes the report; returns every cell's figures. */
  static List<CellResult> run(BenchSettings settings, boolean print) throws Exception {
    EmbeddedServers servers = EmbeddedServers.get();
    CellRunner runner = new CellRunner(servers, settings);
    List<CellResult> warmUp = warmUp(runner, settings, print);
    List<CellResult> results = new ArrayList<>();
    Map<String, String> descriptions = new LinkedHashMap<>();
    for (Scenario scenario : Scenario.all(settings.scale(), settings.timeScale())) {
      if (!settings.scenarios().contains(scenario.name())) {
        continue;
      }
      Scenario s =
          settings.ordersOverride() > 0 ? scenario.withOrders(settings.ordersOverride()) : scenario;
      descriptions.put(s.name(), s.orders() + " orders, " + s.title());
      List<Scenario.Order> orders = s.generate();
      for (String system : settings.systems()) {
        if (print) {
          System.out.printf("%s x %s: %d orders ...%n", s.name(), system, s.orders());
        }
        CellResult r = runner.run(s, orders, system);
        results.add(r);
        if (print) {
          System.out.print(Report.table(List.of(r)).lines().skip(2).findFirst().orElse("") + "\n");
        }
      }
    }
    describeSystems(descriptions, settings);
    results.addAll(0, warmUp.stream().filter(r -> !correct(r)).toList());
    String placement =
        settings.placeOrders() > 0
            ? PlacementAllocation.measure(servers, settings, settings.placeOrders())
            : "placement allocation not measured (--place-orders 0)";
    if (print) {
      System.out.println(placement);
    }
    String header =
        "# order-timeout bench, "
            + Instant.now()
            + "\n\nSettings: "
            + settings
            + ". Machine: "
            + Runtime.getRuntime().availableProcessors()
            + " cores, Java "
            + Runtime.version()
            + ". CPU time and peak RSS are of this one JVM (closer, payer and drain poller; under"
            + " exec:java also Maven's own idle threads and JIT warm-up; Redis and MariaDB run in"
            + " their own processes); every run shares the JVM, its VmHWM reset to the current RSS"
            + " before each run, so peak RSS includes the heap earlier runs left. Lag = closed_at - max(expire_at, run start), read"
            + " from MySQL for TIMEOUT closes. Load = 1-min load average after the run. alloc"
            + " KB/close = bytes every thread of this JVM allocated from the closer's start to the"
            + " drain (payer and drain poller included) / TIMEOUT closes; GCs / GC ms = collections"
            + " and their time (pauses; G1's concurrent cycles excluded) over the same span; JIT s ="
            + " time the JIT compilers spent compiling over the same span (CompilationMXBean), and"
            + " CPU us/close w/o JIT = (CPU s - JIT s) / TIMEOUT closes; Redis and MariaDB CPU"
            + " us/close = each server's CPU over the same span (INFO cpu; the mariadbd process) /"
            + " TIMEOUT closes.\n\n"
            + placement;
    Report.write(settings.out(), header, results, descriptions);
    if (print) {
      System.out.println();
      System.out.println(Report.table(results));
      System.out.println("report: " + settings.out().resolve("report.md").toAbsolutePath());
      System.out.println("chart:  " + settings.out().resolve("lag.svg").toAbsolutePath());
    }
    return results;
  }

  private static void describeSystems(Map<String, String> d, BenchSettings settings) {
    d.put(
        "otc",
        "this system (TimeoutSweeper, Redis timer index, OrderCloser), gather "
            + SweepSettings.DEFAULT_GATHER.toMillis()
            + " ms");
    settings.systems().stream()
        .filter(s -> CellRunner.gatherOf(s) >= 0)
        .forEach(
            s ->
                d.put(
                    s,
                    "this system with OTC_SWEEP_GATHER_MS="
                        + CellRunner.gatherOf(s)
                        + ": fewer, larger passes, each deadline claimed up to that much later"));
    d.put(
        "redisson",
        "Redisson RDelayedQueue -> "
            + settings.dbPool()
            + " workers (one per DB connection), each poll(100 ms) + poll("
            + (settings.sweepBatch() - 1)
            + "), one OrderCloser.close per batch");
    d.put(
        "zset-100ms",
        "the seed's design: one sorted set, ZRANGEBYSCORE .. LIMIT 0 "
            + ZsetScanSystem.PAGE
            + " every "
            + ZsetScanSystem.PERIOD_MILLIS
            + " ms, ZREM, then "
            + settings.dbPool()
            + " workers closing chunks with OrderCloser");
    d.put(
        "cron-1s / cron-30s",
        "scan of overdue UNPAID orders every 1 s / 30 s (x time-scale), up to "
            + settings.dbPool()
            + " batches of "
            + CronScanSystem.BATCH
            + " per scan closed in parallel, one OrderCloser.close each");
    d.put(
        "raw-sql",
        "ceiling: the same DB writes as raw batched SQL, "
            + settings.rawThreads()
            + " threads, no Redis, no Java logic");
  }
}
