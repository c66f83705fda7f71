package io.ordertimeout.stream;

import java.util.Arrays;
import java.util.Optional;

/** The event types of the order event stream, with the names they carry on the wire. */
public enum EventType {
  /** An order was placed and its timer scheduled. Informational for the closers group. */
  CREATED("created"),
  /** An order was paid (payment-notify). Informational for the closers group. */
  PAID("paid"),
  /** The user asked to cancel an UNPAID order: close now, reason USER_CANCEL, no deadline check. */
  CANCEL_REQUESTED("cancel_requested"),
  /** The sweep handed a due order on: close if due, reason TIMEOUT. */
  CLOSE_DUE("close_due"),
  /** An order was closed (after the commit). Informational for the closers group. */
  CLOSED("closed"),
  /** The order life after payment (lifecycle.Transition), informational for the closers group. */
  SHIPPED("shipped"),
  RECEIPT_EXTENDED("receipt_extended"),
  RECEIVED("received"),
  AFTER_SALE_OPENED("after_sale_opened"),
  AFTER_SALE_RESOLVED("after_sale_resolved"),
  COMPLETED("completed");

  private final String wireName;

  EventType(String wireName) {
    this.wireName = wireName;
  }

  public String wireName() {
    return wireName;
  }

  public static Optional<EventType> fromWire(String name) {
    return Arrays.stream(values()).filter(t -> t.wireName.equals(name)).findFirst();
  }

  /** True for the events the closers group acts on; the others it acknowledges unread. */
  public boolean closes() {
    return this == CANCEL_REQUESTED || this == CLOSE_DUE;
  }
}
