package io.ordertimeout.bench;

import io.ordertimeout.embedded.EmbeddedServers;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The timer engine's trigger rate alone, no database: N timers seeded into each engine, then
 * drained by W workers taking batches; delivered per second, claim-call latency and lag behind the
 * due time, side by side in one run with Redisson's RDelayedQueue, against the seed's 24,500
 * triggers/s per node and the goal of 100,000/s. Engines ({@code --engines}, in this order):
 *
 * <ul>
 *   <li>{@code otc}: {@link io.ordertimeout.redis.TimerIndex#claimDue} then {@code remove}, the
 *       production calls;
 *   <li>{@code otc-pipelined}: the same script ({@code claimDue-4.lua}, one key per call), claims
 *       and ZREMs pipelined across a worker's shards;
 *   <li>{@code redisson}: RDelayedQueue, see {@link RedissonDelayedEngine}.
 * </ul>
 *
 * <p>{@code --spread-seconds 0} (default): every timer due at the same instant, a backlog drained
 * as fast as the engine goes. {@code --spread-seconds T}: due times spread evenly over T seconds,
 * where the rate is the due rate and the lag (delivery minus due time) is the figure.
 *
 * <p>Run: {@code ./mvnw -q -pl infra/bench -am verify -DskipTests -Pbench -Dbench.main=TriggerBench
 * -Dbench.args="--timers 1000000 --workers 2"}
 */
public final class TriggerBench {
  static final double SEED_RATE = 24_500;
  static final double GOAL_RATE = 100_000;

  private TriggerBench() {}

  /** The run's options; see the class comment. */
  record Settings(
      int timers,
      int workers,
      int batch,
      int spreadSeconds,
      int redissonQueues,
      int warmup,
      int rounds,
      long maxDrainMs,
      List<String> engines) {
    static Settings parse(String[] args) {
      return new Settings(
          intArg(args, "--timers", 100_000),
          intArg(args, "--workers", 2),
          intArg(args, "--batch", 1_000),
          intArg(args, "--spread-seconds", 0),
          intArg(args, "--redisson-queues", 16),
          intArg(args, "--warmup", 50_000),
          intArg(args, "--rounds", 1),
          intArg(args, "--max-drain-seconds", 600) * 1_000L,
          List.of(stringArg(args, "--engines", "otc,otc-pipelined,redisson").split(",")));
    }
  }

  public static void main(String[] args) throws Exception {
    Settings settings = Settings.parse(args);
    System.out.println("load before: " + loadAverage());
    List<TriggerResult> results = run(settings, EmbeddedServers.get());
    System.out.println("load after: " + loadAverage());
    System.out.print(table(results));
    boolean ok = results.stream().allMatch(r -> r.exactlyOnce() && r.keysLeft() == 0);
    System.out.println(ok ? "exactly once: OK" : "exactly once: FAILED");
    System.exit(ok ? 0 : 1);
  }

  /**
   * Each round runs every engine in order (rounds alternate the order, so no engine always runs
   * first on a warming JVM), after one warm-up drain per engine whose seeding speed sets how long
   * the measured seeding may take.
   */
  static List<TriggerResult> run(Settings s, EmbeddedServers servers) throws Exception {
    Map<String, Double> seedMicros = new HashMap<>();
    for (String name : s.engines()) {
      seedMicros.put(name, name.startsWith("redisson") ? 150.0 : 20.0);
      if (s.warmup() > 0) {
        // JIT and connection warm-up on the same code path, so the first engine does not pay it
        Measured warm = measure(name, s, servers, Math.min(s.warmup(), s.timers()), 0, seedMicros);
        seedMicros.put(name, warm.seedMicrosPerTimer());
      }
    }
    List<TriggerResult> results = new ArrayList<>();
    for (int round = 0; round < s.rounds(); round++) {
      List<String> order = new ArrayList<>(s.engines());
      if (round % 2 != 0) {
        Collections.reverse(order);
      }
      for (String name : order) {
        results.add(measure(name, s, servers, s.timers(), s.spreadSeconds(), seedMicros).result());
      }
    }
    return results;
  }

  private record Measured(TriggerResult result, double seedMicrosPerTimer) {}

  private static Measured measure(
      String name,
      Settings s,
      EmbeddedServers servers,
      int timers,
      int spreadSeconds,
      Map<String, Double> seedMicros)
      throws Exception {
    TriggerPlan plan =
        new TriggerPlan(timers, s.workers(), s.batch(), 0, spreadSeconds * 1_000L, s.maxDrainMs());
    String prefix = servers.newKeyPrefix("trigger-" + name);
    try (TriggerEngine engine = engine(name, s, servers.redisUri(), prefix)) {
      // The first due instant comes after seeding (1.3 times the seeding time measured at warm-up,
      // plus 1 s), so no engine moves timers while it is seeded (Redisson's transfer task would)
      // and the lag counts from real due times; an overrun is printed and shown in the table.
      long lead = 1_000 + (long) (1.3 * timers * seedMicros.get(name) / 1_000);
      long seedStart = System.currentTimeMillis();
      plan = plan.withDueAt0(seedStart + lead);
      engine.seed(plan);
      long seedEnd = System.currentTimeMillis();
      long overrun = Math.max(0, seedEnd - plan.dueAt0());
      if (overrun > 0) {
        System.out.printf(
            "%s: seeding %,d timers overran the first due instant by %d ms%n",
            name, timers, overrun);
      }
      TriggerResult r;
      try (RedisServerStats stats = new RedisServerStats(servers.redisUri())) {
        stats.start();
        r = engine.drain(plan).withSeedOverrunMs(overrun).withRedisCpuSeconds(stats.cpuSeconds());
        if (timers == s.timers()) {
          System.out.printf(
              "%s: %,.0f triggers/s (%,d in %.2f s), Redis CPU %.2f s (%.2f us/timer),"
                  + " %d failed calls, exactly once: %s, load %s%n  redis: %s%n",
              name,
              r.perSecond(),
              r.tally().delivered,
              r.seconds(),
              r.redisCpuSeconds(),
              r.redisCpuSeconds() * 1e6 / timers,
              r.tally().errors,
              r.exactlyOnce(),
              loadAverage(),
              stats.commands(timers));
          // the row now too: a later engine that fails must not take this one's figures with it
          System.out.print(table(List.of(r)));
        }
      }
      return new Measured(r, (seedEnd - seedStart) * 1_000.0 / timers);
    }
  }

  static TriggerEngine engine(String name, Settings s, String redisUri, String prefix) {
    return switch (name) {
      case "otc" -> new LeaseClaimEngine(name, redisUri, prefix, false);
      case "otc-pipelined" -> new LeaseClaimEngine(name, redisUri, prefix, true);
      case "redisson" -> new RedissonDelayedEngine(redisUri, prefix, s.redissonQueues());
      default ->
          throw new IllegalArgumentException(
              "unknown engine '" + name + "': otc, otc-pipelined, redisson");
    };
  }

  static String table(List<TriggerResult> results) {
    StringBuilder out = new StringBuilder();
    out.append(
        "| engine | timers | workers | batch | spread s | delivered | distinct | dup | keys left |"
            + " s | triggers/s | vs seed 24,500 | vs goal 100,000 | claim p50 us | p99 us |"
            + " lag p50 ms | p99 ms | max ms | Redis CPU us/timer | seed overran ms |\n");
    out.append(
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (TriggerResult r : results) {
      TriggerTally t = r.tally();
      out.append(
          String.format(
              "| %s | %d | %d | %d | %d | %d | %d | %d | %d | %.2f | %,.0f | %.2fx | %.2fx | %d |"
                  + " %d | %d | %d | %d | %.2f | %d |%n",
              r.engine(),
              r.plan().timers(),
              r.plan().workers(),
              r.plan().batch(),
              r.plan().spreadMs() / 1_000,
              t.delivered,
              r.distinct(),
              t.duplicates,
              r.keysLeft(),
              r.seconds(),
              r.perSecond(),
              r.perSecond() / SEED_RATE,
              r.perSecond() / GOAL_RATE,
              t.callMicros.getValueAtPercentile(50),
              t.callMicros.getValueAtPercentile(99),
              t.lagMillis.getValueAtPercentile(50),
              t.lagMillis.getValueAtPercentile(99),
              t.lagMillis.getMaxValue(),
              r.redisCpuSeconds() * 1e6 / r.plan().timers(),
              r.seedOverrunMs()));
    }
    for (TriggerResult r : results.subList(0, results.size() / Math.max(1, rounds(results)))) {
      out.append("- ").append(r.engine()).append(": ").append(r.description()).append('\n');
    }
    return out.toString();
  }

  private static int rounds(List<TriggerResult> results) {
    return (int) results.stream().filter(r -> r.engine().equals(results.get(0).engine())).count();
  }

  static String loadAverage() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).trim();
    } catch (IOException e) {
      return "unknown (" + e.getMessage() + ")";
    }
  }

  private static int intArg(String[] args, String name, int fallback) {
    String v = stringArg(args, name, null);
    return v == null ? fallback : Integer.parseInt(v);
  }

  private static String stringArg(String[] args, String name, String fallback) {
    for (int i = 0; i + 1 < args.length; i++) {
      if (args[i].equals(name)) {
        return args[i + 1];
      }
    }
    return fallback;
  }
}
