package io.ordertimeout.bench;

import io.ordertimeout.mysql.DbTime;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.LocalDateTime;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * One tenant's UNPAID orders as placing writes them (order, item, RESERVE ledger row, snapshot,
 * reserved stock of one SKU; every invariant holds), due relative to {@link
 * BenchSeeder#PLACEHOLDER_BASE}, so no deadline passes while 50,000 rows are written; {@link
 * BenchSeeder#moveTo} then shifts every tenant's deadlines to the real base in one UPDATE. Like
 * BenchSeeder, for a tenant other than {@code default} (onboarded first: V8's foreign keys).
 */
final class TenantSeeder {
  private static final int CHUNK = 2_000;

  private final DataSource ds;

  TenantSeeder(DataSource ds) {
    this.ds = ds;
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
                "INSERT INTO order_items (order_id, sku_id, quantity, tenant_id) VALUES (?, ?, 1, ?)");
        PreparedStatement led =
            c.prepareStatement(
                "INSERT INTO stock_movements (order_id, sku_id, kind, quantity, tenant_id)"
                    + " VALUES (?, ?, 'RESERVE', 1, ?)");
        PreparedStatement snap =
            c.prepareStatement(
                "INSERT INTO order_snapshots (order_id, snapshot, checksum, tenant_id)"
                    + " VALUES (?, '{}', REPEAT('0', 64), ?)")) {
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
          ps.setString(3, tenant);
          ps.addBatch();
        }
        snap.setString(1, row.getKey());
        snap.setString(2, tenant);
        snap.addBatch();
      }
      o.executeBatch();
      it.executeBatch();
      led.executeBatch();
      snap.executeBatch();
    }
  }
}
