package io.ordertimeout.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * The ceiling: the close path's database writes as raw batched SQL, no Redis and no Java logic.
 * Each of {@code threads} loops: one transaction locks up to {@code batch} due UNPAID orders (SKIP
 * LOCKED, so the threads share the work), closes them with one UPDATE, writes the RELEASE ledger
 * rows with one INSERT ... SELECT, releases stock with one multi-table UPDATE grouped per SKU and
 * unlocks coupons with one UPDATE.
 */
final class RawSqlSystem implements ClosingSystem {
  private final DataSource ds;
  private final int threads;
  private final int batch;
  private final List<Thread> workers = new ArrayList<>();
  private volatile boolean stopped;

  RawSqlSystem(DataSource ds, int threads, int batch) {
    this.ds = ds;
    this.threads = threads;
    this.batch = batch;
  }

  @Override
  public String name() {
    return "raw-sql";
  }

  @Override
  public String description() {
    return "ceiling: raw batched SQL, "
        + threads
        + " threads, batch "
        + batch
        + " (SELECT .. FOR UPDATE SKIP LOCKED, UPDATE orders, INSERT .. SELECT ledger,"
        + " UPDATE stock JOIN per-SKU sums, UPDATE coupons), 1 ms poll";
  }

  @Override
  public long scheduleMicrosPerOrder() {
    return 0;
  }

  @Override
  public void schedule(Map<String, Long> deadlines) {
    // Nothing: the loop finds due orders in MySQL.
  }

  @Override
  public void start() {
    for (int i = 0; i < threads; i++) {
      Thread t = new Thread(this::loop, "bench-raw-sql-" + i);
      workers.add(t);
      t.start();
    }
  }

  private void loop() {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      while (!stopped) {
        int closed;
        try {
          closed = closeBatch(c);
          c.commit();
        } catch (SQLException e) {
          c.rollback();
          if (!"40001".equals(e.getSQLState())) {
            System.err.println("raw-sql: batch failed: " + e);
          }
          continue;
        }
        if (closed == 0) {
          Thread.sleep(1);
        }
      }
    } catch (SQLException e) {
      System.err.println("raw-sql: connection failed: " + e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private int closeBatch(Connection c) throws SQLException {
    List<String> ids = new ArrayList<>(batch);
    try (PreparedStatement ps =
            c.prepareStatement(
                "SELECT order_id FROM orders WHERE status = 'UNPAID' AND expire_at <= NOW(3)"
                    + " ORDER BY expire_at LIMIT "
                    + batch
                    + " FOR UPDATE SKIP LOCKED");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        ids.add(rs.getString(1));
      }
    }
    if (ids.isEmpty()) {
      return 0;
    }
    String in = "(" + "?,".repeat(ids.size() - 1) + "?)";
    update(
        c,
        "UPDATE orders SET status = 'CLOSED', closed_at = NOW(3), close_reason = 'TIMEOUT',"
            + " version = version + 1 WHERE tenant_id = 'default' AND status = 'UNPAID' AND order_id IN "
            + in,
        ids);
    update(
        c,
        "INSERT INTO stock_movements (tenant_id, order_id, sku_id, kind, quantity)"
            + " SELECT tenant_id, order_id, sku_id, 'RELEASE', quantity FROM order_items"
            + " WHERE tenant_id = 'default' AND order_id IN "
            + in,
        ids);
    update(
        c,
        "UPDATE stock s JOIN (SELECT sku_id, SUM(quantity) AS q FROM order_items"
            + " WHERE tenant_id = 'default' AND order_id IN "
            + in
            + " GROUP BY sku_id) r ON s.tenant_id = 'default' AND s.sku_id = r.sku_id"
            + " SET s.available = s.available + r.q, s.reserved = s.reserved - r.q",
        ids);
    update(
        c,
        "UPDATE coupons SET status = 'AVAILABLE', locked_by_order = NULL"
            + " WHERE tenant_id = 'default' AND status = 'LOCKED' AND locked_by_order IN "
            + in,
        ids);
    return ids.size();
  }

  private static void update(Connection c, String sql, List<String> ids) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < ids.size(); i++) {
        ps.setString(i + 1, ids.get(i));
      }
      ps.executeUpdate();
    }
  }

  @Override
  public void onPaid(List<String> orderIds) {
    // Nothing: the status filter skips paid orders.
  }

  @Override
  public void stop() throws InterruptedException {
    stopped = true;
    for (Thread t : workers) {
      t.join();
    }
  }
}
