package io.ordertimeout.bench;

import io.ordertimeout.embedded.InvariantChecker;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import javax.sql.DataSource;
import org.HdrHistogram.Histogram;

/**
 * The end state of a busy-API run (wrk's busy scenario, infra/load's open-loop steps), read from
 * the MariaDB of the running stack once the last order's deadline has passed: how many of the run's
 * orders were placed, paid and closed, the close lag of the TIMEOUT closes ({@code closed_at -
 * expire_at}), and what is wrong. Every order must have ended CLOSED or PAID; an order WeChat took
 * the money for must be PAID and no other may be; and the invariants of docs/concepts/design.md
 * (each RESERVE settled by exactly one RELEASE or SELL, stock totals, coupons) must hold over the
 * whole schema ({@link InvariantChecker}).
 */
public final class BusyCheck {

  /** What the check found; {@link #ok()} when nothing is wrong. */
  public record Result(
      long placed,
      long paid,
      long closed,
      long closedTimeout,
      Histogram lagMillis,
      List<String> violations) {
    public Result {
      violations = List.copyOf(violations);
    }

    public boolean ok() {
      return violations.isEmpty();
    }

    /** The lines the busy scenario prints. */
    public String summary() {
      StringBuilder out = new StringBuilder();
      out.append(
          String.format(
              Locale.ROOT,
              "orders: placed %d, paid %d, closed %d (TIMEOUT %d)%n",
              placed,
              paid,
              closed,
              closedTimeout));
      Histogram h = lagMillis;
      out.append(
          String.format(
              Locale.ROOT,
              "close lag from MariaDB (closed_at - expire_at, TIMEOUT closes, ms): p50 %d, p90 %d,"
                  + " p99 %d, max %d%n",
              h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(50),
              h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(90),
              h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(99),
              h.getTotalCount() == 0 ? 0 : h.getMaxValue()));
      out.append(
          violations.isEmpty()
              ? "check: OK (every order closed or paid exactly once, invariants hold)\n"
              : "check: FAILED, "
                  + violations.size()
                  + " violation(s):\n  "
                  + String.join("\n  ", violations.subList(0, Math.min(20, violations.size())))
                  + "\n");
      return out.toString();
    }
  }

  private BusyCheck() {}

  /**
   * Checks the orders whose id starts with {@code idPrefix}; {@code paidAtWeChat} are the orders
   * whose payment the WeChat Pay simulator accepted (the payer's successful pays).
   */
  public static Result check(DataSource ds, String idPrefix, Set<String> paidAtWeChat)
      throws SQLException {
    List<String> violations = new ArrayList<>();
    long placed = 0;
    long paid = 0;
    long closed = 0;
    long closedTimeout = 0;
    Histogram lag = new Histogram(86_400_000L, 3);
    Set<String> seenPaid = new HashSet<>();
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT order_id, status, close_reason,"
                    + " TIMESTAMPDIFF(MICROSECOND, expire_at, closed_at)"
                    + " FROM orders WHERE order_id LIKE ?")) {
      ps.setString(1, idPrefix.replace("%", "\\%").replace("_", "\\_") + "%");
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          placed++;
          String id = rs.getString(1);
          String status = rs.getString(2);
          switch (status) {
            case "PAID" -> {
              paid++;
              seenPaid.add(id);
              if (!paidAtWeChat.contains(id)) {
                violations.add(id + " is PAID but WeChat never took its payment");
              }
            }
            case "CLOSED" -> {
              closed++;
              if (paidAtWeChat.contains(id)) {
                violations.add(id + " is CLOSED although WeChat took its payment");
              }
              if ("TIMEOUT".equals(rs.getString(3))) {
                closedTimeout++;
                long micros = rs.getLong(4);
                if (micros < 0) {
                  violations.add(id + " closed " + (-micros / 1000) + " ms before its deadline");
                }
                lag.recordValue(
                    Math.min(Math.max(0, micros / 1000), lag.getHighestTrackableValue()));
              }
            }
            default -> violations.add(id + " ended " + status + ", neither CLOSED nor PAID");
          }
        }
      }
    }
    for (String id : paidAtWeChat) {
      // the CLOSED ones are reported above; here the ones missing from the table altogether
      if (!seenPaid.contains(id) && !exists(ds, id)) {
        violations.add(id + " was paid at WeChat but is not in the orders table");
      }
    }
    if (placed == 0) {
      violations.add("no order with id prefix " + idPrefix + " was placed");
    }
    violations.addAll(new InvariantChecker(ds).violations());
    return new Result(placed, paid, closed, closedTimeout, lag, violations);
  }

  private static boolean exists(DataSource ds, String id) throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT 1 FROM orders WHERE order_id = ?")) {
      ps.setString(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }
}
