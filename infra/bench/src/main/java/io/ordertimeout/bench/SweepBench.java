package io.ordertimeout.bench;

import io.ordertimeout.config.OtcConfig;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.BulkSeeder;
import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.embedded.InvariantChecker;
import io.ordertimeout.sweep.SweepStats;
import io.ordertimeout.sweep.TimeoutSweeper;
import io.ordertimeout.wiring.Components;
import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * How long one sweep invocation takes to close N orders that are all due (default 10,000, 100 SKUs
 * with a hot one taking 30% of the orders), on the embedded Redis and MariaDB. Prints figures;
 * asserts nothing but the invariants.
 *
 * <p>Run: {@code ./mvnw -q -pl infra/bench -am verify -DskipTests -Pbench -Dbench.main=SweepBench
 * -Dbench.args="--orders 10000"}
 */
public final class SweepBench {
  private SweepBench() {}

  public static void main(String[] args) throws Exception {
    int orders = intArg(args, "--orders", 10_000);
    int batch = intArg(args, "--batch", 500);
    EmbeddedServers servers = EmbeddedServers.get();
    String schema = servers.createSchema("bench-sweep");
    try (Components app = new Components(config(servers, schema, batch))) {
      seed(app, orders);
      long cpuBefore = processCpuNanos();
      long started = System.nanoTime();
      SweepStats stats = sweepUntilDrained(app, orders);
      long wallMs = (System.nanoTime() - started) / 1_000_000;
      long cpuMs = (processCpuNanos() - cpuBefore) / 1_000_000;
      report(app, orders, batch, stats, wallMs, cpuMs);
    } finally {
      servers.dropSchema(schema);
    }
    System.exit(0);
  }

  static OtcConfig config(EmbeddedServers servers, String schema, int batch) {
    Map<String, String> env = new HashMap<>();
    env.put("OTC_MYSQL_URL", servers.jdbcUrl(schema));
    env.put("OTC_MYSQL_USER", servers.mysqlUser());
    env.put("OTC_MYSQL_PASSWORD", servers.mysqlPassword());
    env.put("OTC_DB_POOL_SIZE", "4");
    env.put("OTC_REDIS_URI", servers.redisUri());
    env.put("OTC_KEY_PREFIX", servers.newKeyPrefix("bench"));
    env.put("OTC_SWEEP_BATCH", Integer.toString(batch));
    env.put("OTC_INVOCATION_MARGIN_MS", "0");
    env.put("OTC_MIGRATE_ON_START", "true");
    return OtcConfig.fromEnvironment(env);
  }

  private static void seed(Components app, int orders) throws SQLException {
    try (Connection c = app.dataSource().getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO stock (tenant_id, sku_id, available, total) VALUES ('default', ?, ?, ?)")) {
      for (int i = 0; i <= 100; i++) {
        ps.setString(1, i == 100 ? "hot" : "sku-" + i);
        ps.setLong(2, 1_000_000);
        ps.setLong(3, 1_000_000);
        ps.addBatch();
      }
      ps.executeBatch();
    }
    Map<String, BulkSeeder.Line> lines = new LinkedHashMap<>();
    for (int i = 0; i < orders; i++) {
      String sku = i % 10 < 3 ? "hot" : "sku-" + (i % 100);
      lines.put(String.format("bench-%08d", i), new BulkSeeder.Line(sku, 1 + i % 3));
    }
    app.timers()
        .scheduleAll(
            TenantIds.DEFAULT,
            DeadlineKind.PAYMENT_TIMEOUT,
            BulkSeeder.seedUnpaid(app.dataSource(), lines, Duration.ofSeconds(-1)));
  }

  private static SweepStats sweepUntilDrained(Components app, int orders) throws Exception {
    TimeoutSweeper sweeper = app.newSweeper();
    long until = System.currentTimeMillis() + 600_000;
    CompletableFuture<SweepStats> run =
        CompletableFuture.supplyAsync(() -> sweeper.run(() -> until - System.currentTimeMillis()));
    while (unpaid(app) > 0 && System.currentTimeMillis() < until) {
      Thread.sleep(20);
    }
    sweeper.terminate();
    return run.get();
  }

  private static long unpaid(Components app) throws SQLException {
    try (Connection c = app.dataSource().getConnection();
        PreparedStatement ps =
            c.prepareStatement("SELECT COUNT(*) FROM orders WHERE status = 'UNPAID'");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static void report(
      Components app, int orders, int batch, SweepStats stats, long wallMs, long cpuMs) {
    var lag = app.metrics().histograms().get("close_lag_ms");
    System.out.printf(
        "sweep bench: %d due orders, batch %d: closed %d in %d ms (%.0f closes/s), %d passes,"
            + " process CPU %d ms%n",
        orders,
        batch,
        stats.closed(),
        wallMs,
        stats.closed() * 1000.0 / wallMs,
        stats.passes(),
        cpuMs);
    if (lag != null) {
      System.out.printf(
          "close lag (all overdue by 1 s at start): p50 %d ms, p99 %d ms, max %d ms%n",
          lag.getValueAtPercentile(50), lag.getValueAtPercentile(99), lag.getMaxValue());
    }
    var violations = new InvariantChecker(app.dataSource()).violations();
    System.out.println(
        violations.isEmpty() ? "invariants: OK" : "invariants: FAILED (" + violations.get(0) + ")");
  }

  private static long processCpuNanos() {
    var os = ManagementFactory.getOperatingSystemMXBean();
    return os instanceof com.sun.management.OperatingSystemMXBean sun
        ? sun.getProcessCpuTime()
        : -1;
  }

  static int intArg(String[] args, String name, int fallback) {
    for (int i = 0; i + 1 < args.length; i++) {
      if (args[i].equals(name)) {
        return Integer.parseInt(args[i + 1]);
      }
    }
    return fallback;
  }
}
