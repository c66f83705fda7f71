package io.ordertimeout.lifecycle;

import io.ordertimeout.domain.OrderStatus;
import io.ordertimeout.mysql.DbTime;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Optional;

/** An order's life after payment as MySQL holds it: its state and every deadline. */
public record OrderLifecycle(
    String orderId,
    String tenantId,
    OrderStatus status,
    Instant paidAt,
    Instant shippedAt,
    String carrier,
    String trackingNo,
    Instant receiveDueAt,
    Instant receiptExtendedAt,
    Instant receivedAt,
    String receivedBy,
    Instant completeDueAt,
    Instant afterSaleOpenedAt,
    int afterSales,
    Instant completedAt) {

  static final String COLUMNS =
      "order_id, tenant_id, status, paid_at, shipped_at, carrier, tracking_no, receive_due_at,"
          + " receipt_extended_at, received_at, received_by, complete_due_at,"
          + " after_sale_opened_at, after_sales, completed_at";

  public static Optional<OrderLifecycle> find(Connection c, String tenantId, String orderId)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT " + COLUMNS + " FROM orders WHERE tenant_id = ? AND order_id = ?")) {
      ps.setString(1, tenantId);
      ps.setString(2, orderId);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? Optional.of(of(rs)) : Optional.empty();
      }
    }
  }

  static OrderLifecycle of(ResultSet rs) throws SQLException {
    return new OrderLifecycle(
        rs.getString("order_id"),
        rs.getString("tenant_id"),
        OrderStatus.valueOf(rs.getString("status")),
        DbTime.instant(rs, "paid_at"),
        DbTime.instant(rs, "shipped_at"),
        rs.getString("carrier"),
        rs.getString("tracking_no"),
        DbTime.instant(rs, "receive_due_at"),
        DbTime.instant(rs, "receipt_extended_at"),
        DbTime.instant(rs, "received_at"),
        rs.getString("received_by"),
        DbTime.instant(rs, "complete_due_at"),
        DbTime.instant(rs, "after_sale_opened_at"),
        rs.getInt("after_sales"),
        DbTime.instant(rs, "completed_at"));
  }
}
