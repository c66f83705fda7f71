package io.ordertimeout.bench;

import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.EmbeddedRedisCluster;
import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.wiring.Components;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.HdrHistogram.Histogram;

/** One K of {@link ScaleOutBench}: seed, start K sweeper processes, drain, measure, check. */
final class ScaleOutRun {
  /** One K's figures; times in ms from t0 (the first order's due instant). */
  record Result(
      ScaleOutBench.Settings settings,
      String leases,
      int processes,
      long closed,
      long closedEvents,
      long timersLeft,
      Histogram lagMillis,
      long lastCloseMs,
      boolean drained,
      long seedOverrunMs,
      List<SweeperProcess.Stats> sweepers,
      Map<String, Integer> splits,
      double dbCpuSeconds,
      double redisCpuSeconds,
      String loadBefore,
      String loadAfter,
      List<String> violations) {
    double closesPerSecond() {
      return closed * 1_000.0 / Math.max(1, lastCloseMs);
    }

    boolean exactlyOnce() {
      int n = settings.orders();
      return drained && closed == n && closedEvents == n && timersLeft == 0 && violations.isEmpty();
    }
  }

  private final ScaleOutBench.Settings s;
  private final EmbeddedServers servers;
  private final EmbeddedRedisCluster cluster;
  private final int k;
  private final String leases;

  ScaleOutRun(
      ScaleOutBench.Settings s,
      EmbeddedServers servers,
      EmbeddedRedisCluster cluster,
      int k,
      String leases) {
    this.s = s;
    this.servers = servers;
    this.cluster = cluster;
    this.k = k;
    this.leases = leases;
  }

  Result run() throws Exception {
    String schema = servers.createSchema("bench-scale");
    Map<String, String> env = ScaleOutBench.environment(s, servers, cluster, schema);
    // K sweepers at once: all K share the shards (none hands over to one started after it)
    env.put("OTC_SWEEP_RUNS", Integer.toString(k));
    List<SweeperProcess> sweepers = new ArrayList<>();
    try (Components app = new Components(ScaleOutBench.config(env))) {
      DataSource ds = app.dataSource();
      List<Scenario.Order> orders = ScaleOutBench.orders(s);
      BenchSeeder.seed(ds, orders);
      for (int i = 0; i < k; i++) {
        String share = leases.equals(ScaleOutBench.PARTITIONED) ? i + "/" + k : null;
        sweepers.add(SweeperProcess.start(i, env, share, ScaleOutBench.logOf(s, leases, k, i)));
      }
      for (SweeperProcess p : sweepers) {
        p.awaitReady(180_000);
      }
      String loadBefore = loadAverage();
      double[] cpuBefore = serverCpuSeconds();
      // released together, idle until t0: they split the free shard leases between them now
      sweepers.forEach(SweeperProcess::go);
      long t0 = ScaleOutBench.moveToT0(ds, orders.size());
      ScaleOutBench.schedule(app, orders, t0);
      long overrun = Math.max(0, System.currentTimeMillis() - t0);
      Map<String, Integer> splits = new LinkedHashMap<>();
      long lastDue = t0 + s.spreadSeconds() * 1_000L;
      long until = t0 + s.maxDrainMillis();
      boolean drained = false;
      long nextSample = 0;
      while (!drained && System.currentTimeMillis() < until) {
        if (System.currentTimeMillis() >= nextSample) {
          splits.merge(ScaleOutBench.split(app), 1, Integer::sum);
          nextSample = System.currentTimeMillis() + 250;
        }
        Thread.sleep(50);
        drained = System.currentTimeMillis() > lastDue && count(ds, UNPAID) == 0;
      }
      sweepers.forEach(SweeperProcess::stop);
      List<SweeperProcess.Stats> stats = new ArrayList<>();
      for (SweeperProcess p : sweepers) {
        stats.add(p.awaitStats(60_000));
      }
      double[] cpuAfter = serverCpuSeconds();
      String loadAfter = loadAverage();
      return measure(
          app,
          t0,
          drained,
          overrun,
          stats,
          splits,
          cpuAfter[0] - cpuBefore[0],
          cpuAfter[1] - cpuBefore[1],
          loadBefore,
          loadAfter);
    } finally {
      sweepers.forEach(SweeperProcess::close);
      servers.dropSchema(schema);
    }
  }

  private static final String UNPAID = "SELECT COUNT(*) FROM orders WHERE status = 'UNPAID'";

  private Result measure(
      Components app,
      long t0,
      boolean drained,
      long overrun,
      List<SweeperProcess.Stats> stats,
      Map<String, Integer> splits,
      double dbCpu,
      double redisCpu,
      String loadBefore,
      String loadAfter)
      throws SQLException {
    DataSource ds = app.dataSource();
    Histogram lag = new Histogram(3_600_000L, 3);
    long closed = 0;
    long last = 0;
    long early = 0;
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT TIMESTAMPDIFF(MICROSECOND, expire_at, closed_at) AS lag_us,"
                    + " TIMESTAMPDIFF(MICROSECOND, '1970-01-01', closed_at) DIV 1000 AS at_ms"
                    + " FROM orders WHERE status = 'CLOSED'");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        closed++;
        long lagUs = rs.getLong("lag_us");
        early += lagUs < 0 ? 1 : 0;
        lag.recordValue(Math.min(lag.getHighestTrackableValue(), Math.max(0, lagUs / 1_000)));
        last = Math.max(last, rs.getLong("at_ms") - t0);
      }
    }
    List<String> violations = new ArrayList<>(ScaleOutBench.check(ds));
    if (early > 0) {
      violations.add(0, early + " orders closed before their expire_at");
    }
    long twice =
        count(
            ds,
            "SELECT COUNT(*) FROM (SELECT order_id FROM outbox WHERE event_type = 'closed'"
                + " GROUP BY tenant_id, order_id HAVING COUNT(*) > 1) d");
    if (twice > 0) {
      violations.add(0, twice + " orders with more than one closed event");
    }
    return new Result(
        s,
        leases,
        k,
        closed,
        count(ds, "SELECT COUNT(*) FROM outbox WHERE event_type = 'closed'"),
        app.timers().size(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT),
        lag,
        last,
        drained,
        overrun,
        stats,
        splits,
        dbCpu,
        redisCpu,
        loadBefore,
        loadAfter,
        violations);
  }

  private static long count(DataSource ds, String sql) throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(sql);
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** /proc/loadavg's 1, 5 and 15 minute figures. */
  static String loadAverage() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
      return f[0] + " " + f[1] + " " + f[2];
    } catch (java.io.IOException e) {
      return String.format("%.2f", ProcStats.loadAverage());
    }
  }

  /**
   * CPU seconds so far of this JVM's MariaDB process(es) and Redis nodes (embedded servers are its
   * descendants; external servers count 0).
   */
  static double[] serverCpuSeconds() {
    double[] cpu = new double[2];
    ProcessHandle.current()
        .descendants()
        .forEach(
            p -> {
              String cmd = p.info().command().orElse("");
              double secs =
                  p.info().totalCpuDuration().map(d -> d.toMillis() / 1_000.0).orElse(0.0);
              if (cmd.contains("mariadbd") || cmd.contains("mysqld")) {
                cpu[0] += secs;
              } else if (cmd.contains("redis-server")) {
                cpu[1] += secs;
              }
            });
    return cpu;
  }

  static String table(List<Result> results) {
    StringBuilder out = new StringBuilder();
    ScaleOutBench.Settings s = results.get(0).settings();
    out.append(
        String.format(
            "scale-out: %,d orders of %,d SKUs due over %d s (%,d due/s), %d timer shards on a"
                + " 3-master Redis Cluster, DB pool %d per sweeper%n",
            s.orders(),
            s.skus(),
            s.spreadSeconds(),
            s.spreadSeconds() == 0 ? s.orders() : s.orders() / s.spreadSeconds(),
            s.shards(),
            s.pool()));
    out.append(
        "| leases | sweepers | closed | closes/s | lag p50 ms | p99 ms | max ms | drain s | shards held"
            + " (last refresh) | lease split sampled (samples) | sweeper CPU s | MariaDB CPU s |"
            + " Redis CPU s | load before | load after | exactly once |\n");
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|---:|---:|---|---|---|\n");
    for (Result r : results) {
      StringBuilder held = new StringBuilder();
      StringBuilder cpu = new StringBuilder();
      for (SweeperProcess.Stats p : r.sweepers()) {
        held.append(held.length() == 0 ? "" : "/").append(p.shardsHeld());
        cpu.append(cpu.length() == 0 ? "" : "/").append(String.format("%.1f", p.cpuMillis() / 1e3));
      }
      StringBuilder splits = new StringBuilder();
      r.splits()
          .forEach(
              (split, n) ->
                  splits.append(splits.length() == 0 ? "" : ", ").append(split + " (" + n + ")"));
      out.append(
          String.format(
              "| %s | %d | %d | %,.0f | %d | %d | %d | %.2f | %s | %s | %s | %.1f | %.1f | %s | %s | %s |%n",
              r.leases(),
              r.processes(),
              r.closed(),
              r.closesPerSecond(),
              r.lagMillis().getValueAtPercentile(50),
              r.lagMillis().getValueAtPercentile(99),
              r.lagMillis().getMaxValue(),
              r.lastCloseMs() / 1_000.0,
              held,
              splits,
              cpu,
              r.dbCpuSeconds(),
              r.redisCpuSeconds(),
              r.loadBefore(),
              r.loadAfter(),
              r.exactlyOnce() ? "OK" : "FAILED: " + ScaleOutBench.violationText(r.violations())));
    }
    for (Result r : results) {
      out.append(
          String.format(
              "- %s K=%d: closed events %d, timers left %d, drained %s, seeding overran t0 by %d ms;"
                  + " per sweeper passes/closed/handed off/failed batches: %s%n",
              r.leases(),
              r.processes(),
              r.closedEvents(),
              r.timersLeft(),
              r.drained() ? "all" : "NOT all",
              r.seedOverrunMs(),
              r.sweepers().stream()
                  .map(
                      p ->
                          p.passes()
                              + "/"
                              + p.closed()
                              + "/"
                              + p.handedOff()
                              + "/"
                              + p.failedBatches())
                  .toList()));
    }
    return out.toString();
  }
}
