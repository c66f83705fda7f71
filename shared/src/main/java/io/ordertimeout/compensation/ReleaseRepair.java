package io.ordertimeout.compensation;

import io.ordertimeout.compensation.LedgerAudit.Missing;
import io.ordertimeout.mysql.Tx;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The one certain ledger repair (see {@link LedgerAudit}): inserts the missing RELEASE rows of
 * CLOSED orders on one SKU and moves their quantity reserved -> available, in one transaction that
 * re-checks every condition under the row locks. It follows the lock order of every writer (package
 * {@code io.ordertimeout.mysql}): the orders, their ledger rows (the RELEASE rows are written
 * before the stock row is locked), then the stock row last, so it never deadlocks with a closer,
 * placement or payment.
 */
final class ReleaseRepair {
  private final Tx tx;

  ReleaseRepair(Tx tx) {
    this.tx = tx;
  }

  /** What the locked re-check found; null refusal means the repair was made. */
  private record Outcome(String refusal, Map<String, Object> evidence) {}

  /** Rolls back the RELEASE rows written before a re-check under the stock lock refused them. */
  private static final class Refused extends RuntimeException {
    private final transient Outcome outcome;

    Refused(Outcome outcome) {
      super(outcome.refusal(), null, false, false);
      this.outcome = outcome;
    }
  }

  void repair(Tally tally, String tenantId, String skuId, List<Missing> missing, Flags flags) {
    Outcome outcome;
    try {
      outcome =
          tx.inTransaction(
              "insert " + missing.size() + " missing RELEASE rows of SKU " + tenantId + "/" + skuId,
              c -> repairLocked(c, tenantId, skuId, missing));
    } catch (Refused refused) {
      outcome = refused.outcome;
    }
    if (outcome.refusal() == null) {
      tally.repaired(LedgerAudit.repairFinding(tenantId, skuId, missing));
      tally.add("ledger_repairs", missing.size());
      return;
    }
    for (Missing m : missing) {
      Map<String, Object> evidence = new LinkedHashMap<>(outcome.evidence());
      evidence.put("skuId", skuId);
      evidence.put("missingReleaseQuantity", m.quantity());
      evidence.put("refused", outcome.refusal());
      flags.raise(tally, LedgerAudit.MISSING_RELEASE, tenantId, m.orderId(), evidence);
    }
  }

  private static Outcome repairLocked(
      Connection c, String tenantId, String skuId, List<Missing> missing) throws SQLException {
    String refusal = recheckOrders(c, tenantId, skuId, missing);
    if (refusal != null) {
      return new Outcome(refusal, Map.of());
    }
    // The orders' own rows before the stock row: the hot row is then held for the demand query
    // (which must see the same reserved quantity as the lock) and one UPDATE only.
    insertReleases(c, tenantId, skuId, missing);
    long[] stock = lockStock(c, tenantId, skuId);
    if (stock == null) {
      throw new Refused(new Outcome("no stock row", Map.of()));
    }
    long demand = LedgerAudit.unpaidDemand(c, tenantId, List.of(skuId)).getOrDefault(skuId, 0L);
    long quantity = missing.stream().mapToLong(Missing::quantity).sum();
    Map<String, Object> evidence = new LinkedHashMap<>();
    evidence.put("available", stock[0]);
    evidence.put("reserved", stock[1]);
    evidence.put("sold", stock[2]);
    evidence.put("total", stock[3]);
    evidence.put("unpaidDemand", demand);
    if (stock[0] + stock[1] + stock[2] != stock[3]) {
      throw new Refused(new Outcome("available + reserved + sold != total", evidence));
    }
    if (stock[1] - demand != quantity) {
      throw new Refused(new Outcome("reserved - demand != " + quantity, evidence));
    }
    moveToAvailable(c, tenantId, skuId, quantity);
    return new Outcome(null, evidence);
  }

  /** Each order still CLOSED, with its RESERVE, without RELEASE or SELL of this SKU. */
  private static String recheckOrders(
      Connection c, String tenantId, String skuId, List<Missing> missing) throws SQLException {
    List<String> ids = new ArrayList<>(missing.stream().map(Missing::orderId).sorted().toList());
    int[] closed = {0};
    // parts in ascending id order: the same lock order as one statement
    Sql.selectIn(
        c,
        "SELECT order_id FROM orders WHERE tenant_id = ? AND status = 'CLOSED'"
            + " AND order_id IN (%s) ORDER BY order_id FOR UPDATE",
        tenantId,
        ids,
        rs -> closed[0]++);
    if (closed[0] != ids.size()) {
      return "an order is no longer CLOSED";
    }
    for (Missing m : missing) {
      Map<String, Integer> rows = movements(c, tenantId, m.orderId(), skuId);
      if (!Integer.valueOf(m.quantity()).equals(rows.get("RESERVE"))
          || rows.containsKey("RELEASE")
          || rows.containsKey("SELL")) {
        return "ledger of order " + m.orderId() + " changed: " + rows;
      }
    }
    return null;
  }

  private static Map<String, Integer> movements(
      Connection c, String tenantId, String orderId, String skuId) throws SQLException {
    Map<String, Integer> rows = new LinkedHashMap<>();
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT kind, quantity FROM stock_movements WHERE tenant_id = ? AND order_id = ?"
                + " AND sku_id = ? FOR UPDATE")) {
      ps.setString(1, tenantId);
      ps.setString(2, orderId);
      ps.setString(3, skuId);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.put(rs.getString("kind"), rs.getInt("quantity"));
        }
      }
    }
    return rows;
  }

  /** available, reserved, sold, total of the locked row; null when there is none. */
  private static long[] lockStock(Connection c, String tenantId, String skuId) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT available, reserved, sold, total FROM stock WHERE tenant_id = ? AND sku_id = ?"
                + " FOR UPDATE")) {
      ps.setString(1, tenantId);
      ps.setString(2, skuId);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next()
            ? new long[] {
              rs.getLong("available"),
              rs.getLong("reserved"),
              rs.getLong("sold"),
              rs.getLong("total")
            }
            : null;
      }
    }
  }

  private static void insertReleases(
      Connection c, String tenantId, String skuId, List<Missing> missing) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO stock_movements (tenant_id, order_id, sku_id, kind, quantity)"
                + " VALUES (?,?,?,'RELEASE',?)")) {
      for (Missing m : missing) {
        ps.setString(1, tenantId);
        ps.setString(2, m.orderId());
        ps.setString(3, skuId);
        ps.setInt(4, m.quantity());
        ps.addBatch();
      }
      ps.executeBatch();
    }
  }

  private static void moveToAvailable(Connection c, String tenantId, String skuId, long quantity)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "UPDATE stock SET available = available + ?, reserved = reserved - ?"
                + " WHERE tenant_id = ? AND sku_id = ? AND reserved >= ?")) {
      ps.setLong(1, quantity);
      ps.setLong(2, quantity);
      ps.setString(3, tenantId);
      ps.setString(4, skuId);
      ps.setLong(5, quantity);
      if (ps.executeUpdate() != 1) {
        throw new IllegalStateException(
            "moving " + quantity + " of SKU " + skuId + " to available found less reserved");
      }
    }
  }
}
