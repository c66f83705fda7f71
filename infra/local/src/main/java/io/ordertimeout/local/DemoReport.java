package io.ordertimeout.local;

import io.ordertimeout.db.DataAccessException;
import io.ordertimeout.db.DbTime;
import io.ordertimeout.embedded.InvariantChecker;
import io.ordertimeout.embedded.wechat.TradeState;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.HdrHistogram.Histogram;

/**
 * Reads the demo's outcome from the database: per plan and per final state, close lag of timeout
 * closes (closed_at - expire_at, both written by the DB clock), paid-after-close cases (WeChat says
 * SUCCESS, the order is CLOSED), and the invariants of DESIGN.md section 3.
 */
final class DemoReport {
  private final LocalStack stack;
  private final DemoScenario.Settings settings;
  private final List<DemoScenario.Order> orders;
  private final Map<String, AtomicInteger> calls;

  DemoReport(
      LocalStack stack,
      DemoScenario.Settings settings,
      List<DemoScenario.Order> orders,
      Map<String, AtomicInteger> calls) {
    this.stack = stack;
    this.settings = settings;
    this.orders = orders;
    this.calls = calls;
  }

  /** One order as the database holds it at the end. */
  private record Row(String status, String closeReason, Instant expireAt, Instant closedAt) {
    String outcome() {
      return status.equals("CLOSED") ? "CLOSED " + closeReason : status;
    }
  }

  DemoScenario.Report build() {
    Map<String, Row> rows = rows();
    List<String> lines = new ArrayList<>();
    lines.add("");
    lines.add(
        "== demo report: "
            + orders.size()
            + " orders, timeout "
            + settings.timeoutSeconds()
            + " s");
    lines.add("HTTP calls (status, error code):");
    new TreeMap<>(calls).forEach((k, v) -> lines.add(String.format("  %-52s %6d", k, v.get())));
    Map<String, Long> outcomes = outcomes(rows);
    lines.add("outcomes:");
    outcomes.forEach((k, v) -> lines.add(String.format("  %-52s %6d", k, v)));
    lines.add("outcome per plan:");
    perPlan(rows).forEach((k, v) -> lines.add(String.format("  %-52s %6d", k, v)));
    lines.add(closeLag(rows));
    List<String> violations =
        new ArrayList<>(new InvariantChecker(stack.app().dataSource()).violations());
    long paidAfterClose = paidAfterClose(rows, violations);
    lines.add("paid after close (WeChat SUCCESS, order CLOSED): " + paidAfterClose);
    long open = rows.values().stream().filter(r -> r.status().equals("UNPAID")).count();
    if (open > 0) {
      violations.add(open + " order(s) still UNPAID 30 s after the last deadline");
    }
    if (stack.skippedFunctions().size() > 0) {
      lines.add("functions not built in this checkout: " + stack.skippedFunctions());
    }
    return new DemoScenario.Report(lines, outcomes, violations);
  }

  private Map<String, Long> outcomes(Map<String, Row> rows) {
    Map<String, Long> outcomes = new TreeMap<>();
    outcomes.put("placed", (long) rows.size());
    outcomes.put("not placed", (long) (orders.size() - rows.size()));
    rows.values().forEach(r -> outcomes.merge(r.outcome(), 1L, Long::sum));
    return outcomes;
  }

  private Map<String, Long> perPlan(Map<String, Row> rows) {
    return orders.stream()
        .filter(o -> rows.containsKey(o.orderId()))
        .collect(
            Collectors.groupingBy(
                o -> o.plan() + " -> " + rows.get(o.orderId()).outcome(),
                TreeMap::new,
                Collectors.counting()));
  }

  private static String closeLag(Map<String, Row> rows) {
    Histogram lag = new Histogram(86_400_000L, 3);
    for (Row r : rows.values()) {
      if ("TIMEOUT".equals(r.closeReason()) && r.closedAt() != null) {
        lag.recordValue(Math.max(0, r.closedAt().toEpochMilli() - r.expireAt().toEpochMilli()));
      }
    }
    if (lag.getTotalCount() == 0) {
      return "close lag (TIMEOUT closes): none";
    }
    return String.format(
        "close lag (TIMEOUT closes, closed_at - expire_at): p50 %d ms, p99 %d ms, max %d ms (n=%d)",
        lag.getValueAtPercentile(50),
        lag.getValueAtPercentile(99),
        lag.getMaxValue(),
        lag.getTotalCount());
  }

  /**
   * Orders WeChat reports paid but the database has CLOSED. Invariant 6 wants each one recorded as
   * a paid-after-close case (refunded or flagged); one missing from paid_after_close is a
   * violation.
   */
  private long paidAfterClose(Map<String, Row> rows, List<String> violations) {
    List<String> cases = new ArrayList<>();
    rows.forEach(
        (id, row) -> {
          boolean paidAtWeChat =
              stack
                  .simulator()
                  .trade(id)
                  .map(t -> t.state() == TradeState.SUCCESS || t.state() == TradeState.REFUND)
                  .orElse(false);
          if (paidAtWeChat && row.status().equals("CLOSED")) {
            cases.add(id);
          }
        });
    java.util.Set<String> recorded =
        query(
            "SELECT order_id FROM paid_after_close",
            rs -> {
              java.util.Set<String> ids = new java.util.HashSet<>();
              while (rs.next()) {
                ids.add(rs.getString("order_id"));
              }
              return ids;
            });
    List<String> unrecorded = cases.stream().filter(id -> !recorded.contains(id)).toList();
    if (!unrecorded.isEmpty()) {
      violations.add(
          unrecorded.size() + " paid-after-close order(s) not recorded, e.g. " + unrecorded.get(0));
    }
    return cases.size();
  }

  private Map<String, Row> rows() {
    return query(
        "SELECT order_id, status, close_reason, expire_at, closed_at FROM orders",
        rs -> {
          Map<String, Row> rows = new TreeMap<>();
          while (rs.next()) {
            rows.put(
                rs.getString("order_id"),
                new Row(
                    rs.getString("status"),
                    rs.getString("close_reason"),
                    DbTime.instant(rs, "expire_at"),
                    DbTime.instant(rs, "closed_at")));
          }
          return rows;
        });
  }

  private interface Reader<T> {
    T read(ResultSet rs) throws SQLException;
  }

  private <T> T query(String sql, Reader<T> reader) {
    try (Connection c = stack.app().dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement(sql);
        ResultSet rs = ps.executeQuery()) {
      return reader.read(rs);
    } catch (SQLException e) {
      throw new DataAccessException("demo report query failed: " + sql, e, false);
    }
  }
}
