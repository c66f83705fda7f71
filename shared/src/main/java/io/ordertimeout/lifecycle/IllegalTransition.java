package io.ordertimeout.lifecycle;

import io.ordertimeout.domain.OrderRejected;
import io.ordertimeout.domain.OrderStatus;

/** A route's transition asked of an order in another state: 409 with the current state. */
public final class IllegalTransition extends OrderRejected {
  private final OrderStatus current;

  public IllegalTransition(String orderId, Transition t, OrderStatus current) {
    super(
        Code.ILLEGAL_TRANSITION,
        "order " + orderId + " is " + current + "; " + t.wireName() + " needs " + t.from());
    this.current = current;
  }

  public OrderStatus current() {
    return current;
  }
}
