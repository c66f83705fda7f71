package io.ordertimeout.cancel;

import io.ordertimeout.domain.Order;
import io.ordertimeout.domain.OrderRejected;
import io.ordertimeout.mysql.OrderStore;
import io.ordertimeout.mysql.Tx;
import io.ordertimeout.outbox.Outbox;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * A user's cancellation: accepted for an UNPAID order by one transaction that sets the order's
 * {@code cancel_requested_at} (a conditional UPDATE, so only the first request counts) and writes a
 * {@code cancel_requested} outbox row. The relay delivers it to the stream, where a consumer closes
 * the order (reason USER_CANCEL) through the same close use case as the sweep; while the order
 * stays UNPAID the relay re-delivers the request, so losing Redis loses no cancel.
 */
public final class CancelOrderService {
  private final Tx tx;

  public CancelOrderService(Tx tx) {
    this.tx = tx;
  }

  /**
   * What a cancel request found.
   *
   * @param accepted true when the order is UNPAID with a cancel recorded, by this request or an
   *     earlier one (202); false when the order was already closed (200)
   */
  public record Outcome(Order order, boolean accepted) {}

  /**
   * Throws OrderRejected 404 for an unknown order and 409 for a PAID one; a failed transaction
   * throws (nothing was recorded, the caller may retry).
   */
  public Outcome request(String tenantId, String orderId) {
    return tx.inTransaction(
        "request cancel of order " + tenantId + "/" + orderId, c -> record(c, tenantId, orderId));
  }

  private static Outcome record(Connection c, String tenantId, String orderId) throws SQLException {
    boolean first = markRequested(c, tenantId, orderId);
    Order order =
        OrderStore.find(c, tenantId, orderId)
            .orElseThrow(
                () ->
                    new OrderRejected(
                        OrderRejected.Code.NOT_FOUND, "order " + orderId + " does not exist"));
    if (first) {
      // The row is locked by the UPDATE: the event is an own row of the order (lock order).
      Outbox.cancelRequested(c, orderId, order.tenantId(), order.userId());
    }
    return switch (order.status()) {
      case CLOSED -> new Outcome(order, false);
      case UNPAID -> new Outcome(order, true);
      default ->
          throw new OrderRejected(
              OrderRejected.Code.ORDER_PAID,
              "order "
                  + orderId
                  + " is "
                  + order.status()
                  + ": it was paid and cannot be cancelled");
    };
  }

  /** True when this request is the order's first cancel while UNPAID (and so was recorded). */
  private static boolean markRequested(Connection c, String tenantId, String orderId)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "UPDATE orders SET cancel_requested_at = NOW(3) WHERE tenant_id = ? AND order_id = ?"
                + " AND status = 'UNPAID' AND cancel_requested_at IS NULL")) {
      ps.setString(1, tenantId);
      ps.setString(2, orderId);
      return ps.executeUpdate() == 1;
    }
  }
}
