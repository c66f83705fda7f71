package io.ordertimeout.bench;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/** Command-line settings of a bench run; every figure in the report names the ones it ran with. */
record BenchSettings(
    double scale,
    double timeScale,
    int ordersOverride,
    List<String> scenarios,
    List<String> systems,
    int sweepBatch,
    int dbPool,
    int timerShards,
    int parallelism,
    int rawThreads,
    int rawBatch,
    long maxDrainSeconds,
    int placeOrders,
    int warmupOrders,
    Path out) {

  static final List<String> ALL_SYSTEMS =
      List.of("otc", "redisson", "zset-100ms", "cron-1s", "cron-30s", "raw-sql");

  /**
   * Orders of the warm-up cell each system runs before the measured ones: S1's shape at its rate
   * (18 s of it), enough for the JIT to compile the closing paths every system shares (JDBC driver,
   * Lettuce, the closer) for the profile of the measured cells, so the first measured system does
   * not pay the JVM's warm-up alone.
   */
  static final int WARMUP_ORDERS = 60_000;

  static BenchSettings parse(String[] args) {
    return new BenchSettings(
        Double.parseDouble(arg(args, "--scale", "1")),
        Double.parseDouble(arg(args, "--time-scale", "1")),
        Integer.parseInt(arg(args, "--orders", "0")),
        list(arg(args, "--scenario", "S1,S2,S3")),
        list(arg(args, "--system", String.join(",", ALL_SYSTEMS))),
        Integer.parseInt(arg(args, "--batch", "500")),
        Integer.parseInt(arg(args, "--pool", "4")),
        Integer.parseInt(arg(args, "--shards", "16")),
        Integer.parseInt(arg(args, "--parallelism", "0")),
        Integer.parseInt(arg(args, "--raw-threads", "2")),
        Integer.parseInt(arg(args, "--raw-batch", "500")),
        Long.parseLong(arg(args, "--max-drain-seconds", "600")),
        Integer.parseInt(arg(args, "--place-orders", "2000")),
        Integer.parseInt(arg(args, "--warmup-orders", Integer.toString(WARMUP_ORDERS))),
        Path.of(arg(args, "--out", "bench-results")));
  }

  private static String arg(String[] args, String name, String fallback) {
    for (int i = 0; i + 1 < args.length; i++) {
      if (args[i].equals(name)) {
        return args[i + 1];
      }
    }
    return fallback;
  }

  private static List<String> list(String csv) {
    return Arrays.stream(csv.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList();
  }

  /** The cron periods run at timeScale too, so a scaled-down test does not wait 30 s per scan. */
  long cronPeriodMillis(long millis) {
    return Math.max(10, Math.round(millis * timeScale));
  }

  @Override
  public String toString() {
    return String.format(
        "scale %s, time-scale %s%s, sweep batch %d, DB pool %d, timer shards %d, sweep parallelism %s, raw-sql %d"
            + " threads x batch %d, warm-up %s",
        scale,
        timeScale,
        ordersOverride > 0 ? ", orders " + ordersOverride : "",
        sweepBatch,
        dbPool,
        timerShards,
        parallelism == 0 ? "as wired (DB pool)" : Integer.toString(parallelism),
        rawThreads,
        rawBatch,
        warmupOrders > 0
            ? warmupOrders + " orders of S1 per system before the measured cells, not reported"
            : "none");
  }
}
