package io.ordertimeout.domain;

import java.time.Instant;
import java.util.List;

/** An order as stored in MySQL, the source of truth. */
public record Order(
    String orderId,
    String tenantId,
    String userId,
    OrderStatus status,
    long amountFen,
    String couponId,
    String prepayId,
    List<OrderItem> items,
    Instant createdAt,
    Instant expireAt,
    Instant paidAt,
    Instant closedAt,
    String closeReason,
    String requestHash) {

  public Order {
    items = List.copyOf(items);
  }

  public boolean prepaid() {
    return prepayId != null;
  }
}
