package io.ordertimeout.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import javax.sql.DataSource;

/**
 * Pays the scenario's PAID orders before their deadline, in time order. This branch has no paid
 * path in shared/ yet, so the payment is the paid path's database transaction issued as direct SQL
 * that keeps the invariants: lock the UNPAID rows, status PAID, SELL ledger rows, reserved -> sold
 * per SKU, coupons USED; after the commit the system under test is told (this system removes the
 * timers). Orders paid in the same 10 ms window share one transaction.
 */
final class Payer {
  private static final int MAX_BATCH = 200;

  private final DataSource ds;
  private final List<Scenario.Order> toPay;
  private final long baseEpochMillis;
  private final Consumer<List<String>> onPaid;
  private volatile boolean stopped;
  private Thread thread;
  private long paid;
  private long lostToClose;

  Payer(
      DataSource ds,
      List<Scenario.Order> orders,
      long baseEpochMillis,
      Consumer<List<String>> onPaid) {
    this.ds = ds;
    this.toPay =
        orders.stream()
            .filter(o -> o.fate() == Scenario.Fate.PAID)
            .sorted(Comparator.comparingLong(Scenario.Order::payOffsetMillis))
            .toList();
    this.baseEpochMillis = baseEpochMillis;
    this.onPaid = onPaid;
  }

  static String description() {
    return "direct SQL paid path (no paid use case on this branch): SELL ledger, reserved->sold,"
        + " status PAID, coupons USED, timer removed after commit";
  }

  int planned() {
    return toPay.size();
  }

  void start() {
    thread = new Thread(this::loop, "bench-payer");
    thread.start();
  }

  /** Waits until every payment was attempted (or stop()). */
  void join() throws InterruptedException {
    thread.join();
  }

  void stop() throws InterruptedException {
    stopped = true;
    if (thread != null) {
      thread.join();
    }
  }

  long paid() {
    return paid;
  }

  /** Payments that found their order already closed (the closer won the race). */
  long lostToClose() {
    return lostToClose;
  }

  private void loop() {
    int next = 0;
    while (!stopped && next < toPay.size()) {
      long now = System.currentTimeMillis() - baseEpochMillis;
      List<String> due = new ArrayList<>();
      while (next < toPay.size()
          && due.size() < MAX_BATCH
          && toPay.get(next).payOffsetMillis() <= now) {
        due.add(toPay.get(next++).id());
      }
      if (due.isEmpty()) {
        sleep(Math.min(10, toPay.get(next).payOffsetMillis() - now));
        continue;
      }
      List<String> done = payWithRetry(due);
      paid += done.size();
      lostToClose += due.size() - done.size();
      if (!done.isEmpty()) {
        onPaid.accept(done);
      }
    }
  }

  private List<String> payWithRetry(List<String> ids) {
    for (int attempt = 1; ; attempt++) {
      try {
        return pay(ids);
      } catch (SQLException e) {
        if (!"40001".equals(e.getSQLState()) || attempt == 5) {
          throw new IllegalStateException(
              "paying " + ids.size() + " orders (first " + ids.get(0) + ") failed: " + e, e);
        }
      }
    }
  }

  private List<String> pay(List<String> ids) throws SQLException {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      try {
        List<String> unpaid = lockUnpaid(c, ids);
        if (!unpaid.isEmpty()) {
          String in = in(unpaid.size());
          update(
              c,
              "UPDATE orders SET status = 'PAID', paid_at = NOW(3), version = version + 1"
                  + " WHERE tenant_id = 'default' AND status = 'UNPAID' AND order_id IN "
                  + in,
              unpaid);
          update(
              c,
              "INSERT INTO stock_movements (tenant_id, order_id, sku_id, kind, quantity)"
                  + " SELECT tenant_id, order_id, sku_id, 'SELL', quantity FROM order_items"
                  + " WHERE tenant_id = 'default' AND order_id IN "
                  + in,
              unpaid);
          sell(c, unpaid, in);
          update(
              c,
              "UPDATE coupons SET status = 'USED' WHERE tenant_id = 'default' AND status = 'LOCKED' AND locked_by_order IN "
                  + in,
              unpaid);
        }
        c.commit();
        return unpaid;
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      }
    }
  }

  private static List<String> lockUnpaid(Connection c, List<String> ids) throws SQLException {
    List<String> unpaid = new ArrayList<>();
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT order_id FROM orders WHERE tenant_id = 'default' AND order_id IN "
                + in(ids.size())
                + " AND status = 'UNPAID' ORDER BY order_id FOR UPDATE")) {
      bind(ps, ids);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          unpaid.add(rs.getString(1));
        }
      }
    }
    return unpaid;
  }

  /** reserved -> sold, one UPDATE per SKU in SKU order (the lock order of every stock writer). */
  private static void sell(Connection c, List<String> ids, String in) throws SQLException {
    Map<String, Long> perSku = new TreeMap<>();
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT sku_id, SUM(quantity) FROM order_items WHERE tenant_id = 'default'"
                + " AND order_id IN "
                + in
                + " GROUP BY sku_id")) {
      bind(ps, ids);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          perSku.put(rs.getString(1), rs.getLong(2));
        }
      }
    }
    try (PreparedStatement ps =
        c.prepareStatement(
            "UPDATE stock SET reserved = reserved - ?, sold = sold + ?"
                + " WHERE tenant_id = 'default' AND sku_id = ? AND reserved >= ?")) {
      for (Map.Entry<String, Long> e : perSku.entrySet()) {
        ps.setLong(1, e.getValue());
        ps.setLong(2, e.getValue());
        ps.setString(3, e.getKey());
        ps.setLong(4, e.getValue());
        if (ps.executeUpdate() != 1) {
          throw new IllegalStateException(
              "selling " + e.getValue() + " of SKU " + e.getKey() + " found less reserved");
        }
      }
    }
  }

  private static String in(int n) {
    return "(" + "?,".repeat(n - 1) + "?)";
  }

  private static void bind(PreparedStatement ps, List<String> ids) throws SQLException {
    for (int i = 0; i < ids.size(); i++) {
      ps.setString(i + 1, ids.get(i));
    }
  }

  private static void update(Connection c, String sql, List<String> ids) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      bind(ps, ids);
      ps.executeUpdate();
    }
  }

  private void sleep(long millis) {
    try {
      Thread.sleep(Math.max(1, millis));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      stopped = true;
    }
  }
}
