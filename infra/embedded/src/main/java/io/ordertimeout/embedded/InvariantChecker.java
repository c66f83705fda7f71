package io.ordertimeout.embedded;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * Checks the invariants of docs/concepts/design.md (1-5) against the V1 schema, and those of the
 * order's life after payment (6-10, {@link LifecycleInvariantQueries}) against the V5 outbox and
 * the V7 columns, with plain JDBC.
 *
 * <p>Every check is one set-based query that returns only the offending rows, so a consistent
 * database of 200,000 orders costs a few index-driven scans rather than a round trip per order. All
 * checks run in one read-only REPEATABLE READ transaction: they see one snapshot, so a close
 * committing while the checker runs cannot make stock and ledger look inconsistent with each other.
 */
public final class InvariantChecker {

  /** Opens a connection to the schema under test; the checker closes it. */
  @FunctionalInterface
  public interface ConnectionSource {
    Connection open() throws SQLException;
  }

  /** Counts for a demo report: orders and coupons per status, and every SKU's stock columns. */
  public record Summary(
      Map<String, Long> ordersByStatus, Map<String, Long> couponsByStatus, List<SkuTotals> skus) {
    public Summary {
      ordersByStatus = Map.copyOf(ordersByStatus);
      couponsByStatus = Map.copyOf(couponsByStatus);
      skus = List.copyOf(skus);
    }

    public long orders() {
      return ordersByStatus.values().stream().mapToLong(Long::longValue).sum();
    }

    public long orders(String status) {
      return ordersByStatus.getOrDefault(status, 0L);
    }
  }

  /** One SKU's stock row. */
  public record SkuTotals(String skuId, long available, long reserved, long sold, long total) {}

  private static final int REPORTED_VIOLATIONS = 50;

  private final ConnectionSource connections;
  private final Duration afterSaleWindow;

  public InvariantChecker(DataSource dataSource) {
    this(dataSource::getConnection);
  }

  public InvariantChecker(ConnectionSource connections) {
    this(connections, null);
  }

  private InvariantChecker(ConnectionSource connections, Duration afterSaleWindow) {
    this.connections = connections;
    this.afterSaleWindow = afterSaleWindow;
  }

  /**
   * This checker, knowing the after-sale window the orders were received with: invariant 8 then
   * requires complete_due_at - received_at to cover the window plus the after-sale open time, not
   * only the open time.
   */
  public InvariantChecker withAfterSaleWindow(Duration window) {
    return new InvariantChecker(connections, window);
  }

  /**
   * AVAILABLE coupons still not EXPIRED more than {@code grace} after their valid_until. Separate
   * from {@link #violations()}: such a coupon is only wrong once a sweep ran after its validity
   * ended, which only a caller that drives or watches the sweep knows.
   */
  public List<String> unexpiredCoupons(Duration grace) {
    return inSnapshot(
        "check coupon expiry",
        statement -> {
          List<String> violations = new ArrayList<>();
          collect(statement, LifecycleInvariantQueries.unexpiredCoupons(grace), violations);
          return violations;
        });
  }

  /**
   * Every violation found, each naming the SKU, order or coupon and the numbers involved; empty
   * when all hold.
   */
  public List<String> violations() {
    return inSnapshot(
        "check invariants",
        statement -> {
          List<String> violations = new ArrayList<>();
          for (InvariantQueries.Check check : InvariantQueries.CHECKS) {
            collect(statement, check, violations);
          }
          for (InvariantQueries.Check check : LifecycleInvariantQueries.checks(afterSaleWindow)) {
            collect(statement, check, violations);
          }
          return violations;
        });
  }

  /** Throws an AssertionError listing the first 50 violations and the total count. */
  public void assertHolds() {
    List<String> violations = violations();
    if (violations.isEmpty()) {
      return;
    }
    StringBuilder message =
        new StringBuilder()
            .append(violations.size())
            .append(" invariant violation(s)")
            .append(violations.size() > REPORTED_VIOLATIONS ? ", first " + REPORTED_VIOLATIONS : "")
            .append(':');
    violations.stream().limit(REPORTED_VIOLATIONS).forEach(v -> message.append("\n  - ").append(v));
    throw new AssertionError(message.toString());
  }

  /** Order and coupon counts per status and the stock of every SKU, read in one snapshot. */
  public Summary summary() {
    return inSnapshot(
        "summarise orders and stock",
        statement ->
            new Summary(
                countsBy(statement, "SELECT status, COUNT(*) AS n FROM orders GROUP BY status"),
                countsBy(statement, "SELECT status, COUNT(*) AS n FROM coupons GROUP BY status"),
                skuTotals(statement)));
  }

  private static void collect(Statement statement, InvariantQueries.Check check, List<String> into)
      throws SQLException {
    try (ResultSet rows = statement.executeQuery(check.sql())) {
      while (rows.next()) {
        into.add(check.message().describe(rows));
      }
    } catch (SQLException e) {
      throw new SQLException(
          "invariant check '" + check.name() + "' failed: " + e.getMessage(),
          e.getSQLState(),
          e.getErrorCode(),
          e);
    }
  }

  private static Map<String, Long> countsBy(Statement statement, String sql) throws SQLException {
    Map<String, Long> counts = new LinkedHashMap<>();
    try (ResultSet rows = statement.executeQuery(sql)) {
      while (rows.next()) {
        counts.put(rows.getString("status"), rows.getLong("n"));
      }
    }
    return counts;
  }

  private static List<SkuTotals> skuTotals(Statement statement) throws SQLException {
    List<SkuTotals> skus = new ArrayList<>();
    try (ResultSet rows =
        statement.executeQuery(
            "SELECT tenant_id, sku_id, available, reserved, sold, total FROM stock"
                + " ORDER BY tenant_id, sku_id")) {
      while (rows.next()) {
        skus.add(
            new SkuTotals(
                InvariantQueries.id(rows, "sku_id"),
                rows.getLong("available"),
                rows.getLong("reserved"),
                rows.getLong("sold"),
                rows.getLong("total")));
      }
    }
    return skus;
  }

  @FunctionalInterface
  private interface SnapshotWork<T> {
    T run(Statement statement) throws SQLException;
  }

  /**
   * Runs {@code work} in a read-only REPEATABLE READ transaction, so all its queries see one
   * snapshot.
   */
  private <T> T inSnapshot(String action, SnapshotWork<T> work) {
    try (Connection connection = connections.open()) {
      boolean autoCommit = connection.getAutoCommit();
      int isolation = connection.getTransactionIsolation();
      connection.setAutoCommit(false);
      connection.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
      connection.setReadOnly(true);
      try (Statement statement = connection.createStatement()) {
        return work.run(statement);
      } finally {
        connection.rollback();
        connection.setReadOnly(false);
        connection.setTransactionIsolation(isolation);
        connection.setAutoCommit(autoCommit);
      }
    } catch (SQLException e) {
      throw new IllegalStateException("could not " + action + ": " + e.getMessage(), e);
    }
  }
}
