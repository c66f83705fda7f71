package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.embedded.InvariantChecker;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code ./local up}'s priming sends the order mix through the stack's own HTTP API and the WeChat
 * Pay simulator and waits until every priming order ended: its report is what the database holds,
 * the priming SKUs' stock adds up, and the demo catalogue is untouched.
 */
class StackPrimingTest {
  private static LocalStack stack;

  @BeforeAll
  static void start() {
    stack =
        LocalStack.start(
            new LocalStack.Options(Main.templatePath(), "127.0.0.1", 0, 1.0), System.getenv());
  }

  @AfterAll
  static void stop() {
    stack.close();
  }

  @Test
  void everyPrimingOrderEndsAndTheReportIsWhatTheDatabaseHolds() throws Exception {
    StackPriming.Result result = StackPriming.prime(stack, Duration.ofSeconds(2), 2);

    Map<String, Long> byStatus = statuses();
    assertThat(result.clean()).as(result.describe()).isTrue();
    assertThat(result.placed()).isGreaterThanOrEqualTo(20);
    assertThat(byStatus.values().stream().mapToLong(Long::longValue).sum())
        .isEqualTo(result.placed());
    assertThat(byStatus).doesNotContainKey("UNPAID");
    assertThat(byStatus.getOrDefault("PAID", 0L)).isEqualTo(result.paid()).isPositive();
    assertThat(byStatus.getOrDefault("CLOSED", 0L)).isEqualTo(result.closed()).isPositive();
    assertThat(closeReasons()).containsKeys("TIMEOUT", "USER_CANCEL");
    assertThat(scalar("SELECT COUNT(*) FROM orders WHERE close_reason = 'USER_CANCEL'"))
        .isEqualTo(result.cancelled());
    // every unit a priming order reserved is back, but for the paid ones
    assertThat(scalar("SELECT SUM(reserved) FROM stock WHERE sku_id LIKE 'prime-sku-%'")).isZero();
    assertThat(scalar("SELECT SUM(total - available) FROM stock WHERE sku_id LIKE 'prime-sku-%'"))
        .isEqualTo(result.paid());
    assertThat(
            scalar(
                "SELECT COUNT(*) FROM stock WHERE sku_id LIKE 'sku-%'"
                    + " AND (available <> total OR reserved <> 0)"))
        .isZero();
    assertThat(new InvariantChecker(stack.app().dataSource()).violations()).isEmpty();
    assertThat(result.describe())
        .startsWith("primed        " + String.format("%,d", result.placed()) + " orders in ")
        .contains(String.format("%,d paid", result.paid()));
  }

  private static Map<String, Long> statuses() throws SQLException {
    return grouped("SELECT status, COUNT(*) FROM orders WHERE order_id LIKE 'prime%' GROUP BY 1");
  }

  private static Map<String, Long> closeReasons() throws SQLException {
    return grouped(
        "SELECT close_reason, COUNT(*) FROM orders WHERE order_id LIKE 'prime%'"
            + " AND close_reason IS NOT NULL GROUP BY 1");
  }

  private static Map<String, Long> grouped(String sql) throws SQLException {
    Map<String, Long> out = new LinkedHashMap<>();
    try (Connection c = stack.app().dataSource().getConnection();
        PreparedStatement s = c.prepareStatement(sql);
        ResultSet rs = s.executeQuery()) {
      while (rs.next()) {
        out.put(rs.getString(1), rs.getLong(2));
      }
    }
    return out;
  }

  private static long scalar(String sql) throws SQLException {
    try (Connection c = stack.app().dataSource().getConnection();
        PreparedStatement s = c.prepareStatement(sql);
        ResultSet rs = s.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
