package io.ordertimeout.embedded;

import io.ordertimeout.embedded.InvariantQueries.Check;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The invariants of an order's life after payment as SQL over the V5 outbox and the V7 lifecycle
 * columns, each returning only offending rows: every transition at most once (6), none before its
 * deadline (7), the after-sale suspension honoured (8), the lifecycle columns consistent with the
 * state (9) and coupons consistent with their validity and orders (10).
 *
 * <p>The outbox is the independent witness here: its row is written in the transition's own
 * transaction, so counting rows per order counts transitions, and its {@code committed_at} times
 * the transition apart from the columns the transition itself computed. Retention deletes outbox
 * rows by age; the count checks assume the rows of the orders checked are still there (the checker
 * runs on test and bench databases, whose outbox is days younger than the retention).
 */
final class LifecycleInvariantQueries {

  /**
   * How much later than its UPDATE an after_sale_resolved row may be stamped: the row's NOW(3) is
   * taken two statements after the UPDATE's (the event columns are read back first), so its
   * committed_at exceeds the time the deadline was moved by by those two round trips, a few ms; 200
   * ms leaves room for a GC pause or a starved core without hiding a suspension that was not
   * honoured (the demo's after-sale stays open for seconds, production's for days).
   */
  static final long RESOLVE_STAMP_SLACK_MS = 200;

  private static final String LIVE =
      "'UNPAID', 'PAID', 'SHIPPED', 'RECEIVED', 'AFTER_SALE', 'COMPLETED'";
  private static final String SHIPPED_ON = "'SHIPPED', 'RECEIVED', 'AFTER_SALE', 'COMPLETED'";
  private static final String RECEIVED_ON = "'RECEIVED', 'AFTER_SALE', 'COMPLETED'";

  /** An epoch-ms value of a UTC DATETIME column, independent of the session's time zone. */
  private static String epochMs(String column) {
    return "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', " + column + ") DIV 1000)";
  }

  private LifecycleInvariantQueries() {}

  /** One lifecycle column: the states in which it must be set, and those in which it may be. */
  private record Column(String name, String requiredIn, String allowedIn) {}

  private static final List<Column> COLUMNS =
      List.of(
          new Column("shipped_at", SHIPPED_ON, SHIPPED_ON),
          new Column("carrier", SHIPPED_ON, SHIPPED_ON),
          new Column("tracking_no", SHIPPED_ON, SHIPPED_ON),
          new Column("receive_due_at", SHIPPED_ON, SHIPPED_ON),
          // one extension is optional, but only a shipped order can have asked for it
          new Column("receipt_extended_at", "", SHIPPED_ON),
          new Column("received_at", RECEIVED_ON, RECEIVED_ON),
          new Column("received_by", RECEIVED_ON, RECEIVED_ON),
          new Column("complete_due_at", RECEIVED_ON, RECEIVED_ON),
          new Column("after_sale_opened_at", "'AFTER_SALE'", "'AFTER_SALE'"),
          new Column("completed_at", "'COMPLETED'", "'COMPLETED'"));

  /** Every lifecycle check; {@code afterSaleWindow} null when the checker does not know it. */
  static List<Check> checks(Duration afterSaleWindow) {
    return List.of(
        atMostOnce(),
        receivedNotEarly(),
        receivedEventNotEarly(),
        completedNotEarly(),
        completedEventNotEarly(),
        completedWithAfterSaleOpen(),
        suspensionHonoured(afterSaleWindow),
        columnsPerState(),
        expiredCoupons());
  }

  private static Check atMostOnce() {
    return new Check(
        "6 each transition at most once",
        """
        SELECT o.tenant_id, o.order_id, o.status, o.after_sales,
               COALESCE(e.shipped, 0) AS shipped, COALESCE(e.extended, 0) AS extended,
               COALESCE(e.received, 0) AS received, COALESCE(e.opened, 0) AS opened,
               COALESCE(e.resolved, 0) AS resolved, COALESCE(e.completed, 0) AS completed
        FROM orders o
        LEFT JOIN (SELECT tenant_id, order_id,
                          SUM(event_type = 'shipped') AS shipped,
                          SUM(event_type = 'receipt_extended') AS extended,
                          SUM(event_type = 'received') AS received,
                          SUM(event_type = 'after_sale_opened') AS opened,
                          SUM(event_type = 'after_sale_resolved') AS resolved,
                          SUM(event_type = 'completed') AS completed
                   FROM outbox
                   WHERE event_type IN ('shipped', 'receipt_extended', 'received',
                                        'after_sale_opened', 'after_sale_resolved', 'completed')
                   GROUP BY tenant_id, order_id) e
          ON e.tenant_id = o.tenant_id AND e.order_id = o.order_id
        WHERE COALESCE(e.shipped, 0) > 1 OR COALESCE(e.extended, 0) > 1
           OR COALESCE(e.received, 0) > 1 OR COALESCE(e.completed, 0) > 1
           OR COALESCE(e.opened, 0) <> o.after_sales
           OR COALESCE(e.resolved, 0) <> COALESCE(e.opened, 0) - IF(o.status = 'AFTER_SALE', 1, 0)
        ORDER BY o.tenant_id, o.order_id""",
        row ->
            String.format(
                "invariant 6: order %s (%s, after_sales %d) has outbox events shipped %d,"
                    + " receipt_extended %d, received %d, after_sale_opened %d,"
                    + " after_sale_resolved %d, completed %d",
                InvariantQueries.id(row, "order_id"),
                row.getString("status"),
                row.getLong("after_sales"),
                row.getLong("shipped"),
                row.getLong("extended"),
                row.getLong("received"),
                row.getLong("opened"),
                row.getLong("resolved"),
                row.getLong("completed")));
  }

  private static Check receivedNotEarly() {
    return new Check(
        "7 never received automatically before the deadline",
        """
        SELECT tenant_id, order_id, status, received_at, receive_due_at FROM orders
        WHERE received_by = 'AUTO' AND received_at < receive_due_at
        ORDER BY tenant_id, order_id""",
        row ->
            String.format(
                "invariant 7: order %s (%s) received AUTO at %s, before its receive_due_at %s",
                InvariantQueries.id(row, "order_id"),
                row.getString("status"),
                row.getString("received_at"),
                row.getString("receive_due_at")));
  }

  private static Check receivedEventNotEarly() {
    return new Check(
        "7 no automatic receipt event before its deadline",
        "SELECT seq, tenant_id, order_id, committed_at, "
            + epochMs("committed_at")
            + " AS committed_ms, CAST(JSON_VALUE(payload, '$.receiveDueAt') AS SIGNED) AS due_ms"
            + " FROM outbox WHERE event_type = 'received'"
            + " AND JSON_VALUE(payload, '$.receivedBy') = 'AUTO'"
            + " AND "
            + epochMs("committed_at")
            + " < CAST(JSON_VALUE(payload, '$.receiveDueAt') AS SIGNED) ORDER BY seq",
        row ->
            String.format(
                "invariant 7: order %s's AUTO received event (seq %d) committed at %d ms, %d ms"
                    + " before its receiveDueAt %d",
                InvariantQueries.id(row, "order_id"),
                row.getLong("seq"),
                row.getLong("committed_ms"),
                row.getLong("due_ms") - row.getLong("committed_ms"),
                row.getLong("due_ms")));
  }

  private static Check completedNotEarly() {
    return new Check(
        "7 never completed before the deadline",
        """
        SELECT tenant_id, order_id, completed_at, complete_due_at FROM orders
        WHERE completed_at < complete_due_at
        ORDER BY tenant_id, order_id""",
        row ->
            String.format(
                "invariant 7: order %s completed at %s, before its complete_due_at %s",
                InvariantQueries.id(row, "order_id"),
                row.getString("completed_at"),
                row.getString("complete_due_at")));
  }

  private static Check completedEventNotEarly() {
    return new Check(
        "7 no completed event before its deadline",
        "SELECT seq, tenant_id, order_id, "
            + epochMs("committed_at")
            + " AS committed_ms, CAST(JSON_VALUE(payload, '$.completeDueAt') AS SIGNED) AS due_ms"
            + " FROM outbox WHERE event_type = 'completed' AND "
            + epochMs("committed_at")
            + " < CAST(JSON_VALUE(payload, '$.completeDueAt') AS SIGNED) ORDER BY seq",
        row ->
            String.format(
                "invariant 7: order %s's completed event (seq %d) committed at %d ms, %d ms before"
                    + " its completeDueAt %d",
                InvariantQueries.id(row, "order_id"),
                row.getLong("seq"),
                row.getLong("committed_ms"),
                row.getLong("due_ms") - row.getLong("committed_ms"),
                row.getLong("due_ms")));
  }

  /** Per order, seq order is commit order (V5): the events before the completed one. */
  private static Check completedWithAfterSaleOpen() {
    return new Check(
        "8 never completed while an after-sale is open",
        """
        SELECT c.tenant_id, c.order_id, c.seq,
               SUM(e.event_type = 'after_sale_opened') AS opened,
               SUM(e.event_type = 'after_sale_resolved') AS resolved
        FROM outbox c
        JOIN outbox e ON e.tenant_id = c.tenant_id AND e.order_id = c.order_id AND e.seq < c.seq
                     AND e.event_type IN ('after_sale_opened', 'after_sale_resolved')
        WHERE c.event_type = 'completed'
        GROUP BY c.tenant_id, c.order_id, c.seq
        HAVING SUM(e.event_type = 'after_sale_opened') <> SUM(e.event_type = 'after_sale_resolved')
        ORDER BY c.tenant_id, c.order_id""",
        row ->
            String.format(
                "invariant 8: order %s completed (seq %d) after %d after-sale openings but %d"
                    + " resolutions",
                InvariantQueries.id(row, "order_id"),
                row.getLong("seq"),
                row.getLong("opened"),
                row.getLong("resolved")));
  }

  /**
   * The completion deadline granted (complete_due_at - received_at) covers the after-sale window
   * plus every closed open interval, timed by the outbox: the n-th after_sale_opened row pairs with
   * the n-th after_sale_resolved row of the order. Without a known window only the open time is
   * required, which still catches a resolution that did not move the deadline once the requests
   * stayed open longer than the window.
   */
  private static Check suspensionHonoured(Duration afterSaleWindow) {
    long windowMs = afterSaleWindow == null ? 0 : afterSaleWindow.toMillis();
    String sql =
        """
        SELECT o.tenant_id, o.order_id, o.status, o.received_at, o.complete_due_at, p.open_ms,
               p.pairs,
               TIMESTAMPDIFF(MICROSECOND, o.received_at, o.complete_due_at) DIV 1000 AS granted_ms
        FROM orders o
        JOIN (SELECT op.tenant_id, op.order_id, COUNT(*) AS pairs,
                     SUM(TIMESTAMPDIFF(MICROSECOND, op.committed_at, rs.committed_at)) DIV 1000 AS open_ms
              FROM (SELECT tenant_id, order_id, committed_at,
                           ROW_NUMBER() OVER (PARTITION BY tenant_id, order_id ORDER BY seq) AS n
                    FROM outbox WHERE event_type = 'after_sale_opened') op
              JOIN (SELECT tenant_id, order_id, committed_at,
                           ROW_NUMBER() OVER (PARTITION BY tenant_id, order_id ORDER BY seq) AS n
                    FROM outbox WHERE event_type = 'after_sale_resolved') rs
                ON rs.tenant_id = op.tenant_id AND rs.order_id = op.order_id AND rs.n = op.n
              GROUP BY op.tenant_id, op.order_id) p
          ON p.tenant_id = o.tenant_id AND p.order_id = o.order_id
        WHERE o.received_at IS NOT NULL AND o.complete_due_at IS NOT NULL
          AND TIMESTAMPDIFF(MICROSECOND, o.received_at, o.complete_due_at) DIV 1000
              < {window} + p.open_ms - {slack}
        ORDER BY o.tenant_id, o.order_id"""
            .replace("{window}", Long.toString(windowMs))
            .replace("{slack}", Long.toString(RESOLVE_STAMP_SLACK_MS));
    String required = afterSaleWindow == null ? "" : "the window " + windowMs + " ms + ";
    return new Check(
        "8 after-sale suspension honoured",
        sql,
        row ->
            String.format(
                "invariant 8: order %s (%s) received at %s is due to complete at %s, %d ms later,"
                    + " but %s%d after-sale request(s) stayed open %d ms",
                InvariantQueries.id(row, "order_id"),
                row.getString("status"),
                row.getString("received_at"),
                row.getString("complete_due_at"),
                row.getLong("granted_ms"),
                required,
                row.getLong("pairs"),
                row.getLong("open_ms")));
  }

  private static Check columnsPerState() {
    List<String> problems = new ArrayList<>();
    for (Column col : COLUMNS) {
      String required =
          col.requiredIn().isEmpty() ? "FALSE" : "status IN (" + col.requiredIn() + ")";
      String allowed = "status IN (" + col.allowedIn() + ")";
      problems.add(
          String.format(
              "IF(%s AND %s IS NULL, '%s missing', IF(NOT %s AND %s IS NOT NULL, '%s set', NULL))",
              required, col.name(), col.name(), allowed, col.name(), col.name()));
    }
    problems.add(
        "IF(status = 'AFTER_SALE' AND after_sales < 1, 'after_sales 0',"
            + " IF(status IN ('UNPAID', 'PAID', 'CLOSED', 'SHIPPED') AND after_sales <> 0,"
            + " CONCAT('after_sales ', after_sales), NULL))");
    String list = "CONCAT_WS(', ', " + String.join(", ", problems) + ")";
    return new Check(
        "9 lifecycle columns per state",
        "SELECT tenant_id, order_id, status, problems FROM (SELECT tenant_id, order_id, status, "
            + list
            + " AS problems FROM orders) p WHERE problems <> '' ORDER BY tenant_id, order_id",
        row ->
            String.format(
                "invariant 9: order %s is %s with %s",
                InvariantQueries.id(row, "order_id"),
                row.getString("status"),
                row.getString("problems")));
  }

  private static Check expiredCoupons() {
    return new Check(
        "10 coupon validity",
        """
        SELECT c.tenant_id, c.coupon_id, c.status, c.valid_until, c.expired_at, c.locked_by_order,
               COALESCE(h.live, 0) AS live
        FROM coupons c
        LEFT JOIN (SELECT tenant_id, coupon_id, COUNT(*) AS live FROM orders
                   WHERE coupon_id IS NOT NULL AND status IN ({live})
                   GROUP BY tenant_id, coupon_id) h
          ON h.tenant_id = c.tenant_id AND h.coupon_id = c.coupon_id
        WHERE (c.status = 'EXPIRED'
               AND (c.valid_until IS NULL OR c.expired_at IS NULL OR c.expired_at < c.valid_until
                    OR c.locked_by_order IS NOT NULL OR COALESCE(h.live, 0) > 0))
           OR (c.status <> 'EXPIRED' AND c.expired_at IS NOT NULL)
        ORDER BY c.tenant_id, c.coupon_id"""
            .replace("{live}", LIVE),
        row ->
            String.format(
                "invariant 10: coupon %s is %s with valid_until %s, expired_at %s,"
                    + " locked_by_order %s, held by %d live order(s)",
                InvariantQueries.id(row, "coupon_id"),
                row.getString("status"),
                row.getString("valid_until"),
                row.getString("expired_at"),
                row.getString("locked_by_order"),
                row.getLong("live")));
  }

  /**
   * AVAILABLE coupons whose validity ended more than {@code grace} ago by the database clock: a
   * violation only once a sweep ran after that, which the checker cannot know, so callers that
   * drove the sweep ask for it ({@link InvariantChecker#unexpiredCoupons}).
   */
  static Check unexpiredCoupons(Duration grace) {
    return new Check(
        "10 coupons expired by the sweep",
        """
        SELECT tenant_id, coupon_id, valid_until,
               TIMESTAMPDIFF(MICROSECOND, valid_until, UTC_TIMESTAMP(3)) DIV 1000 AS overdue_ms
        FROM coupons
        WHERE status = 'AVAILABLE' AND valid_until < UTC_TIMESTAMP(3) - INTERVAL {grace} MICROSECOND
        ORDER BY tenant_id, coupon_id"""
            .replace("{grace}", Long.toString(grace.toNanos() / 1_000)),
        row ->
            String.format(
                "invariant 10: coupon %s is still AVAILABLE %d ms after its valid_until %s"
                    + " (grace %d ms)",
                InvariantQueries.id(row, "coupon_id"),
                row.getLong("overdue_ms"),
                row.getString("valid_until"),
                grace.toMillis()));
  }
}
