package io.ordertimeout.bench;

import io.ordertimeout.mysql.DbTime;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDateTime;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.sql.DataSource;

/**
 * One tenant's UNPAID orders as placing writes them (order, item, RESERVE ledger row, snapshot,
 * reserved stock of one SKU; every invariant holds), due relative to {@link
 * BenchSeeder#PLACEHOLDER_BASE}, so no deadline passes while 50,000 rows are written; {@link
 * BenchSeeder#moveTo} then shifts every tenant's deadlines to the real base in one UPDATE. Like
 * BenchSeeder, with the tenant written into each table that has a {@code tenant_id} column.
 */
final class TenantSeeder {
  private static final int CHUNK = 2_000;

  private final DataSource ds;

  /** The tables with a tenant_id column, read once from the schema. */
  private final Set<String> tenantTables;

  TenantSeeder(DataSource ds) throws SQLException {
    this.ds = ds;
    this.tenantTables = tenantTables(ds);
  }

  /** {@code dueOffsets}: order id to due offset in ms from the base; one unit of {@code sku}. */
  void seed(String tenant, String sku, Map<String, Long> dueOffsets) throws SQLException {
    List<Map.Entry<String, Long>> rows = List.copyOf(dueOffsets.entrySet());
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      try (PreparedStatement ps =
          c.prepareStatement(
              "INSERT INTO stock (sku_id, tenant_id, available, reserved, total)"
                  + " VALUES (?, ?, 10, ?, ?)")) {
        ps.setString(1, sku);
        ps.setString(2, tenant);
        ps.setLong(3, rows.size());
        ps.setLong(4, rows.size() + 10L);
        ps.executeUpdate();
      }
      for (int from = 0; from < rows.size(); from += CHUNK) {
        insertChunk(c, tenant, sku, rows.subList(from, Math.min(rows.size(), from + CHUNK)));
        c.commit();
      }
      c.setAutoCommit(true);
    }
  }

  private void insertChunk(
      Connection c, String tenant, String sku, List<Map.Entry<String, Long>> chunk)
      throws SQLException {
    try (PreparedStatement o =
            c.prepareStatement(
                "INSERT INTO orders (order_id, tenant_id, user_id, status, amount_fen,"
                    + " request_hash, created_at, expire_at) VALUES (?, ?, 'bench-user', 'UNPAID',"
                    + " 100, REPEAT('0', 64), ?, ?)");
        PreparedStatement it =
            c.prepareStatement(
                "INSERT INTO order_items (order_id, sku_id, quantity"
                    + tenantColumn("order_items")
                    + ") VALUES (?, ?, 1"
                    + tenantValue("order_items")
                    + ")");
        PreparedStatement led =
            c.prepareStatement(
                "INSERT INTO stock_movements (order_id, sku_id, kind, quantity"
                    + tenantColumn("stock_movements")
                    + ") VALUES (?, ?, 'RESERVE', 1"
                    + tenantValue("stock_movements")
                    + ")");
        PreparedStatement snap =
            c.prepareStatement(
                "INSERT INTO order_snapshots (order_id, snapshot, checksum"
                    + tenantColumn("order_snapshots")
                    + ") VALUES (?, '{}', REPEAT('0', 64)"
                    + tenantValue("order_snapshots")
                    + ")")) {
      for (Map.Entry<String, Long> row : chunk) {
        LocalDateTime expireAt = BenchSeeder.PLACEHOLDER_BASE.plusNanos(row.getValue() * 1_000_000);
        o.setString(1, row.getKey());
        o.setString(2, tenant);
        DbTime.bind(o, 3, expireAt.minusNanos(BenchSeeder.TIMEOUT_MILLIS * 1_000_000));
        DbTime.bind(o, 4, expireAt);
        o.addBatch();
        for (PreparedStatement ps : new PreparedStatement[] {it, led}) {
          ps.setString(1, row.getKey());
          ps.setString(2, sku);
          if (tenantTables.contains(ps == it ? "order_items" : "stock_movements")) {
            ps.setString(3, tenant);
          }
          ps.addBatch();
        }
        snap.setString(1, row.getKey());
        if (tenantTables.contains("order_snapshots")) {
          snap.setString(2, tenant);
        }
        snap.addBatch();
      }
      o.executeBatch();
      it.executeBatch();
      led.executeBatch();
      snap.executeBatch();
    }
  }

  private String tenantColumn(String table) {
    return tenantTables.contains(table) ? ", tenant_id" : "";
  }

  private String tenantValue(String table) {
    return tenantTables.contains(table) ? ", ?" : "";
  }

  private static Set<String> tenantTables(DataSource ds) throws SQLException {
    Set<String> out = new HashSet<>();
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT table_name AS t FROM information_schema.columns"
                    + " WHERE table_schema = DATABASE() AND column_name = 'tenant_id'");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        out.add(rs.getString("t").toLowerCase(java.util.Locale.ROOT));
      }
    }
    return out;
  }
}
