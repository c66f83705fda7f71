package io.ordertimeout.bench;

import io.ordertimeout.mysql.DbTime;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDateTime;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import javax.sql.DataSource;

/**
 * Writes a scenario's orders as placing them would have (order, item, RESERVE ledger row, snapshot,
 * reserved stock; every invariant holds), each with its own deadline. Orders are first written
 * relative to a placeholder base far in the future, then moved to the real base in one UPDATE:
 * seeding 200,000 orders takes tens of seconds, and no deadline may pass before the systems under
 * test have scheduled them.
 */
final class BenchSeeder {
  static final LocalDateTime PLACEHOLDER_BASE = LocalDateTime.of(2090, 1, 1, 0, 0);

  /** Original design: an order's timeout is 15 min after creation; the cron scan relies on it. */
  static final long TIMEOUT_MILLIS = 15 * 60_000;

  private static final int CHUNK = 2_000;

  private BenchSeeder() {}

  /** Stock for every SKU the orders use (demand plus 10 units), then the orders, in one go. */
  static void seed(DataSource ds, List<Scenario.Order> orders) throws SQLException {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      insertStock(c, orders);
      for (int from = 0; from < orders.size(); from += CHUNK) {
        insertChunk(c, orders.subList(from, Math.min(orders.size(), from + CHUNK)));
        c.commit();
      }
      c.setAutoCommit(true);
    }
  }

  private static void insertStock(Connection c, List<Scenario.Order> orders) throws SQLException {
    Map<String, Long> demand = new TreeMap<>();
    orders.forEach(o -> demand.merge(o.skuId(), (long) o.quantity(), Long::sum));
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO stock (tenant_id, sku_id, available, reserved, total) VALUES ('default', ?, ?, ?, ?)")) {
      for (Map.Entry<String, Long> e : demand.entrySet()) {
        ps.setString(1, e.getKey());
        ps.setLong(2, 10);
        ps.setLong(3, e.getValue());
        ps.setLong(4, e.getValue() + 10);
        ps.addBatch();
      }
      ps.executeBatch();
    }
  }

  private static void insertChunk(Connection c, List<Scenario.Order> chunk) throws SQLException {
    try (PreparedStatement o =
            c.prepareStatement(
                "INSERT INTO orders (tenant_id, order_id, user_id, status, amount_fen, request_hash,"
                    + " created_at, expire_at) VALUES ('default', ?, 'bench-user', 'UNPAID', 100,"
                    + " REPEAT('0', 64), ?, ?)");
        PreparedStatement it =
            c.prepareStatement(
                "INSERT INTO order_items (tenant_id, order_id, sku_id, quantity) VALUES ('default', ?, ?, ?)");
        PreparedStatement led =
            c.prepareStatement(
                "INSERT INTO stock_movements (tenant_id, order_id, sku_id, kind, quantity)"
                    + " VALUES ('default', ?, ?, 'RESERVE', ?)");
        PreparedStatement snap =
            c.prepareStatement(
                "INSERT INTO order_snapshots (tenant_id, order_id, snapshot, checksum)"
                    + " VALUES ('default', ?, '{}', REPEAT('0', 64))")) {
      for (Scenario.Order order : chunk) {
        LocalDateTime expireAt = PLACEHOLDER_BASE.plusNanos(order.dueOffsetMillis() * 1_000_000);
        o.setString(1, order.id());
        DbTime.bind(o, 2, expireAt.minusNanos(TIMEOUT_MILLIS * 1_000_000));
        DbTime.bind(o, 3, expireAt);
        o.addBatch();
        for (PreparedStatement ps : new PreparedStatement[] {it, led}) {
          ps.setString(1, order.id());
          ps.setString(2, order.skuId());
          ps.setInt(3, order.quantity());
          ps.addBatch();
        }
        snap.setString(1, order.id());
        snap.addBatch();
      }
      o.executeBatch();
      it.executeBatch();
      led.executeBatch();
      snap.executeBatch();
    }
  }

  /** Moves every deadline (and creation time) from the placeholder base to {@code base}. */
  static void moveTo(DataSource ds, LocalDateTime base) throws SQLException {
    long shiftMicros = java.time.Duration.between(base, PLACEHOLDER_BASE).toNanos() / 1_000;
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "UPDATE orders SET expire_at = DATE_SUB(expire_at, INTERVAL ? MICROSECOND),"
                    + " created_at = DATE_SUB(created_at, INTERVAL ? MICROSECOND)")) {
      ps.setLong(1, shiftMicros);
      ps.setLong(2, shiftMicros);
      ps.executeUpdate();
    }
  }

  /** The database's clock, millisecond precision (UTC sessions). */
  static LocalDateTime dbNow(DataSource ds) throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT NOW(3) AS now");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return DbTime.utc(rs, "now");
    }
  }
}
