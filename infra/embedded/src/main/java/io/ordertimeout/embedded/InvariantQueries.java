package io.ordertimeout.embedded;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;

/**
 * The invariant checks as SQL over the V1 schema, each returning only offending rows, and how to
 * word them.
 *
 * <p>Every identity starts with the tenant (schema V8): joins and groups match tenant_id as well as
 * the ids, since two tenants may have the same order, SKU or coupon id.
 *
 * <p>Ledger checks join {@code stock_movements} three times on its UNIQUE (tenant_id, order_id,
 * sku_id, kind) key: one eq_ref lookup per item and kind instead of grouping the whole ledger.
 * "Exactly one" then means "present", and the duplicates check below still catches a second row
 * should that key ever be dropped.
 *
 * <p>Scans follow primary keys and ORDER BY matches them, so no check sorts a whole table.
 * STRAIGHT_JOIN pins two join orders the optimizer got wrong on 200,000 orders / 400,000 items
 * (MariaDB 11.4): unpaid quantities are summed from the UNPAID index range (a third of the orders)
 * instead of per SKU over all items (1.6 s -> 0.4 s), and the ledger walks order_items in key order
 * instead of sorting. All checks together take about 4-5 s on 200,000 orders on a 2-core machine,
 * most of it the 1.6 million ledger lookups.
 */
final class InvariantQueries {

  @FunctionalInterface
  interface Message {
    String describe(ResultSet row) throws SQLException;
  }

  record Check(String name, String sql, Message message) {}

  private InvariantQueries() {}

  static final List<Check> CHECKS =
      List.of(
          new Check(
              "1 stock arithmetic",
              """
          SELECT tenant_id, sku_id, available, reserved, sold, total FROM stock
          WHERE available + reserved + sold <> total OR available < 0 OR reserved < 0 OR sold < 0
          ORDER BY tenant_id, sku_id""",
              row ->
                  String.format(
                      "invariant 1: SKU %s available %d + reserved %d + sold %d = %d, total is %d",
                      id(row, "sku_id"),
                      row.getLong("available"),
                      row.getLong("reserved"),
                      row.getLong("sold"),
                      row.getLong("available") + row.getLong("reserved") + row.getLong("sold"),
                      row.getLong("total"))),
          new Check(
              "2 reserved equals unpaid items",
              """
          SELECT s.tenant_id, s.sku_id, s.reserved, COALESCE(u.unpaid, 0) AS unpaid
          FROM stock s
          LEFT JOIN (SELECT i.tenant_id, i.sku_id, SUM(i.quantity) AS unpaid
                     FROM orders o STRAIGHT_JOIN order_items i
                       ON i.tenant_id = o.tenant_id AND i.order_id = o.order_id
                     WHERE o.status = 'UNPAID' GROUP BY i.tenant_id, i.sku_id) u
            ON u.tenant_id = s.tenant_id AND u.sku_id = s.sku_id
          WHERE s.reserved <> COALESCE(u.unpaid, 0)
          ORDER BY s.tenant_id, s.sku_id""",
              row ->
                  String.format(
                      "invariant 2: SKU %s reserved %d but UNPAID orders hold %d",
                      id(row, "sku_id"), row.getLong("reserved"), row.getLong("unpaid"))),
          new Check(
              "2 items have stock rows",
              """
          SELECT i.tenant_id, i.order_id, i.sku_id, i.quantity
          FROM order_items i LEFT JOIN stock s ON s.tenant_id = i.tenant_id AND s.sku_id = i.sku_id
          WHERE s.sku_id IS NULL
          ORDER BY i.tenant_id, i.order_id, i.sku_id""",
              row ->
                  String.format(
                      "invariant 2: order %s item SKU %s (quantity %d) has no stock row",
                      id(row, "order_id"), id(row, "sku_id"), row.getLong("quantity"))),
          new Check(
              "3 status and timestamps",
              """
          SELECT tenant_id, order_id, status, paid_at, closed_at, close_reason FROM orders
          WHERE status NOT IN ('UNPAID', 'PAID', 'SHIPPED', 'RECEIVED', 'AFTER_SALE', 'COMPLETED', 'CLOSED')
             OR (status = 'UNPAID' AND (paid_at IS NOT NULL OR closed_at IS NOT NULL OR close_reason IS NOT NULL))
             OR (status IN ('PAID', 'SHIPPED', 'RECEIVED', 'AFTER_SALE', 'COMPLETED') AND (paid_at IS NULL OR closed_at IS NOT NULL OR close_reason IS NOT NULL))
             OR (status = 'CLOSED' AND (closed_at IS NULL OR close_reason IS NULL))
          ORDER BY tenant_id, order_id""",
              row ->
                  String.format(
                      "invariant 3: order %s is %s with paid_at %s, closed_at %s, close_reason %s",
                      id(row, "order_id"),
                      row.getString("status"),
                      row.getString("paid_at"),
                      row.getString("closed_at"),
                      row.getString("close_reason"))),
          new Check(
              "3 ledger per item",
              """
          SELECT i.tenant_id, i.order_id, i.sku_id, i.quantity, o.status,
                 r.quantity AS reserve_qty, rl.quantity AS release_qty, sl.quantity AS sell_qty
          FROM order_items i
          STRAIGHT_JOIN orders o ON o.tenant_id = i.tenant_id AND o.order_id = i.order_id
          LEFT JOIN stock_movements r ON r.tenant_id = i.tenant_id
                 AND r.order_id = i.order_id AND r.sku_id = i.sku_id AND r.kind = 'RESERVE'
          LEFT JOIN stock_movements rl ON rl.tenant_id = i.tenant_id
                 AND rl.order_id = i.order_id AND rl.sku_id = i.sku_id AND rl.kind = 'RELEASE'
          LEFT JOIN stock_movements sl ON sl.tenant_id = i.tenant_id
                 AND sl.order_id = i.order_id AND sl.sku_id = i.sku_id AND sl.kind = 'SELL'
          WHERE NOT (r.quantity <=> i.quantity AND CASE
                       WHEN o.status = 'UNPAID' THEN rl.quantity IS NULL AND sl.quantity IS NULL
                       WHEN o.status IN ('PAID', 'SHIPPED', 'RECEIVED', 'AFTER_SALE', 'COMPLETED') THEN sl.quantity <=> i.quantity AND rl.quantity IS NULL
                       WHEN o.status = 'CLOSED' THEN rl.quantity <=> i.quantity AND sl.quantity IS NULL
                       ELSE TRUE END)
          ORDER BY i.tenant_id, i.order_id, i.sku_id""",
              row ->
                  String.format(
                      "invariant 3: order %s (%s) SKU %s quantity %d has RESERVE %s, RELEASE %s, SELL %s",
                      id(row, "order_id"),
                      row.getString("status"),
                      id(row, "sku_id"),
                      row.getLong("quantity"),
                      qty(row, "reserve_qty"),
                      qty(row, "release_qty"),
                      qty(row, "sell_qty"))),
          new Check(
              "3 no duplicate movements",
              """
          SELECT tenant_id, order_id, sku_id, kind, COUNT(*) AS n FROM stock_movements
          GROUP BY tenant_id, order_id, sku_id, kind HAVING COUNT(*) > 1
          ORDER BY tenant_id, order_id, sku_id, kind""",
              row ->
                  String.format(
                      "invariant 3: order %s SKU %s has %d %s movements",
                      id(row, "order_id"),
                      id(row, "sku_id"),
                      row.getLong("n"),
                      row.getString("kind"))),
          new Check(
              "3 movements belong to items",
              """
          SELECT m.tenant_id, m.order_id, m.sku_id, m.kind, m.quantity
          FROM stock_movements m
          LEFT JOIN order_items i
            ON i.tenant_id = m.tenant_id AND i.order_id = m.order_id AND i.sku_id = m.sku_id
          WHERE i.order_id IS NULL
          ORDER BY m.movement_id""",
              row ->
                  String.format(
                      "invariant 3: %s movement of %d for order %s SKU %s matches no order item",
                      row.getString("kind"),
                      row.getLong("quantity"),
                      id(row, "order_id"),
                      id(row, "sku_id"))),
          new Check(
              "4 never closed before deadline",
              """
          SELECT tenant_id, order_id, expire_at, closed_at FROM orders
          WHERE close_reason = 'TIMEOUT' AND closed_at < expire_at
          ORDER BY tenant_id, order_id""",
              row ->
                  String.format(
                      "invariant 4: order %s closed by TIMEOUT at %s, before its expire_at %s",
                      id(row, "order_id"), row.getString("closed_at"), row.getString("expire_at"))),

          // A CLOSED order's coupon may already be held by a later order of the same user: that is
          // fine as long as
          // the later order is UNPAID or PAID (its own row is checked) and the coupon no longer
          // names this order.
          new Check(
              "5 order coupon state",
              """
          SELECT o.tenant_id, o.order_id, o.status, o.coupon_id, c.coupon_id AS found_coupon,
                 c.status AS coupon_status, c.locked_by_order, COALESCE(h.live, 0) AS live_orders
          FROM orders o
          LEFT JOIN coupons c ON c.tenant_id = o.tenant_id AND c.coupon_id = o.coupon_id
          LEFT JOIN (SELECT tenant_id, coupon_id, COUNT(*) AS live FROM orders
                     WHERE coupon_id IS NOT NULL AND status IN ('UNPAID', 'PAID', 'SHIPPED', 'RECEIVED', 'AFTER_SALE', 'COMPLETED')
                     GROUP BY tenant_id, coupon_id) h
            ON h.tenant_id = o.tenant_id AND h.coupon_id = o.coupon_id
          WHERE o.coupon_id IS NOT NULL AND NOT (c.coupon_id IS NOT NULL AND CASE
                  WHEN o.status = 'UNPAID' THEN c.status = 'LOCKED' AND c.locked_by_order <=> o.order_id
                  WHEN o.status IN ('PAID', 'SHIPPED', 'RECEIVED', 'AFTER_SALE', 'COMPLETED') THEN c.status = 'USED' AND (c.locked_by_order IS NULL OR c.locked_by_order = o.order_id)
                  WHEN o.status = 'CLOSED' THEN (c.status IN ('AVAILABLE', 'EXPIRED') AND c.locked_by_order IS NULL)
                                  OR (COALESCE(h.live, 0) > 0 AND NOT (c.locked_by_order <=> o.order_id))
                  ELSE TRUE END)
          ORDER BY o.tenant_id, o.order_id""",
              row ->
                  row.getString("found_coupon") == null
                      ? String.format(
                          "invariant 5: order %s (%s) names coupon %s, which does not exist",
                          id(row, "order_id"), row.getString("status"), id(row, "coupon_id"))
                      : String.format(
                          "invariant 5: order %s (%s) has coupon %s %s, locked_by_order %s (%d UNPAID/PAID orders hold it)",
                          id(row, "order_id"),
                          row.getString("status"),
                          id(row, "coupon_id"),
                          row.getString("coupon_status"),
                          row.getString("locked_by_order"),
                          row.getLong("live_orders"))),
          new Check(
              "5 coupon held once",
              """
          SELECT tenant_id, coupon_id, COUNT(*) AS live FROM orders
          WHERE coupon_id IS NOT NULL AND status IN ('UNPAID', 'PAID', 'SHIPPED', 'RECEIVED', 'AFTER_SALE', 'COMPLETED')
          GROUP BY tenant_id, coupon_id HAVING COUNT(*) > 1
          ORDER BY tenant_id, coupon_id""",
              row ->
                  String.format(
                      "invariant 5: coupon %s is held by %d UNPAID/PAID orders",
                      id(row, "coupon_id"), row.getLong("live"))),
          new Check(
              "5 coupon lock owner",
              """
          SELECT c.tenant_id, c.coupon_id, c.status, c.locked_by_order, o.order_id AS owner,
                 o.status AS owner_status, o.coupon_id AS owner_coupon
          FROM coupons c
          LEFT JOIN orders o ON o.tenant_id = c.tenant_id AND o.order_id = c.locked_by_order
          WHERE (c.status = 'LOCKED'
                 AND (o.order_id IS NULL OR o.status <> 'UNPAID' OR NOT (o.coupon_id <=> c.coupon_id)))
             OR (c.status = 'AVAILABLE' AND c.locked_by_order IS NOT NULL)
          ORDER BY c.tenant_id, c.coupon_id""",
              row ->
                  String.format(
                      "invariant 5: coupon %s is %s, locked_by_order %s, but that order %s",
                      id(row, "coupon_id"),
                      row.getString("status"),
                      row.getString("locked_by_order"),
                      row.getString("owner") == null
                          ? "does not exist"
                          : "is "
                              + row.getString("owner_status")
                              + " with coupon "
                              + row.getString("owner_coupon"))));

  /**
   * An id as the messages name it: {@code tenant/id}, or the bare id for the default tenant (the
   * only tenant before tenants were part of the keys, so its messages read as they always did).
   */
  static String id(ResultSet row, String column) throws SQLException {
    String tenant = row.getString("tenant_id");
    String id = row.getString(column);
    return id == null || "default".equals(tenant) ? id : tenant + "/" + id;
  }

  private static String qty(ResultSet row, String column) throws SQLException {
    long value = row.getLong(column);
    return row.wasNull() ? "none" : Long.toString(value);
  }
}
