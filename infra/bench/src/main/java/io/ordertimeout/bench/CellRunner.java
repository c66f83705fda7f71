package io.ordertimeout.bench;

import io.ordertimeout.config.OtcConfig;
import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.embedded.InvariantChecker;
import io.ordertimeout.mysql.DbTime;
import io.ordertimeout.wiring.Components;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import javax.sql.DataSource;
import org.HdrHistogram.Histogram;

/**
 * Runs one system on one scenario, in this JVM, on a fresh schema and key prefix: seed, schedule,
 * start the closer (and the payer), wait until every order is final, then read every figure from
 * MySQL, Redis and /proc.
 */
final class CellRunner {
  private final EmbeddedServers servers;
  private final BenchSettings settings;

  CellRunner(EmbeddedServers servers, BenchSettings settings) {
    this.servers = servers;
    this.settings = settings;
  }

  CellResult run(Scenario scenario, List<Scenario.Order> orders, String systemName)
      throws Exception {
    return run(scenario, orders, systemName, app -> newSystem(systemName, app));
  }

  /** The gather of a system named {@code otc-gather-<ms>}, else -1. */
  static int gatherOf(String systemName) {
    return systemName.startsWith(GATHER_SYSTEM)
        ? Integer.parseInt(systemName.substring(GATHER_SYSTEM.length()))
        : -1;
  }

  /** This system with another OTC_SWEEP_GATHER_MS: {@code otc-gather-100}. */
  static final String GATHER_SYSTEM = "otc-gather-";

  /** Runs a system built by {@code factory} (tests run deliberately broken baselines this way). */
  CellResult run(
      Scenario scenario,
      List<Scenario.Order> orders,
      String label,
      Function<Components, ClosingSystem> factory)
      throws Exception {
    String schema =
        servers.createSchema("bench_" + scenario.name() + "_" + label.replace('-', '_'));
    try (Components app = new Components(config(schema, gatherOf(label)))) {
      BenchSeeder.seed(app.dataSource(), orders);
      try (ClosingSystem system = factory.apply(app)) {
        return measure(scenario, orders, app, system);
      }
    } finally {
      servers.dropSchema(schema);
    }
  }

  OtcConfig config(String schema) {
    return config(schema, -1);
  }

  private OtcConfig config(String schema, int gatherMillis) {
    Map<String, String> env = new HashMap<>();
    if (gatherMillis >= 0) {
      env.put("OTC_SWEEP_GATHER_MS", Integer.toString(gatherMillis));
    }
    env.put("OTC_MYSQL_URL", servers.jdbcUrl(schema));
    env.put("OTC_MYSQL_USER", servers.mysqlUser());
    env.put("OTC_MYSQL_PASSWORD", servers.mysqlPassword());
    env.put("OTC_DB_POOL_SIZE", Integer.toString(settings.dbPool()));
    env.put("OTC_REDIS_URI", servers.redisUri());
    env.put("OTC_KEY_PREFIX", servers.newKeyPrefix("bench"));
    env.put("OTC_TIMER_SHARDS", Integer.toString(settings.timerShards()));
    env.put("OTC_SWEEP_BATCH", Integer.toString(settings.sweepBatch()));
    env.put("OTC_INVOCATION_MARGIN_MS", "0");
    env.put("OTC_MIGRATE_ON_START", "true");
    return OtcConfig.fromEnvironment(env);
  }

  private ClosingSystem newSystem(String name, Components app) {
    if (gatherOf(name) >= 0) {
      return new OtcSystem(app, settings.parallelism(), name);
    }
    return switch (name) {
      case "otc" -> new OtcSystem(app, settings.parallelism());
      case "redisson" ->
          new RedissonSystem(
              app,
              servers.redisUri(),
              app.config().keyPrefix() + ":redisson",
              settings.dbPool(),
              settings.sweepBatch());
      case "zset-100ms" ->
          new ZsetScanSystem(
              app, servers.redisUri(), app.config().keyPrefix() + ":zset", settings.dbPool());
      case "cron-1s" ->
          new CronScanSystem(app, name, settings.cronPeriodMillis(1_000), settings.dbPool());
      case "cron-30s" ->
          new CronScanSystem(app, name, settings.cronPeriodMillis(30_000), settings.dbPool());
      case "raw-sql" ->
          new RawSqlSystem(app.dataSource(), settings.rawThreads(), settings.rawBatch());
      default ->
          throw new IllegalArgumentException(
              "unknown system '"
                  + name
                  + "'; known: "
                  + BenchSettings.ALL_SYSTEMS
                  + " and "
                  + GATHER_SYSTEM
                  + "<ms> (this system with OTC_SWEEP_GATHER_MS=<ms>)");
    };
  }

  private CellResult measure(
      Scenario scenario, List<Scenario.Order> orders, Components app, ClosingSystem system)
      throws Exception {
    DataSource ds = app.dataSource();
    long redisBefore = usedMemory(app);
    boolean future = scenario.firstDueMillis() >= 0;
    long leadMillis =
        future ? 2_000 + orders.size() * (30 + system.scheduleMicrosPerOrder()) / 1_000 : 0;
    LocalDateTime base = BenchSeeder.dbNow(ds).plus(Duration.ofMillis(leadMillis));
    BenchSeeder.moveTo(ds, base);
    long baseEpoch = base.toInstant(ZoneOffset.UTC).toEpochMilli();
    Map<String, Long> deadlines = new LinkedHashMap<>();
    orders.forEach(o -> deadlines.put(o.id(), baseEpoch + o.dueOffsetMillis()));
    system.schedule(deadlines);
    long redisAfter = usedMemory(app);
    List<String> notes = new java.util.ArrayList<>();
    System.gc();
    boolean peakReset = ProcStats.resetPeakRss();
    if (!peakReset) {
      notes.add("peak RSS not reset (clear_refs refused): includes seeding");
    }
    LocalDateTime runStart = BenchSeeder.dbNow(ds);
    if (future && runStart.isAfter(base)) {
      notes.add(
          "setup overran the first deadline by "
              + Duration.between(base, runStart).toMillis()
              + " ms (lag counted from run start)");
    }
    RedisServerStats redisStats = new RedisServerStats(servers.redisUri());
    redisStats.start();
    long cpuBefore = ProcStats.cpuNanos();
    long dbCpuBefore = ProcStats.mariadbCpuNanos();
    JvmMeter meter = JvmMeter.start();
    system.start();
    Payer payer = new Payer(ds, orders, baseEpoch, system::onPaid);
    if (payer.planned() > 0) {
      payer.start();
      notes.add("paid share: " + Payer.description());
    }
    long lastDeadline = deadlines.values().stream().mapToLong(Long::longValue).max().orElse(0);
    boolean drained = awaitDrain(ds, lastDeadline);
    // read before stop(): the closer's threads must be alive to be counted (see JvmMeter)
    JvmMeter.Figures jvm = meter.read();
    system.stop();
    payer.stop();
    long cpuNanos = ProcStats.cpuNanos() - cpuBefore;
    long dbCpuAfter = ProcStats.mariadbCpuNanos();
    double dbCpu = dbCpuBefore < 0 || dbCpuAfter < 0 ? -1 : (dbCpuAfter - dbCpuBefore) / 1e9;
    double redisCpu;
    try (redisStats) {
      redisCpu = redisStats.cpuSeconds();
      notes.add("redis: " + redisStats.commands(orders.size()).replace("us/timer", "us/order"));
    }
    long peakKb = ProcStats.peakRssKb();
    if (scenario.prepaidShare() > 0) {
      notes.add(
          PaymentFeatures.closeQueriesWeChat()
              ? "prepaid share: WeChat query-then-close present but not driven by this bench"
              : "prepaid share: not exercised (OrderCloser has no payment gateway on this build);"
                  + " those orders close as never-prepaid");
    }
    if (system instanceof OtcSystem otc && otc.stats() != null) {
      notes.add("sweep: " + otc.stats());
    }
    if (payer.lostToClose() > 0) {
      notes.add(payer.lostToClose() + " payments found the order already closed");
    }
    return figures(
        scenario,
        orders.size(),
        system,
        ds,
        runStart,
        drained,
        cpuNanos,
        redisCpu,
        dbCpu,
        peakKb,
        (redisAfter - redisBefore) / (double) orders.size(),
        payer.paid(),
        jvm,
        String.join("; ", notes));
  }

  private boolean awaitDrain(DataSource ds, long lastDeadlineEpoch) throws Exception {
    long giveUp = lastDeadlineEpoch + settings.maxDrainSeconds() * 1_000;
    Thread.sleep(Math.max(0, lastDeadlineEpoch - System.currentTimeMillis()));
    while (System.currentTimeMillis() < giveUp) {
      if (!anyUnpaid(ds)) {
        return true;
      }
      Thread.sleep(50);
    }
    return !anyUnpaid(ds);
  }

  private static boolean anyUnpaid(DataSource ds) throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement("SELECT 1 FROM orders WHERE status = 'UNPAID' LIMIT 1");
        ResultSet rs = ps.executeQuery()) {
      return rs.next();
    }
  }

  private CellResult figures(
      Scenario scenario,
      int orders,
      ClosingSystem system,
      DataSource ds,
      LocalDateTime runStart,
      boolean drained,
      long cpuNanos,
      double redisCpuSeconds,
      double dbCpuSeconds,
      long peakKb,
      double redisPerOrder,
      long paid,
      JvmMeter.Figures jvm,
      String notes)
      throws SQLException {
    Histogram lag = new Histogram(3_600_000_000L, 3);
    long closedEarly = 0;
    try (Connection c = ds.getConnection()) {
      try (PreparedStatement ps =
          c.prepareStatement(
              "SELECT TIMESTAMPDIFF(MICROSECOND, GREATEST(expire_at, CAST(? AS DATETIME(3))),"
                  + " closed_at)"
                  + " FROM orders WHERE status = 'CLOSED' AND close_reason = 'TIMEOUT'")) {
        DbTime.bind(ps, 1, runStart);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            long us = rs.getLong(1);
            if (us < 0) {
              closedEarly++;
            }
            lag.recordValue(Math.min(Math.max(0, us), lag.getHighestTrackableValue()));
          }
        }
      }
      double[] window = window(c, runStart);
      long unpaid = count(c, "UNPAID");
      long closed = lag.getTotalCount();
      String invariants = invariants(ds);
      return new CellResult(
          scenario.name(),
          system.name(),
          orders,
          closed,
          paid,
          unpaid,
          closedEarly,
          lag,
          window[0],
          window[1],
          window[0] > 0 ? closed / window[0] : 0,
          cpuNanos / 1e9,
          redisCpuSeconds,
          dbCpuSeconds,
          peakKb,
          redisPerOrder,
          drained,
          invariants,
          ProcStats.loadAverage(),
          jvm,
          notes);
    }
  }

  /**
   * Drain time: from the first moment an order was due (its deadline, or the run start for a
   * backlog) to the last close; tail: from the last deadline to the last close.
   */
  private static double[] window(Connection c, LocalDateTime runStart) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT TIMESTAMPDIFF(MICROSECOND, MIN(GREATEST(expire_at, CAST(? AS DATETIME(3)))),"
                + " MAX(closed_at)), TIMESTAMPDIFF(MICROSECOND,"
                + " GREATEST(MAX(expire_at), CAST(? AS DATETIME(3))), MAX(closed_at))"
                + " FROM orders WHERE status = 'CLOSED' AND close_reason = 'TIMEOUT'")) {
      DbTime.bind(ps, 1, runStart);
      DbTime.bind(ps, 2, runStart);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return new double[] {rs.getLong(1) / 1e6, rs.getLong(2) / 1e6};
      }
    }
  }

  private static long count(Connection c, String status) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT COUNT(*) FROM orders WHERE status = ?")) {
      ps.setString(1, status);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  private static String invariants(DataSource ds) {
    List<String> violations = new InvariantChecker(ds).violations();
    return violations.isEmpty()
        ? "OK"
        : "FAILED: " + violations.size() + " (" + violations.get(0) + ")";
  }

  private static long usedMemory(Components app) {
    String info = app.redis().sync().info("memory");
    for (String line : info.split("\r?\n")) {
      if (line.startsWith("used_memory:")) {
        return Long.parseLong(line.substring("used_memory:".length()).trim());
      }
    }
    throw new IllegalStateException("INFO memory has no used_memory line: " + info);
  }
}
