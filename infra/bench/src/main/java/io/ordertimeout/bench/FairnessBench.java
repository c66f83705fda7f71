package io.ordertimeout.bench;

import io.ordertimeout.config.OtcConfig;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.embedded.InvariantChecker;
import io.ordertimeout.wiring.Components;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.HdrHistogram.Histogram;

/**
 * Fairness between tenants: tenant A's flash sale, {@code --flash} (50,000) unpaid orders all due
 * within the same second, beside tenant B's steady stream, {@code --rate} (20) orders a second due
 * from that second on for {@code --steady-seconds} (60), through the real sweep function code
 * ({@link SweepSchedule}: {@code SweepJob.run} on two execution environments, started every 60 s,
 * 100 s timeout, as template.yaml deploys it) on the embedded MariaDB and Redis, DB pool {@code
 * --pool} (2, OtcConfig's default, which the template keeps).
 *
 * <p>The figure: B's close lag (closed_at - expire_at, read from MariaDB) p50/p99/max for its
 * orders due while A's flash sale drains (due before A's last close), against B's orders due after;
 * and A's drain time (its last close minus its first due instant). {@code --scale F} multiplies the
 * flash sale and B's window (0.1: 5,000 orders and 6 s). Prints figures; asserts only the outcomes
 * (every order closed once, with one closed event, none early, no timer left, invariants).
 *
 * <p>Run: {@code ./mvnw -q -pl infra/bench -am verify -DskipTests -Pbench
 * -Dbench.main=FairnessBench -Dbench.args="--scale 1"}
 */
public final class FairnessBench {
  static final String TENANT_A = "flash-a";
  static final String TENANT_B = "steady-b";

  private FairnessBench() {}

  /** The run's options; see the class comment. */
  record Settings(
      int flash,
      int flashSpreadMs,
      int rate,
      int steadySeconds,
      int pool,
      long periodMs,
      long maxDrainMs,
      String label) {
    static Settings parse(String[] args) {
      double scale = Double.parseDouble(stringArg(args, "--scale", "1"));
      return new Settings(
          (int) Math.round(SweepBench.intArg(args, "--flash", 50_000) * scale),
          SweepBench.intArg(args, "--flash-spread-ms", 1_000),
          SweepBench.intArg(args, "--rate", 20),
          (int) Math.max(2, Math.round(SweepBench.intArg(args, "--steady-seconds", 60) * scale)),
          SweepBench.intArg(args, "--pool", 2),
          SweepBench.intArg(args, "--period-seconds", 60) * 1_000L,
          SweepBench.intArg(args, "--max-drain-seconds", 600) * 1_000L,
          stringArg(args, "--label", "run"));
    }

    int steady() {
      return rate * steadySeconds;
    }
  }

  /** One group of orders' close lag; {@code lastCloseMs}: its last close after t0. */
  record Group(
      String label, int orders, long closed, long early, Histogram lagMillis, long lastCloseMs) {}

  /** A run's figures. */
  record Result(
      Settings settings,
      Group flash,
      Group steadyDuring,
      Group steadyAfter,
      Group steadyAll,
      Map<String, Long> events,
      long timersLeft,
      long seedOverrunMs,
      long t0,
      boolean drained,
      List<String> violations,
      List<SweepSchedule.Invocation> invocations) {
    /** A's drain time: its first due instant (t0) to its last close. */
    double flashDrainSeconds() {
      return flash.lastCloseMs() / 1_000.0;
    }

    boolean exactlyOnce() {
      return drained
          && flash.closed() == settings.flash()
          && steadyAll.closed() == settings.steady()
          && flash.early() + steadyAll.early() == 0
          && events.getOrDefault(TENANT_A, 0L) == settings.flash()
          && events.getOrDefault(TENANT_B, 0L) == settings.steady()
          && timersLeft == 0
          && violations.isEmpty();
    }
  }

  public static void main(String[] args) throws Exception {
    Settings settings = Settings.parse(args);
    System.out.println("load before: " + TriggerBench.loadAverage());
    Result r;
    try {
      r = run(settings, EmbeddedServers.get());
    } catch (Exception | Error e) {
      // exec:java reports a failed main only after every non-daemon thread ended, and the
      // embedded MariaDB's process watcher never ends: print it and exit instead of hanging
      e.printStackTrace();
      System.exit(2);
      return;
    }
    System.out.println("load after: " + TriggerBench.loadAverage());
    System.out.print(table(r));
    System.out.println(r.exactlyOnce() ? "exactly once: OK" : "exactly once: FAILED");
    System.exit(r.exactlyOnce() ? 0 : 1);
  }

  static Result run(Settings s, EmbeddedServers servers) throws Exception {
    String schema = servers.createSchema("bench-fair");
    OtcConfig config = config(servers, schema, s.pool());
    // two execution environments (ReservedConcurrentExecutions 2), one schema and key prefix
    try (Components first = new Components(config);
        Components second = new Components(config)) {
      DataSource ds = first.dataSource();
      // orders of a tenant without a row in tenants are refused (V8's foreign keys), and the
      // sweep claims the timer keys of the tenants listed there
      first.tenants().onboard(TENANT_A);
      first.tenants().onboard(TENANT_B);
      Map<String, Long> flash = offsets("fa-", s.flash(), s.flashSpreadMs());
      Map<String, Long> steady = offsets("sb-", s.steady(), s.steadySeconds() * 1_000L);
      TenantSeeder seeder = new TenantSeeder(ds);
      seeder.seed(TENANT_A, "flash-sku", flash);
      seeder.seed(TENANT_B, "steady-sku", steady);
      // As MixedDeadlineBench: t0 after the move and the scheduling, 2 s plus 30 us per order
      // (3.5 s for 51,200), so no deadline passes before its timer exists; an overrun is printed.
      int orders = flash.size() + steady.size();
      long t0 =
          BenchSeeder.dbNow(ds)
              .plusNanos((2_000 + orders * 30L / 1_000) * 1_000_000)
              .toInstant(ZoneOffset.UTC)
              .toEpochMilli();
      BenchSeeder.moveTo(ds, utc(t0));
      schedule(first, TENANT_A, flash, t0);
      schedule(first, TENANT_B, steady, t0);
      long overrun = Math.max(0, System.currentTimeMillis() - t0);
      if (overrun > 0) {
        System.out.printf("seeding %,d orders overran t0 by %d ms%n", orders, overrun);
      }
      long lastDue = t0 + Math.max(s.flashSpreadMs(), s.steadySeconds() * 1_000L);
      List<SweepSchedule.Invocation> invocations;
      boolean drained = false;
      try (SweepSchedule sweeps =
          new SweepSchedule(
              List.of(first, second), s.periodMs(), config.waits().functionTimeout().toMillis())) {
        sweeps.start();
        long until = System.currentTimeMillis() + s.maxDrainMs();
        while (!drained && System.currentTimeMillis() < until) {
          Thread.sleep(100);
          drained = System.currentTimeMillis() > lastDue && unpaid(ds) == 0;
        }
        invocations = sweeps.stop();
      }
      return measure(s, first, t0, overrun, drained, invocations);
    } finally {
      servers.dropSchema(schema);
    }
  }

  static OtcConfig config(EmbeddedServers servers, String schema, int pool) {
    Map<String, String> env = new HashMap<>();
    env.put("OTC_MYSQL_URL", servers.jdbcUrl(schema));
    env.put("OTC_MYSQL_USER", servers.mysqlUser());
    env.put("OTC_MYSQL_PASSWORD", servers.mysqlPassword());
    env.put("OTC_DB_POOL_SIZE", Integer.toString(pool));
    env.put("OTC_REDIS_URI", servers.redisUri());
    env.put("OTC_KEY_PREFIX", servers.newKeyPrefix("bench-fair"));
    // the sweep function's Timeout (template.yaml); the margin stays OtcConfig's default (19 s)
    env.put("OTC_FUNCTION_TIMEOUT_MS", "150000");
    env.put("OTC_MIGRATE_ON_START", "true");
    return OtcConfig.fromEnvironment(env);
  }

  /** {@code n} ids with due offsets spread evenly over {@code spreadMs}. */
  private static Map<String, Long> offsets(String prefix, int n, long spreadMs) {
    Map<String, Long> out = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      out.put(String.format("%s%08d", prefix, i), spreadMs * i / Math.max(1, n));
    }
    return out;
  }

  /** The tenant's payment-timeout timers, 50,000 a call as MixedDeadlineBench schedules them. */
  private static void schedule(Components app, String tenant, Map<String, Long> offsets, long t0) {
    Map<String, Long> chunk = new HashMap<>();
    for (Map.Entry<String, Long> e : offsets.entrySet()) {
      chunk.put(e.getKey(), t0 + e.getValue());
      if (chunk.size() == 50_000) {
        app.timers().scheduleAll(tenant, DeadlineKind.PAYMENT_TIMEOUT, chunk);
        chunk.clear();
      }
    }
    if (!chunk.isEmpty()) {
      app.timers().scheduleAll(tenant, DeadlineKind.PAYMENT_TIMEOUT, chunk);
    }
  }

  private static LocalDateTime utc(long epochMillis) {
    return LocalDateTime.ofEpochSecond(
        epochMillis / 1_000, (int) (epochMillis % 1_000) * 1_000_000, ZoneOffset.UTC);
  }

  private static long unpaid(DataSource ds) throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement("SELECT COUNT(*) AS n FROM orders WHERE status = 'UNPAID'");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getLong("n");
    }
  }

  /** One closed order: its tenant, due and close times (epoch ms) and lag (us). */
  private record Closed(String tenant, long dueMs, long atMs, long lagMicros) {}

  private static Result measure(
      Settings s,
      Components app,
      long t0,
      long overrun,
      boolean drained,
      List<SweepSchedule.Invocation> invocations)
      throws SQLException {
    DataSource ds = app.dataSource();
    List<Closed> closed = new ArrayList<>();
    Map<String, Long> events = new HashMap<>();
    try (Connection c = ds.getConnection()) {
      try (PreparedStatement ps =
              c.prepareStatement(
                  "SELECT tenant_id, TIMESTAMPDIFF(MICROSECOND, expire_at, closed_at) AS lag_us,"
                      + " TIMESTAMPDIFF(MICROSECOND, '1970-01-01', expire_at) DIV 1000 AS due_ms,"
                      + " TIMESTAMPDIFF(MICROSECOND, '1970-01-01', closed_at) DIV 1000 AS at_ms"
                      + " FROM orders WHERE status = 'CLOSED'");
          ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          closed.add(
              new Closed(
                  rs.getString("tenant_id"),
                  rs.getLong("due_ms"),
                  rs.getLong("at_ms"),
                  rs.getLong("lag_us")));
        }
      }
      try (PreparedStatement ps =
              c.prepareStatement(
                  "SELECT tenant_id, COUNT(DISTINCT order_id) AS n FROM outbox"
                      + " WHERE event_type = 'closed' GROUP BY tenant_id");
          ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          events.put(rs.getString("tenant_id"), rs.getLong("n"));
        }
      }
    }
    Group flash = group("A, flash sale", s.flash(), closed, t0, k -> k.tenant().equals(TENANT_A));
    // B's orders due before A's last close are those A's backlog could delay
    long flashEnd = t0 + flash.lastCloseMs();
    List<Closed> steady = closed.stream().filter(k -> k.tenant().equals(TENANT_B)).toList();
    Group during =
        group(
            "B, due while A drains",
            (int) steady.stream().filter(k -> k.dueMs() <= flashEnd).count(),
            steady,
            t0,
            k -> k.dueMs() <= flashEnd);
    Group after =
        group(
            "B, due after",
            (int) steady.stream().filter(k -> k.dueMs() > flashEnd).count(),
            steady,
            t0,
            k -> k.dueMs() > flashEnd);
    Group all = group("B, all", s.steady(), steady, t0, k -> true);
    return new Result(
        s,
        flash,
        during,
        after,
        all,
        events,
        app.timers().size(TENANT_A, DeadlineKind.PAYMENT_TIMEOUT)
            + app.timers().size(TENANT_B, DeadlineKind.PAYMENT_TIMEOUT),
        overrun,
        t0,
        drained,
        new InvariantChecker(ds).violations(),
        invocations);
  }

  private static Group group(
      String label,
      int orders,
      List<Closed> closed,
      long t0,
      java.util.function.Predicate<Closed> in) {
    Histogram lag = new Histogram(3_600_000L, 3);
    long n = 0;
    long early = 0;
    long last = 0;
    for (Closed k : closed) {
      if (!in.test(k)) {
        continue;
      }
      n++;
      early += k.lagMicros() < 0 ? 1 : 0;
      lag.recordValue(Math.min(lag.getHighestTrackableValue(), Math.max(0, k.lagMicros() / 1_000)));
      last = Math.max(last, k.atMs() - t0);
    }
    return new Group(label, orders, n, early, lag, last);
  }

  static String table(Result r) {
    Settings s = r.settings();
    StringBuilder out = new StringBuilder();
    out.append(
        String.format(
            "fairness (%s): tenant A %,d orders due within %d ms, tenant B %d/s for %d s, DB pool"
                + " %d, sweep every %d s%n",
            s.label(),
            s.flash(),
            s.flashSpreadMs(),
            s.rate(),
            s.steadySeconds(),
            s.pool(),
            s.periodMs() / 1_000));
    out.append(
        "| run | orders of | orders | closed | early | lag p50 ms | p99 ms | max ms |"
            + " last close s after t0 |\n");
    out.append("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (Group g : List.of(r.flash(), r.steadyDuring(), r.steadyAfter(), r.steadyAll())) {
      out.append(
          String.format(
              "| %s | %s | %d | %d | %d | %d | %d | %d | %.2f |%n",
              s.label(),
              g.label(),
              g.orders(),
              g.closed(),
              g.early(),
              g.lagMillis().getValueAtPercentile(50),
              g.lagMillis().getValueAtPercentile(99),
              g.lagMillis().getMaxValue(),
              g.lastCloseMs() / 1_000.0));
    }
    out.append(
        String.format(
            "- A's drain: %,d closed %.2f s after their first due instant (%,.0f closes/s);"
                + " closed events A %d, B %d; timers left %d; seeding overran t0 by %d ms;"
                + " drained: %s; invariants: %s%n",
            r.flash().closed(),
            r.flashDrainSeconds(),
            r.flash().closed() / Math.max(0.001, r.flashDrainSeconds()),
            r.events().getOrDefault(TENANT_A, 0L),
            r.events().getOrDefault(TENANT_B, 0L),
            r.timersLeft(),
            r.seedOverrunMs(),
            r.drained() ? "all" : "NOT all",
            r.violations().isEmpty() ? "OK" : "FAILED (" + r.violations().get(0) + ")"));
    for (SweepSchedule.Invocation i : r.invocations()) {
      out.append(
          String.format(
              "- invocation %d (environment %d), started at t0 %+.1f s: %d passes, claimed %d, closed %d, handed off %d, failed batches"
                  + " %d, %d ms%n",
              i.number(),
              i.number() % 2,
              (i.startedMillis() - r.t0()) / 1_000.0,
              i.stats().passes(),
              i.stats().claimed(),
              i.stats().closed(),
              i.stats().handedOff(),
              i.stats().failedBatches(),
              i.stats().durationMillis()));
    }
    return out.toString();
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
