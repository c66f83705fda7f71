package io.ordertimeout.local;

import io.ordertimeout.domain.OrderRejected;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.lifecycle.LifecycleSettings;
import io.ordertimeout.lifecycle.Transition;
import io.ordertimeout.lifecycle.Transitions;
import io.ordertimeout.wechat.EnvironmentMerchantDirectory;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The demo's second act: the order's life after payment, with the deadlines scaled to seconds
 * (OTC_RECEIPT_PERIOD / OTC_RECEIPT_EXTENSION / OTC_AFTER_SALE_WINDOW, PT3S / PT2S / PT3S for the
 * demo). Every order the first act left PAID gets a life plan; the mall's calls (ship, confirm,
 * extend, open and resolve an after-sale) go through {@code Components.transitions()}, the executor
 * the order API's lifecycle routes call, because those routes are not on this branch yet; the
 * deadlines (automatic receipt, completion, coupon expiry) are the local stack's own sweep's work.
 * Coupons are issued through {@code Components.coupons()}: some valid for {@link #SHORT_VALIDITY},
 * which the sweep must expire, some for an hour, which must stay AVAILABLE.
 */
final class DemoLife {

  /** What the mall and the user do with one paid order. */
  enum Plan {
    /** shipped; the user confirms receipt {@link #ACT_AFTER} later; completes automatically */
    CONFIRM,
    /** shipped; received automatically at the receipt deadline, then completes automatically */
    AUTO_RECEIVE,
    /** shipped; the user extends the receipt deadline once, then it is received automatically */
    EXTEND,
    /** shipped; confirmed, an after-sale opened and resolved {@link #AFTER_SALE_OPEN} later */
    AFTER_SALE,
    /** never shipped: stays PAID */
    STAY_PAID
  }

  /** One route call as the client saw it: epoch ms sent and answered, and the answer. */
  record Call(long sentMs, long doneMs, String answer) {
    static final String CHANGED = "changed";

    boolean changed() {
      return CHANGED.equals(answer);
    }
  }

  record Order(String orderId, Plan plan) {}

  /**
   * The user's calls come 1 s after shipping (confirm, extend) or receipt (open): 2 s before the 3
   * s receipt period and after-sale window of the demo end, a margin a busy CI machine keeps.
   */
  static final Duration ACT_AFTER = Duration.ofSeconds(1);

  /** How long the after-sale request stays open, by which the completion deadline must move. */
  static final Duration AFTER_SALE_OPEN = Duration.ofSeconds(1);

  /** Short coupons expire by the sweep within the act; the act lasts 3 + 2 + 3 s and more. */
  static final Duration SHORT_VALIDITY = Duration.ofSeconds(2);

  static final int SHORT_COUPONS = 10;
  static final int LONG_COUPONS = 5;

  /**
   * The longest life (ship, extend, received at period + extension, completed a window later) must
   * fit in a demo: 2 minutes of deadlines at most, or the settings are not scaled.
   */
  static final Duration LONGEST_LIFE = Duration.ofMinutes(2);

  /** After the last deadline, how long to wait for the sweep, as the first act waits for closes. */
  static final Duration GRACE = Duration.ofSeconds(15);

  private final LocalStack stack;
  private final String tag;
  private final Transitions transitions;
  private final LifecycleSettings periods;
  private final Map<String, Map<String, Call>> calls = new ConcurrentHashMap<>();
  private final List<String> shortCoupons = new ArrayList<>();
  private final List<String> longCoupons = new ArrayList<>();
  private final ScheduledExecutorService actions = Executors.newScheduledThreadPool(4);
  private final List<Future<?>> pending = java.util.Collections.synchronizedList(new ArrayList<>());

  DemoLife(LocalStack stack, String tag) {
    this.stack = stack;
    this.tag = tag;
    this.transitions = stack.app().transitions();
    this.periods = transitions.settings();
    Duration longest =
        periods.receiptPeriod().plus(periods.receiptExtension()).plus(periods.afterSaleWindow());
    if (longest.compareTo(LONGEST_LIFE) > 0) {
      throw new IllegalArgumentException(
          "the demo's deadlines must be scaled to seconds (e.g. OTC_RECEIPT_PERIOD=PT3S"
              + " OTC_RECEIPT_EXTENSION=PT2S OTC_AFTER_SALE_WINDOW=PT3S); receipt period "
              + periods.receiptPeriod()
              + " + extension "
              + periods.receiptExtension()
              + " + after-sale window "
              + periods.afterSaleWindow()
              + " is over "
              + LONGEST_LIFE);
    }
  }

  LifecycleSettings periods() {
    return periods;
  }

  /** Plans in turn over the paid orders sorted by id, so every plan gets a share of them. */
  static List<Order> plan(List<String> paidOrderIds) {
    Plan[] turn = {
      Plan.CONFIRM,
      Plan.AUTO_RECEIVE,
      Plan.EXTEND,
      Plan.AFTER_SALE,
      Plan.AUTO_RECEIVE,
      Plan.STAY_PAID
    };
    List<Order> orders = new ArrayList<>();
    List<String> sorted = paidOrderIds.stream().sorted().toList();
    for (int i = 0; i < sorted.size(); i++) {
      orders.add(new Order(sorted.get(i), turn[i % turn.length]));
    }
    return orders;
  }

  /**
   * Issues the coupons, ships the planned orders from {@code clients} threads and schedules each
   * user's calls from that order's own shipping time; returns when every call has run.
   */
  void live(List<Order> orders, int clients) {
    Instant now = Instant.now();
    for (int i = 0; i < SHORT_COUPONS; i++) {
      shortCoupons.add(issue(tag + "-short-" + i, i, now.plus(SHORT_VALIDITY)));
    }
    for (int i = 0; i < LONG_COUPONS; i++) {
      longCoupons.add(issue(tag + "-long-" + i, i, now.plus(Duration.ofHours(1))));
    }
    ExecutorService pool = Executors.newFixedThreadPool(clients);
    try {
      List<Future<?>> ships = new ArrayList<>();
      for (Order order : orders) {
        if (order.plan() != Plan.STAY_PAID) {
          ships.add(pool.submit(() -> shipAndPlan(order)));
        }
      }
      for (Future<?> f : ships) {
        f.get();
      }
      while (true) {
        List<Future<?>> snapshot;
        synchronized (pending) {
          snapshot = new ArrayList<>(pending);
        }
        for (Future<?> f : snapshot) {
          f.get();
        }
        synchronized (pending) {
          if (pending.size() == snapshot.size()) {
            break;
          }
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("demo interrupted while shipping", e);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IllegalStateException("demo step failed after payment", e.getCause());
    } finally {
      pool.shutdownNow();
      actions.shutdown();
    }
  }

  private String issue(String couponId, int user, Instant validUntil) {
    stack
        .app()
        .coupons()
        .issue(
            couponId,
            EnvironmentMerchantDirectory.DEFAULT_TENANT,
            DemoCatalog.user(user),
            validUntil);
    return couponId;
  }

  private void shipAndPlan(Order order) {
    Call shipped =
        call(
            order,
            "ship",
            Transition.SHIP,
            Map.of(
                Transition.Param.CARRIER,
                "SF",
                Transition.Param.TRACKING_NO,
                "SF" + order.orderId()));
    if (!shipped.changed()) {
      return;
    }
    long act = ACT_AFTER.toMillis();
    switch (order.plan()) {
      case CONFIRM -> later(act, () -> call(order, "confirm", Transition.CONFIRM_RECEIPT, null));
      case EXTEND -> later(act, () -> call(order, "extend", Transition.EXTEND_RECEIPT, null));
      case AFTER_SALE ->
          later(
              act / 2,
              () -> {
                if (call(order, "confirm", Transition.CONFIRM_RECEIPT, null).changed()) {
                  later(act, () -> openAndResolve(order));
                }
              });
      default -> {}
    }
  }

  private void openAndResolve(Order order) {
    if (call(order, "open", Transition.OPEN_AFTER_SALE, null).changed()) {
      later(
          AFTER_SALE_OPEN.toMillis(),
          () -> call(order, "resolve", Transition.RESOLVE_AFTER_SALE, null));
    }
  }

  private void later(long millis, Runnable step) {
    pending.add(actions.schedule(step, millis, TimeUnit.MILLISECONDS));
  }

  private Call call(Order order, String what, Transition t, Map<Transition.Param, String> inputs) {
    long sent = System.currentTimeMillis();
    String answer;
    try {
      answer =
          transitions
                  .applyRoute(
                      t, TenantIds.DEFAULT, order.orderId(), inputs == null ? Map.of() : inputs)
                  .changed()
              ? Call.CHANGED
              : "unchanged";
    } catch (OrderRejected e) {
      answer = e.code().name();
    }
    Call call = new Call(sent, System.currentTimeMillis(), answer);
    calls.computeIfAbsent(order.orderId(), id -> new ConcurrentHashMap<>()).put(what, call);
    return call;
  }

  /** The latest moment any planned deadline can be due, plus the grace. */
  Instant waitUntil() {
    long lastShip =
        calls.values().stream()
            .map(m -> m.get("ship"))
            .filter(java.util.Objects::nonNull)
            .mapToLong(Call::doneMs)
            .max()
            .orElse(System.currentTimeMillis());
    return Instant.ofEpochMilli(lastShip)
        .plus(periods.receiptPeriod())
        .plus(periods.receiptExtension())
        .plus(periods.afterSaleWindow())
        .plus(AFTER_SALE_OPEN)
        .plus(GRACE);
  }

  Map<String, Map<String, Call>> calls() {
    return calls;
  }

  List<String> shortCoupons() {
    return List.copyOf(shortCoupons);
  }

  List<String> longCoupons() {
    return List.copyOf(longCoupons);
  }

  // ---- the outcome ----

  /** The act's report lines and checks. */
  record Result(List<String> lines, List<DemoReport.Check> checks) {}

  /** True once every planned order reached its planned end state and the short coupons expired. */
  boolean settled(List<Order> orders) {
    Map<String, DemoLifeReport.Row> rows = rows();
    Map<String, DemoLifeReport.CouponRow> coupons = coupons();
    boolean lives =
        orders.stream()
            .allMatch(
                o -> {
                  DemoLifeReport.Row r = rows.get(o.orderId());
                  String end = o.plan() == Plan.STAY_PAID ? "PAID" : "COMPLETED";
                  return r != null && r.status().equals(end);
                });
    return lives
        && shortCoupons.stream()
            .allMatch(id -> coupons.containsKey(id) && coupons.get(id).status().equals("EXPIRED"));
  }

  Result result(
      List<Order> orders, String lockedCoupon, String lockedCouponOrderOutcome, long lagBound) {
    Map<String, DemoLifeReport.Row> rows = rows();
    Map<String, DemoLifeReport.CouponRow> coupons = coupons();
    List<DemoLifeReport.Life> lives =
        orders.stream()
            .map(
                o ->
                    new DemoLifeReport.Life(
                        o, calls.getOrDefault(o.orderId(), Map.of()), rows.get(o.orderId())))
            .toList();
    return new Result(
        DemoLifeReport.lines(lives, coupons, shortCoupons, periods),
        DemoLifeReport.checks(
            lives,
            coupons,
            shortCoupons,
            longCoupons,
            lockedCoupon,
            lockedCouponOrderOutcome,
            periods,
            lagBound));
  }

  private static String ms(String column) {
    return "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', "
        + column
        + ") DIV 1000 AS "
        + column;
  }

  /** This demo's orders (ids start with its tag), with their outbox events per type. */
  private Map<String, DemoLifeReport.Row> rows() {
    Map<String, Map<String, Integer>> events = new java.util.HashMap<>();
    query(
        "SELECT order_id, event_type, COUNT(*) AS n FROM outbox WHERE order_id LIKE ?"
            + " GROUP BY order_id, event_type",
        rs -> {
          events
              .computeIfAbsent(rs.getString("order_id"), id -> new java.util.HashMap<>())
              .put(rs.getString("event_type"), rs.getInt("n"));
        });
    Map<String, DemoLifeReport.Row> rows = new java.util.HashMap<>();
    query(
        "SELECT order_id, status, received_by, after_sales, receipt_extended_at IS NOT NULL AS"
            + " extended, "
            + String.join(
                ", ",
                List.of(
                    ms("shipped_at"),
                    ms("receive_due_at"),
                    ms("received_at"),
                    ms("complete_due_at"),
                    ms("completed_at")))
            + " FROM orders WHERE order_id LIKE ?",
        rs ->
            rows.put(
                rs.getString("order_id"),
                new DemoLifeReport.Row(
                    rs.getString("status"),
                    rs.getString("received_by"),
                    rs.getInt("after_sales"),
                    rs.getBoolean("extended"),
                    millis(rs, "shipped_at"),
                    millis(rs, "receive_due_at"),
                    millis(rs, "received_at"),
                    millis(rs, "complete_due_at"),
                    millis(rs, "completed_at"),
                    events.getOrDefault(rs.getString("order_id"), Map.of()))));
    return rows;
  }

  private Map<String, DemoLifeReport.CouponRow> coupons() {
    Map<String, DemoLifeReport.CouponRow> coupons = new java.util.HashMap<>();
    query(
        "SELECT coupon_id, status, "
            + ms("valid_until")
            + ", "
            + ms("expired_at")
            + " FROM coupons WHERE coupon_id LIKE ?",
        rs ->
            coupons.put(
                rs.getString("coupon_id"),
                new DemoLifeReport.CouponRow(
                    rs.getString("status"), millis(rs, "valid_until"), millis(rs, "expired_at"))));
    return coupons;
  }

  private static Long millis(java.sql.ResultSet rs, String column) throws java.sql.SQLException {
    long value = rs.getLong(column);
    return rs.wasNull() ? null : value;
  }

  private interface RowReader {
    void read(java.sql.ResultSet rs) throws java.sql.SQLException;
  }

  /** Runs {@code sql} with this demo's tag prefix bound to its one LIKE parameter. */
  private void query(String sql, RowReader reader) {
    try (java.sql.Connection c = stack.app().dataSource().getConnection();
        java.sql.PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, tag + "-%");
      try (java.sql.ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          reader.read(rs);
        }
      }
    } catch (java.sql.SQLException e) {
      throw new io.ordertimeout.mysql.DataAccessException(
          "demo report query failed: " + sql, e, false);
    }
  }
}
