package io.ordertimeout.cancel;

import io.ordertimeout.domain.Order;
import io.ordertimeout.domain.OrderRejected;
import io.ordertimeout.mysql.OrderStore;
import io.ordertimeout.stream.OrderEvents;

/**
 * A user's cancellation: accepted for an UNPAID order by appending {@code cancel_requested} to the
 * event stream, where a consumer closes it (reason USER_CANCEL) through the same close use case as
 * the sweep. The request itself writes nothing to MySQL, so a retried request only appends a
 * duplicate event, which closes nothing twice.
 */
public final class CancelOrderService {
  private final OrderStore orders;
  private final OrderEvents events;

  public CancelOrderService(OrderStore orders, OrderEvents events) {
    this.orders = orders;
    this.events = events;
  }

  /**
   * What a cancel request found.
   *
   * @param accepted true when a cancel_requested event was appended (202), false when the order was
   *     already closed (200)
   */
  public record Outcome(Order order, boolean accepted) {}

  /**
   * Throws OrderRejected 404 for an unknown order and 409 for a PAID one; a failed append throws
   * (nothing was recorded, the caller may retry).
   */
  public Outcome request(String orderId) {
    Order order =
        orders
            .find(orderId)
            .orElseThrow(
                () ->
                    new OrderRejected(
                        OrderRejected.Code.NOT_FOUND, "order " + orderId + " does not exist"));
    return switch (order.status()) {
      case CLOSED -> new Outcome(order, false);
      case PAID ->
          throw new OrderRejected(
              OrderRejected.Code.ORDER_PAID,
              "order " + orderId + " is paid and cannot be cancelled");
      case UNPAID -> {
        events.cancelRequested(order.orderId(), order.tenantId(), order.userId());
        yield new Outcome(order, true);
      }
    };
  }
}
