package io.ordertimeout.bench;

import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.wiring.Components;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The original design: a scheduled job every {@code period} selects the overdue unpaid orders
 * ({@code status = 'UNPAID' AND created_at < now - timeout}; with created_at = expire_at - timeout
 * that is {@code expire_at <= NOW(3)}, which the (status, expire_at) index serves) and closes them
 * through the close use case in batches of 500, until none is left. At its best (as a competent
 * user deploys it) one scan reads up to {@code workers} batches and closes them in parallel on
 * {@code workers} threads, as many as DB connections; the next scan starts when they are done.
 */
final class CronScanSystem implements ClosingSystem {
  static final int BATCH = 500;

  private final Components app;
  private final long periodMillis;
  private final String name;
  private final int workers;
  private ExecutorService pool;
  private Thread thread;
  private volatile boolean stopped;
  private final Object sleeper = new Object();

  CronScanSystem(Components app, String name, long periodMillis, int workers) {
    this.app = app;
    this.workers = workers;
    this.name = name;
    this.periodMillis = periodMillis;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public String description() {
    return "cron scan every "
        + periodMillis
        + " ms: SELECT overdue UNPAID LIMIT "
        + BATCH
        + " x "
        + workers
        + ", OrderCloser.close per batch of "
        + BATCH
        + " on "
        + workers
        + " threads";
  }

  @Override
  public long scheduleMicrosPerOrder() {
    return 0;
  }

  @Override
  public void schedule(Map<String, Long> deadlines) {
    // Nothing: the scan finds the orders in MySQL.
  }

  @Override
  public void start() {
    pool = Executors.newFixedThreadPool(workers);
    thread = new Thread(this::loop, "bench-" + name);
    thread.start();
  }

  private void loop() {
    long next = System.currentTimeMillis();
    while (!stopped) {
      try {
        scanOnce();
      } catch (RuntimeException | SQLException e) {
        System.err.println(name + ": scan failed: " + e);
      }
      next += periodMillis;
      sleepUntil(next);
    }
  }

  private void scanOnce() throws SQLException {
    int limit = BATCH * workers;
    while (!stopped) {
      List<String> due = overdue(limit);
      List<Future<?>> closes = new ArrayList<>();
      for (int from = 0; from < due.size(); from += BATCH) {
        List<String> chunk = due.subList(from, Math.min(due.size(), from + BATCH));
        closes.add(
            pool.submit(() -> app.closer().close(TenantIds.DEFAULT, chunk, CloseReason.TIMEOUT)));
      }
      for (Future<?> f : closes) {
        try {
          f.get();
        } catch (ExecutionException e) {
          System.err.println(name + ": close failed: " + e.getCause());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
      if (due.size() < limit) {
        return;
      }
    }
  }

  private List<String> overdue(int limit) throws SQLException {
    List<String> ids = new ArrayList<>(limit);
    try (Connection c = app.dataSource().getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT order_id FROM orders WHERE status = 'UNPAID' AND expire_at <= NOW(3)"
                    + " ORDER BY expire_at LIMIT "
                    + limit);
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        ids.add(rs.getString(1));
      }
    }
    return ids;
  }

  private void sleepUntil(long epochMillis) {
    synchronized (sleeper) {
      long wait;
      while (!stopped && (wait = epochMillis - System.currentTimeMillis()) > 0) {
        try {
          sleeper.wait(wait);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  @Override
  public void onPaid(List<String> orderIds) {
    // Nothing: the scan's status filter skips paid orders.
  }

  @Override
  public void stop() throws InterruptedException {
    stopped = true;
    synchronized (sleeper) {
      sleeper.notifyAll();
    }
    thread.join();
    pool.shutdown();
  }
}
