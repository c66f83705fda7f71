package io.ordertimeout.bench;

import io.ordertimeout.config.OtcConfig;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.sweep.TimeoutSweeper;
import io.ordertimeout.wiring.Components;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import javax.sql.DataSource;
import org.HdrHistogram.Histogram;

/**
 * Deadlines of three kinds due in the same minute, through the real sweep ({@link
 * Components#newSweeper()}) on the embedded MariaDB and Redis: payment timeouts (UNPAID orders
 * closed), receipt confirmations (SHIPPED orders received AUTO) and coupon expiries (AVAILABLE
 * coupons EXPIRED). Payment timeouts and receipts are due evenly over {@code --window-seconds};
 * coupons all at its first instant unless {@code --coupon-spread-seconds} says otherwise (a mall's
 * coupons typically expire at midnight together). Each run gets its own schema and key prefix:
 *
 * <ul>
 *   <li>{@code A}: the payment timeouts alone;
 *   <li>{@code B}: the same payment timeouts with the receipts and the coupon burst.
 * </ul>
 *
 * <p>Per kind, read from MariaDB afterwards: lag (applied time minus due time: {@code closed_at -
 * expire_at}, {@code received_at - receive_due_at}, {@code expired_at - valid_until}) p50/p99/max,
 * and throughput (subjects over the span from the kind's first due time to its last application).
 * The payment-timeout lag of A against B is the figure: each kind has its own claim budget per
 * shard, so the coupon burst should not delay the payment timeouts. It is also shown for the
 * payment timeouts due in the first {@code --head-seconds} (default 5) alone, those due while the
 * burst drains. Prints figures; asserts nothing but the outcomes (each subject transitioned once,
 * no timer left).
 *
 * <p>Run: {@code ./mvnw -q -pl infra/bench -am verify -DskipTests -Pbench
 * -Dbench.main=MixedDeadlineBench -Dbench.args="--payments 20000 --receipts 20000 --coupons 50000"}
 */
public final class MixedDeadlineBench {
  private static final int CHUNK = 1_000;
  private static final DateTimeFormatter LITERAL =
      DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss.SSS");
  private static final String SKU = "mixed-sku";

  private MixedDeadlineBench() {}

  /** The run's options; see the class comment. */
  record Settings(
      int payments,
      int receipts,
      int coupons,
      int windowSeconds,
      int couponSpreadSeconds,
      int headSeconds,
      long maxDrainMs,
      List<String> runs) {
    static Settings parse(String[] args) {
      return new Settings(
          SweepBench.intArg(args, "--payments", 20_000),
          SweepBench.intArg(args, "--receipts", 20_000),
          SweepBench.intArg(args, "--coupons", 50_000),
          SweepBench.intArg(args, "--window-seconds", 60),
          SweepBench.intArg(args, "--coupon-spread-seconds", 0),
          SweepBench.intArg(args, "--head-seconds", 5),
          SweepBench.intArg(args, "--max-drain-seconds", 300) * 1_000L,
          List.of(stringArg(args, "--runs", "A,B").split(",")));
    }

    /** What run {@code name} seeds: A the payment timeouts only, B every kind. */
    Settings forRun(String name) {
      return switch (name) {
        case "A" ->
            new Settings(payments, 0, 0, windowSeconds, 0, headSeconds, maxDrainMs, List.of(name));
        case "B" -> this;
        default -> throw new IllegalArgumentException("unknown run '" + name + "': A, B");
      };
    }
  }

  /** One kind's outcome in one run, read from MariaDB after the drain. */
  record KindResult(
      String kind,
      int seeded,
      long transitioned,
      long events,
      long distinctEvents,
      long early,
      Histogram lagMillis,
      double spanSeconds,
      long timersLeft) {
    double perSecond() {
      return spanSeconds <= 0 ? 0 : transitioned / spanSeconds;
    }

    boolean exactlyOnce(boolean withEvents) {
      return transitioned == seeded
          && early == 0
          && timersLeft == 0
          && (!withEvents || (events == seeded && distinctEvents == seeded));
    }
  }

  /** One run: its kinds (payment, receipt, coupon), how far seeding overran the first due time. */
  record RunResult(
      String name,
      List<KindResult> kinds,
      long completeTimers,
      long seedOverrunMs,
      double drainSeconds,
      boolean drained) {
    KindResult kind(String label) {
      return kinds.stream().filter(k -> k.kind().equals(label)).findFirst().orElseThrow();
    }

    /**
     * Every seeded subject moved on exactly once, with its event, and no timer of its kind left.
     */
    boolean exactlyOnce() {
      return drained
          && kind("payment").exactlyOnce(true)
          && kind("receipt").exactlyOnce(true)
          && kind("coupon").exactlyOnce(false)
          && completeTimers == kind("receipt").seeded();
    }
  }

  public static void main(String[] args) throws Exception {
    Settings settings = Settings.parse(args);
    System.out.println("load before: " + TriggerBench.loadAverage());
    List<RunResult> results = run(settings, EmbeddedServers.get());
    System.out.println("load after: " + TriggerBench.loadAverage());
    System.out.print(table(results));
    boolean ok = results.stream().allMatch(RunResult::exactlyOnce);
    System.out.println(ok ? "exactly once: OK" : "exactly once: FAILED");
    System.exit(ok ? 0 : 1);
  }

  static List<RunResult> run(Settings s, EmbeddedServers servers) throws Exception {
    List<RunResult> results = new ArrayList<>();
    for (String name : s.runs()) {
      RunResult r = runOne(name, s.forRun(name), servers);
      System.out.print(table(List.of(r)));
      results.add(r);
    }
    return results;
  }

  private static RunResult runOne(String name, Settings s, EmbeddedServers servers)
      throws Exception {
    String schema = servers.createSchema("bench-mixed-" + name);
    try (Components app = new Components(config(servers, schema))) {
      DataSource ds = app.dataSource();
      long windowMs = s.windowSeconds() * 1_000L;
      Map<String, Long> payments = offsets("pay-", s.payments(), windowMs);
      Map<String, Long> receipts = offsets("rcv-", s.receipts(), windowMs);
      Map<String, Long> coupons = offsets("cpn-", s.coupons(), s.couponSpreadSeconds() * 1_000L);
      seedRows(ds, payments, receipts, coupons);
      // The first due instant comes after the rows are moved there and the timers scheduled: 2 s
      // plus 30 us per subject (4.7 s for 90,000, enough at load 7), so no deadline passes before
      // its timer exists; an overrun is printed and reported.
      int subjects = payments.size() + receipts.size() + coupons.size();
      long t0 =
          BenchSeeder.dbNow(ds)
              .plusNanos((2_000 + subjects * 30L / 1_000) * 1_000_000)
              .toInstant(ZoneOffset.UTC)
              .toEpochMilli();
      moveTo(ds, t0);
      schedule(app, DeadlineKind.PAYMENT_TIMEOUT, payments, t0);
      schedule(app, DeadlineKind.AUTO_RECEIPT, receipts, t0);
      schedule(app, DeadlineKind.COUPON_EXPIRY, coupons, t0);
      long overrun = Math.max(0, System.currentTimeMillis() - t0);
      if (overrun > 0) {
        System.out.printf(
            "run %s: seeding %,d subjects overran the first due instant by %d ms%n",
            name, subjects, overrun);
      }
      long started = System.nanoTime();
      boolean drained = drain(app, s.maxDrainMs());
      double drainSeconds = (System.nanoTime() - started) / 1e9;
      List<KindResult> kinds =
          List.of(
              measure(
                  ds,
                  app,
                  "payment",
                  payments.size(),
                  "SELECT expire_at AS due, closed_at AS at FROM orders"
                      + " WHERE order_id LIKE 'pay-%' AND status = 'CLOSED'",
                  "closed",
                  DeadlineKind.PAYMENT_TIMEOUT),
              measure(
                  ds,
                  app,
                  "receipt",
                  receipts.size(),
                  "SELECT receive_due_at AS due, received_at AS at FROM orders"
                      + " WHERE order_id LIKE 'rcv-%' AND status = 'RECEIVED'"
                      + " AND received_by = 'AUTO'",
                  "received",
                  DeadlineKind.AUTO_RECEIPT),
              measure(
                  ds,
                  app,
                  "coupon",
                  coupons.size(),
                  "SELECT valid_until AS due, expired_at AS at FROM coupons"
                      + " WHERE status = 'EXPIRED'",
                  null,
                  DeadlineKind.COUPON_EXPIRY),
              // the payment timeouts due while a coupon burst at t0 drains (4.2-5.7 s for 50,000 in
              // the documented runs): where the burst's cost to them shows
              measure(
                  ds,
                  app,
                  "payment, due in first " + s.headSeconds() + " s",
                  (int)
                      payments.values().stream()
                          .filter(at -> at < s.headSeconds() * 1_000L)
                          .count(),
                  "SELECT expire_at AS due, closed_at AS at FROM orders"
                      + " WHERE order_id LIKE 'pay-%' AND status = 'CLOSED' AND expire_at < '"
                      + LITERAL.format(utc(t0 + s.headSeconds() * 1_000L))
                      + "'",
                  null,
                  DeadlineKind.PAYMENT_TIMEOUT));
      return new RunResult(
          name,
          kinds,
          app.timers().size(TenantIds.DEFAULT, DeadlineKind.AUTO_COMPLETE),
          overrun,
          drainSeconds,
          drained);
    } finally {
      servers.dropSchema(schema);
    }
  }

  static OtcConfig config(EmbeddedServers servers, String schema) {
    Map<String, String> env = new HashMap<>();
    env.put("OTC_MYSQL_URL", servers.jdbcUrl(schema));
    env.put("OTC_MYSQL_USER", servers.mysqlUser());
    env.put("OTC_MYSQL_PASSWORD", servers.mysqlPassword());
    env.put("OTC_DB_POOL_SIZE", "4");
    env.put("OTC_REDIS_URI", servers.redisUri());
    env.put("OTC_KEY_PREFIX", servers.newKeyPrefix("bench-mixed"));
    env.put("OTC_INVOCATION_MARGIN_MS", "0");
    env.put("OTC_MIGRATE_ON_START", "true");
    return OtcConfig.fromEnvironment(env);
  }

  /** {@code n} ids with due offsets spread evenly over {@code spreadMs} (0: all at once). */
  private static Map<String, Long> offsets(String prefix, int n, long spreadMs) {
    Map<String, Long> out = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      out.put(String.format("%s%08d", prefix, i), spreadMs * i / Math.max(1, n));
    }
    return out;
  }

  /**
   * The rows, due relative to BenchSeeder's placeholder base far in the future: UNPAID orders as
   * placing wrote them (BenchSeeder), SHIPPED orders paid and shipped 10 days before their receipt
   * deadline, AVAILABLE coupons; multi-row INSERTs of 1,000 rows.
   */
  private static void seedRows(
      DataSource ds,
      Map<String, Long> payments,
      Map<String, Long> receipts,
      Map<String, Long> coupons)
      throws SQLException {
    List<Scenario.Order> unpaid = new ArrayList<>();
    payments.forEach(
        (id, at) -> unpaid.add(new Scenario.Order(id, SKU, 1, at, Scenario.Fate.ABANDONED, 0)));
    BenchSeeder.seed(ds, unpaid);
    insertRows(
        ds,
        "INSERT INTO orders (tenant_id, order_id, user_id, status, amount_fen, request_hash,"
            + " created_at, expire_at, paid_at, transaction_id, shipped_at, carrier, tracking_no,"
            + " receive_due_at) SELECT 'default', v.id, 'bench-user', 'SHIPPED', 100, REPEAT('0', 64),"
            + " v.due - INTERVAL 11 DAY, v.due - INTERVAL 11 DAY + INTERVAL 15 MINUTE,"
            + " v.due - INTERVAL 11 DAY + INTERVAL 1 MINUTE, CONCAT('tx-', v.id),"
            + " v.due - INTERVAL 10 DAY, 'SF', CONCAT('SF', v.id), v.due FROM (%s) v",
        receipts);
    insertRows(
        ds,
        "INSERT INTO coupons (tenant_id, coupon_id, owner_user_id, status, valid_until)"
            + " SELECT 'default', v.id, 'bench-user', 'AVAILABLE', v.due FROM (%s) v",
        coupons);
  }

  /** {@code sql} with its rows as a derived table {@code v(id, due)}, 1,000 rows a statement. */
  private static void insertRows(DataSource ds, String sql, Map<String, Long> dueOffsets)
      throws SQLException {
    List<Map.Entry<String, Long>> rows = new ArrayList<>(dueOffsets.entrySet());
    try (Connection c = ds.getConnection()) {
      for (int from = 0; from < rows.size(); from += CHUNK) {
        List<Map.Entry<String, Long>> part =
            rows.subList(from, Math.min(rows.size(), from + CHUNK));
        String values =
            "SELECT ? AS id, CAST(? AS DATETIME(3)) AS due"
                + " UNION ALL SELECT ?, ?".repeat(part.size() - 1);
        try (PreparedStatement ps = c.prepareStatement(String.format(sql, values))) {
          int p = 1;
          for (Map.Entry<String, Long> row : part) {
            ps.setString(p++, row.getKey());
            ps.setString(
                p++,
                LITERAL.format(BenchSeeder.PLACEHOLDER_BASE.plusNanos(row.getValue() * 1_000_000)));
          }
          ps.executeUpdate();
        }
      }
    }
  }

  /** Moves every due time (and the times derived from it) from the placeholder base to t0. */
  private static void moveTo(DataSource ds, long t0) throws SQLException {
    long shift = Duration.between(utc(t0), BenchSeeder.PLACEHOLDER_BASE).toNanos() / 1_000;
    String by = " - INTERVAL " + shift + " MICROSECOND";
    try (Connection c = ds.getConnection();
        PreparedStatement orders =
            c.prepareStatement(
                "UPDATE orders SET created_at = created_at"
                    + by
                    + ", expire_at = expire_at"
                    + by
                    + ", paid_at = paid_at"
                    + by
                    + ", shipped_at = shipped_at"
                    + by
                    + ", receive_due_at = receive_due_at"
                    + by);
        PreparedStatement coupons =
            c.prepareStatement("UPDATE coupons SET valid_until = valid_until" + by)) {
      orders.executeUpdate();
      coupons.executeUpdate();
    }
  }

  private static LocalDateTime utc(long epochMillis) {
    return LocalDateTime.ofEpochSecond(
        epochMillis / 1_000, (int) (epochMillis % 1_000) * 1_000_000, ZoneOffset.UTC);
  }

  private static void schedule(
      Components app, DeadlineKind kind, Map<String, Long> dueOffsets, long t0) {
    Map<String, Long> chunk = new HashMap<>();
    for (Map.Entry<String, Long> e : dueOffsets.entrySet()) {
      chunk.put(e.getKey(), t0 + e.getValue());
      if (chunk.size() == 50_000) {
        app.timers().scheduleAll(TenantIds.DEFAULT, kind, chunk);
        chunk.clear();
      }
    }
    if (!chunk.isEmpty()) {
      app.timers().scheduleAll(TenantIds.DEFAULT, kind, chunk);
    }
  }

  /** One sweep, as the sweep function runs it, until no subject is left to move on. */
  private static boolean drain(Components app, long maxDrainMs) throws Exception {
    TimeoutSweeper sweeper = app.newSweeper();
    long until = System.currentTimeMillis() + maxDrainMs;
    CompletableFuture<?> run =
        CompletableFuture.supplyAsync(() -> sweeper.run(() -> until - System.currentTimeMillis()));
    boolean drained = false;
    while (!drained && System.currentTimeMillis() < until) {
      Thread.sleep(100);
      drained = pending(app.dataSource()) == 0;
    }
    sweeper.terminate();
    run.get();
    return drained;
  }

  private static long pending(DataSource ds) throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT (SELECT COUNT(*) FROM orders WHERE status IN ('UNPAID', 'SHIPPED'))"
                    + " + (SELECT COUNT(*) FROM coupons WHERE status = 'AVAILABLE') AS n");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getLong("n");
    }
  }

  private static KindResult measure(
      DataSource ds,
      Components app,
      String label,
      int seeded,
      String dueAndAt,
      String eventType,
      DeadlineKind kind)
      throws SQLException {
    Histogram lag = new Histogram(3_600_000L, 3);
    long transitioned = 0;
    long early = 0;
    long firstDue = Long.MAX_VALUE;
    long lastAt = Long.MIN_VALUE;
    // -1: not counted (coupon expiries write no outbox event; the head row shares the payments')
    long events = -1;
    long distinct = -1;
    try (Connection c = ds.getConnection()) {
      try (PreparedStatement ps =
              c.prepareStatement(
                  "SELECT TIMESTAMPDIFF(MICROSECOND, due, at) AS lag_us,"
                      + " TIMESTAMPDIFF(MICROSECOND, '1970-01-01', due) DIV 1000 AS due_ms,"
                      + " TIMESTAMPDIFF(MICROSECOND, '1970-01-01', at) DIV 1000 AS at_ms FROM ("
                      + dueAndAt
                      + ") t");
          ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          transitioned++;
          long lagUs = rs.getLong("lag_us");
          if (lagUs < 0) {
            early++;
          }
          lag.recordValue(Math.min(lag.getHighestTrackableValue(), Math.max(0, lagUs / 1_000)));
          firstDue = Math.min(firstDue, rs.getLong("due_ms"));
          lastAt = Math.max(lastAt, rs.getLong("at_ms"));
        }
      }
      if (eventType != null) {
        try (PreparedStatement ps =
            c.prepareStatement(
                "SELECT COUNT(*) AS n, COUNT(DISTINCT order_id) AS d FROM outbox"
                    + " WHERE event_type = ?")) {
          ps.setString(1, eventType);
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            events = rs.getLong("n");
            distinct = rs.getLong("d");
          }
        }
      }
    }
    double span = transitioned == 0 ? 0 : Math.max(1, lastAt - firstDue) / 1_000.0;
    return new KindResult(
        label,
        seeded,
        transitioned,
        events,
        distinct,
        early,
        lag,
        span,
        app.timers().size(TenantIds.DEFAULT, kind));
  }

  static String table(List<RunResult> results) {
    StringBuilder out = new StringBuilder();
    out.append(
        "| run | kind | seeded | transitioned | events | early | timers left | lag p50 ms |"
            + " p99 ms | max ms | span s | per s |\n");
    out.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (RunResult r : results) {
      for (KindResult k : r.kinds()) {
        if (k.seeded() == 0) {
          continue;
        }
        out.append(
            String.format(
                "| %s | %s | %d | %d | %s | %d | %d | %d | %d | %d | %.2f | %,.0f |%n",
                r.name(),
                k.kind(),
                k.seeded(),
                k.transitioned(),
                k.events() < 0 ? "-" : Long.toString(k.events()),
                k.early(),
                k.timersLeft(),
                k.lagMillis().getValueAtPercentile(50),
                k.lagMillis().getValueAtPercentile(99),
                k.lagMillis().getMaxValue(),
                k.spanSeconds(),
                k.perSecond()));
      }
      out.append(
          String.format(
              "- run %s: drained %s in %.2f s after the timers were scheduled, seeding overran the"
                  + " first due instant by %d ms, %d completion timers scheduled by the receipts%n",
              r.name(),
              r.drained() ? "all" : "NOT all",
              r.drainSeconds(),
              r.seedOverrunMs(),
              r.completeTimers()));
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
