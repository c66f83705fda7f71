package io.ordertimeout.bench;

import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.embedded.InvariantChecker;
import io.ordertimeout.mysql.DbTime;
import io.ordertimeout.stream.OrderEvents;
import io.ordertimeout.wiring.Components;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URISyntaxException;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.HdrHistogram.Histogram;

/**
 * How much memory the two always-on functions need: the production sweep (TimeoutSweepHandler) or
 * the stream consumer with its outbox relay (StreamConsumerHandler), each in a child JVM ({@link
 * FootprintChild}) started with what Lambda gives a function of M MB: the JVM sees M MB of RAM, a
 * heap of 85% of it, Serial GC and C1 only (the flags the java runtimes' bootstrap passes:
 * -XX:MaxHeapSize=445645k for 512 MB, -XX:+UseSerialGC, -XX:TieredStopAtLevel=1). CPU cannot be
 * given in proportion to M here (Lambda: 1,769 MB = 1 vCPU), so every size gets
 * -XX:ActiveProcessorCount=1 on a real core; the child's CPU time is reported so the vCPU a rate
 * needs can be read off.
 *
 * <p>Load: {@code --rate} orders due per second for {@code --seconds} (S1's 3,333/s for 60 s by
 * default), seeded as placing them would, all left unpaid. The sweep finds them in the timer index;
 * the consumer gets one close_due event per order at its deadline (the parent appends them as they
 * fall due). Figures per size: close lag from MariaDB, closes/s, the child's peak RSS (VmHWM, its
 * whole life), heap after GC, GC count and time, CPU, and the invariants; a violation, an order not
 * closed or a child that failed exits non-zero.
 *
 * <p>Run: {@code ./mvnw -q -pl infra/bench -am verify -DskipTests -Pbench
 * -Dbench.main=FootprintBench -Dbench.args="--function sweep --sizes 128,192,256,384,512"}
 */
public final class FootprintBench {
  /** Lambda: a function of 1,769 MB has the equivalent of one vCPU. */
  static final int MB_PER_VCPU = 1_769;

  private static final Pattern FIELD = Pattern.compile("(\\w+)=(-?\\d+)");

  /** One function at one memory size. */
  record Result(
      String function,
      int memoryMb,
      int orders,
      long closed,
      long releases,
      Histogram lagMicros,
      double closesPerSecond,
      Map<String, Long> child,
      String invariants,
      int exitCode,
      double loadBefore,
      double loadAfter,
      Path log) {
    boolean ok() {
      return exitCode == 0
          && invariants.equals("OK")
          && closed == orders
          && releases == closed
          && child.containsKey("peakRssKb");
    }

    String row() {
      long cpuMs = child.getOrDefault("cpuMs", 0L);
      long wallMs = Math.max(1, child.getOrDefault("wallMs", 1L));
      return String.format(
          "| %s | %d | %.3f | %d/%d | %d / %d / %d | %.0f | %.0f | %.0f | %.0f | %d / %d | %.2f |"
              + " %s | %.1f -> %.1f |",
          function,
          memoryMb,
          memoryMb / (double) MB_PER_VCPU,
          closed,
          orders,
          lagMicros.getValueAtPercentile(50) / 1_000,
          lagMicros.getValueAtPercentile(99) / 1_000,
          lagMicros.getMaxValue() / 1_000,
          closesPerSecond,
          child.getOrDefault("peakRssKb", -1L) / 1024.0,
          child.getOrDefault("maxHeapAfterGcKb", -1L) / 1024.0,
          child.getOrDefault("liveHeapAtEndKb", -1L) / 1024.0,
          child.getOrDefault("gcCount", -1L),
          child.getOrDefault("gcMillis", -1L),
          cpuMs / (double) wallMs,
          ok() ? "OK" : "FAILED (" + invariants + ", exit " + exitCode + ")",
          loadBefore,
          loadAfter);
    }
  }

  static final String HEADER =
      "| function | MB | Lambda vCPU | closed | lag p50 / p99 / max ms | closes/s | peak RSS MB"
          + " | max heap after GC MB | live heap at end MB | GCs / pause ms | CPU cores used |"
          + " invariants | load 1m |\n"
          + "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |";

  private FootprintBench() {}

  public static void main(String[] args) throws Exception {
    String functions = stringArg(args, "--function", "sweep");
    int rate = SweepBench.intArg(args, "--rate", 3_333);
    int seconds = SweepBench.intArg(args, "--seconds", 60);
    int cpus = SweepBench.intArg(args, "--cpus", 1);
    boolean lambdaCpu = stringArg(args, "--lambda-cpu", "false").equals("true");
    List<Integer> sizes = new ArrayList<>();
    for (String s : stringArg(args, "--sizes", "128,192,256,384,512").split(",")) {
      sizes.add(Integer.parseInt(s.trim()));
    }
    EmbeddedServers servers = EmbeddedServers.get();
    System.out.printf(
        "footprint: %d orders due/s for %d s, -XX:ActiveProcessorCount=%d, CPU %s%n%s%n",
        rate,
        seconds,
        cpus,
        lambdaCpu ? "capped at MB/1769 of a core (cgroup cpu quota)" : "a whole core",
        HEADER);
    boolean allOk = true;
    for (String function : functions.split(",")) {
      for (int size : sizes) {
        Result r = run(servers, function.trim(), size, rate, seconds, cpus, lambdaCpu);
        System.out.println(r.row());
        System.out.println("  child: " + r.child() + " log " + r.log());
        allOk &= r.ok();
      }
    }
    System.exit(allOk ? 0 : 1);
  }

  /** One function at one size on a fresh schema and key prefix. */
  static Result run(
      EmbeddedServers servers, String function, int memoryMb, int rate, int seconds, int cpus)
      throws Exception {
    return run(servers, function, memoryMb, rate, seconds, cpus, false);
  }

  /**
   * As above; {@code lambdaCpu}: the child also gets Lambda's share of a CPU, memoryMb / 1,769 of
   * one core, as a cgroup (v1) CFS quota over 100 ms periods; refused where the cgroup cannot be
   * made.
   */
  static Result run(
      EmbeddedServers servers,
      String function,
      int memoryMb,
      int rate,
      int seconds,
      int cpus,
      boolean lambdaCpu)
      throws Exception {
    if (!function.equals("sweep") && !function.equals("consumer")) {
      throw new IllegalArgumentException("--function: sweep or consumer, not " + function);
    }
    String schema = servers.createSchema("fp_" + function + "_" + memoryMb);
    String prefix = servers.newKeyPrefix("fp");
    Map<String, String> env = new LinkedHashMap<>();
    env.put("OTC_MYSQL_URL", servers.jdbcUrl(schema));
    env.put("OTC_MYSQL_USER", servers.mysqlUser());
    env.put("OTC_MYSQL_PASSWORD", servers.mysqlPassword());
    env.put("OTC_REDIS_URI", servers.redisUri());
    env.put("OTC_KEY_PREFIX", prefix);
    Map<String, String> parentEnv = new LinkedHashMap<>(env);
    parentEnv.put("OTC_DB_POOL_SIZE", "4");
    parentEnv.put("OTC_MIGRATE_ON_START", "true");
    int orders = rate * seconds;
    List<Scenario.Order> list =
        new Scenario("F", "footprint", orders, 1_000, 1.0, 0, seconds * 1_000L, 0, 0).generate();
    try (Components app =
        new Components(io.ordertimeout.config.OtcConfig.fromEnvironment(parentEnv))) {
      BenchSeeder.seed(app.dataSource(), list);
      // the template's function Timeout: the child's invocations last what they last on Lambda
      long timeoutMs = function.equals("sweep") ? 150_000 : 140_000;
      env.put("OTC_FUNCTION_TIMEOUT_MS", Long.toString(timeoutMs));
      Path log = Files.createTempFile("footprint-" + function + "-" + memoryMb + "-", ".log");
      double loadBefore = ProcStats.loadAverage();
      Process child = start(function, memoryMb, cpus, timeoutMs, env, log);
      CpuQuota quota = lambdaCpu ? CpuQuota.of(child.pid(), memoryMb) : null;
      try {
        awaitLine(child, log, FootprintChild.READY, 180_000);
        return drive(app, function, memoryMb, list, child, log, loadBefore);
      } finally {
        child.destroyForcibly();
        child.waitFor(30, TimeUnit.SECONDS);
        if (quota != null) {
          quota.remove();
        }
      }
    } finally {
      servers.dropSchema(schema);
    }
  }

  private static Result drive(
      Components app,
      String function,
      int memoryMb,
      List<Scenario.Order> list,
      Process child,
      Path log,
      double loadBefore)
      throws Exception {
    DataSource ds = app.dataSource();
    long leadMillis = 2_000 + list.size() * 40L / 1_000;
    LocalDateTime base = BenchSeeder.dbNow(ds).plus(Duration.ofMillis(leadMillis));
    BenchSeeder.moveTo(ds, base);
    long baseEpoch = base.toInstant(ZoneOffset.UTC).toEpochMilli();
    Map<String, Long> deadlines = new LinkedHashMap<>();
    list.forEach(o -> deadlines.put(o.id(), baseEpoch + o.dueOffsetMillis()));
    Thread feeder = null;
    if (function.equals("sweep")) {
      app.timers().scheduleAll(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, deadlines);
    } else {
      app.stream().ensureGroup();
      feeder = new Thread(() -> feed(app.events(), deadlines), "footprint-feeder");
      feeder.setDaemon(true);
      feeder.start();
    }
    LocalDateTime runStart = BenchSeeder.dbNow(ds);
    long lastDeadline = deadlines.values().stream().mapToLong(Long::longValue).max().orElse(0);
    awaitDrain(ds, lastDeadline, 120_000);
    if (feeder != null) {
      feeder.interrupt();
      feeder.join();
    }
    try (OutputStream in = child.getOutputStream()) {
      in.write("stop\n".getBytes(StandardCharsets.UTF_8));
    } catch (IOException e) {
      // the child already exited: its exit code says how
    }
    boolean exited = child.waitFor(120, TimeUnit.SECONDS);
    int exit = exited ? child.exitValue() : -1;
    Map<String, Long> figures = parseResult(log);
    Histogram lag = new Histogram(3_600_000_000L, 3);
    long[] counts = closes(ds, runStart, lag);
    double window = windowSeconds(ds, runStart);
    List<String> violations = new InvariantChecker(ds).violations();
    return new Result(
        function,
        memoryMb,
        list.size(),
        counts[0],
        counts[1],
        lag,
        window > 0 ? counts[0] / window : 0,
        figures,
        violations.isEmpty() ? "OK" : violations.size() + " violations: " + violations.get(0),
        exit,
        loadBefore,
        ProcStats.loadAverage(),
        log);
  }

  /**
   * The child JVM: Lambda's JVM flags for a function of {@code memoryMb} (heap 85% of the memory,
   * as the runtime's -XX:MaxHeapSize=445645k for 512 MB), the bench's classpath.
   */
  private static Process start(
      String function, int memoryMb, int cpus, long timeoutMs, Map<String, String> env, Path log)
      throws IOException, URISyntaxException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-XX:MaxRAM=" + memoryMb + "m");
    command.add("-XX:MaxHeapSize=" + memoryMb * 1024L * 85 / 100 + "k");
    command.add("-XX:+UseSerialGC");
    command.add("-XX:+TieredCompilation");
    command.add("-XX:TieredStopAtLevel=1");
    command.add("-XX:ActiveProcessorCount=" + cpus);
    command.add("-Duser.timezone=UTC");
    command.add("-cp");
    command.add(classpath());
    command.add(FootprintChild.class.getName());
    command.add(function);
    command.add(Long.toString(timeoutMs));
    ProcessBuilder pb = new ProcessBuilder(command);
    pb.environment().keySet().removeIf(k -> k.startsWith("OTC_") || k.startsWith("AWS_"));
    pb.environment().putAll(env);
    pb.redirectErrorStream(true);
    pb.redirectOutput(log.toFile());
    return pb.start();
  }

  /** A cgroup v1 cpu group holding the child, its quota Lambda's CPU share of the memory size. */
  record CpuQuota(Path dir) {
    /** The cgroup v1 cpu hierarchy (-Dotc.bench.cgroup-cpu elsewhere). */
    private static final Path ROOT =
        Path.of(System.getProperty("otc.bench.cgroup-cpu", "/sys/fs/cgroup/cpu"));

    private static final long PERIOD_US = 100_000;

    static CpuQuota of(long pid, int memoryMb) throws IOException {
      Path dir = ROOT.resolve("otc-footprint-" + pid);
      Files.createDirectory(dir);
      long quotaUs = Math.max(1_000, PERIOD_US * memoryMb / MB_PER_VCPU);
      Files.writeString(dir.resolve("cpu.cfs_period_us"), Long.toString(PERIOD_US));
      Files.writeString(dir.resolve("cpu.cfs_quota_us"), Long.toString(quotaUs));
      Files.writeString(dir.resolve("cgroup.procs"), Long.toString(pid));
      return new CpuQuota(dir);
    }

    void remove() throws IOException {
      Files.deleteIfExists(dir);
    }
  }

  /** The classpath this class was loaded from (exec:java's loader, or the JVM's own). */
  static String classpath() throws URISyntaxException {
    if (FootprintBench.class.getClassLoader() instanceof URLClassLoader loader
        && loader.getURLs().length > 0) {
      List<String> paths = new ArrayList<>();
      for (var url : loader.getURLs()) {
        paths.add(Path.of(url.toURI()).toString());
      }
      return String.join(java.io.File.pathSeparator, paths);
    }
    return System.getProperty("java.class.path");
  }

  /** Appends close_due for each order as its deadline passes, in 10 ms ticks. */
  private static void feed(OrderEvents events, Map<String, Long> deadlines) {
    List<Map.Entry<String, Long>> due = new ArrayList<>(deadlines.entrySet());
    due.sort(Map.Entry.comparingByValue());
    int next = 0;
    try {
      while (next < due.size()) {
        long now = System.currentTimeMillis();
        List<String> ids = new ArrayList<>();
        while (next < due.size() && due.get(next).getValue() <= now && ids.size() < 500) {
          ids.add(due.get(next++).getKey());
        }
        if (!ids.isEmpty()) {
          events.closeDue(TenantIds.DEFAULT, ids, OrderEvents.HandOffCause.OVER_BUDGET);
        } else {
          Thread.sleep(10);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void awaitLine(Process child, Path log, String prefix, long timeoutMs)
      throws Exception {
    long giveUp = System.currentTimeMillis() + timeoutMs;
    while (System.currentTimeMillis() < giveUp) {
      if (Files.readString(log).contains(prefix)) {
        return;
      }
      if (!child.isAlive()) {
        throw new IllegalStateException(
            "footprint child exited " + child.exitValue() + " before " + prefix + "; see " + log);
      }
      Thread.sleep(50);
    }
    throw new IllegalStateException("footprint child not " + prefix + " in time; see " + log);
  }

  private static void awaitDrain(DataSource ds, long lastDeadlineEpoch, long graceMs)
      throws Exception {
    Thread.sleep(Math.max(0, lastDeadlineEpoch - System.currentTimeMillis()));
    long giveUp = System.currentTimeMillis() + graceMs;
    while (System.currentTimeMillis() < giveUp && unpaid(ds) > 0) {
      Thread.sleep(50);
    }
  }

  private static long unpaid(DataSource ds) throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement("SELECT COUNT(*) FROM orders WHERE status = 'UNPAID'");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }

  static Map<String, Long> parseResult(Path log) throws IOException {
    Map<String, Long> figures = new LinkedHashMap<>();
    for (String line : Files.readAllLines(log)) {
      if (line.startsWith(FootprintChild.RESULT)) {
        String head =
            line.contains(" summary=") ? line.substring(0, line.indexOf(" summary=")) : line;
        Matcher m = FIELD.matcher(head);
        while (m.find()) {
          figures.put(m.group(1), Long.parseLong(m.group(2)));
        }
      }
    }
    return figures;
  }

  /** Lag of each closed order into {@code lag}; answers {closed orders, RELEASE ledger rows}. */
  private static long[] closes(DataSource ds, LocalDateTime runStart, Histogram lag)
      throws SQLException {
    long closed = 0;
    long releases;
    try (Connection c = ds.getConnection()) {
      try (PreparedStatement ps =
          c.prepareStatement(
              "SELECT TIMESTAMPDIFF(MICROSECOND, GREATEST(expire_at, CAST(? AS DATETIME(3))),"
                  + " closed_at) FROM orders WHERE status = 'CLOSED'")) {
        DbTime.bind(ps, 1, runStart);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            lag.recordValue(Math.min(Math.max(0, rs.getLong(1)), lag.getHighestTrackableValue()));
            closed++;
          }
        }
      }
      try (PreparedStatement ps =
              c.prepareStatement("SELECT COUNT(*) FROM stock_movements WHERE kind = 'RELEASE'");
          ResultSet rs = ps.executeQuery()) {
        rs.next();
        releases = rs.getLong(1);
      }
    }
    return new long[] {closed, releases};
  }

  /** From the first deadline (or the run start) to the last close, s. */
  private static double windowSeconds(DataSource ds, LocalDateTime runStart) throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT TIMESTAMPDIFF(MICROSECOND, MIN(GREATEST(expire_at, CAST(? AS"
                    + " DATETIME(3)))), MAX(closed_at)) FROM orders WHERE status = 'CLOSED'")) {
      DbTime.bind(ps, 1, runStart);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1) / 1e6;
      }
    }
  }

  static String stringArg(String[] args, String name, String fallback) {
    for (int i = 0; i + 1 < args.length; i++) {
      if (args[i].equals(name)) {
        return args[i + 1];
      }
    }
    return fallback;
  }
}
