package io.ordertimeout.lifecycle;

import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.mysql.OrderStore;
import io.ordertimeout.mysql.Statements;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The MySQL column each deadline kind's timer is derived from: MySQL is the truth, Redis a copy.
 */
public final class DueColumns {
  private DueColumns() {}

  /**
   * {@code orders.expire_at}, {@code orders.receive_due_at}, ... or {@code coupons.valid_until}.
   */
  public static String of(DeadlineKind kind) {
    return switch (kind) {
      case PAYMENT_TIMEOUT -> "expire_at";
      case AUTO_RECEIPT -> "receive_due_at";
      case AUTO_COMPLETE -> "complete_due_at";
      case COUPON_EXPIRY -> "valid_until";
    };
  }

  /** The due epoch ms of {@code orderIds} for an order kind; orders without one are left out. */
  static Map<String, Long> read(Connection c, DeadlineKind kind, List<String> orderIds)
      throws SQLException {
    String column = of(kind);
    String sql = "SELECT order_id, " + column + " FROM orders WHERE order_id IN (%s)";
    Map<String, Long> due = new TreeMap<>();
    for (List<String> part : Statements.inLists(sql, orderIds)) {
      try (PreparedStatement ps =
          c.prepareStatement(String.format(sql, OrderStore.placeholders(part.size())))) {
        OrderStore.bind(ps, 1, part);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            Long at = TransitionEvents.millis(rs, column);
            if (at != null) {
              due.put(rs.getString("order_id"), at);
            }
          }
        }
      }
    }
    return due;
  }
}
