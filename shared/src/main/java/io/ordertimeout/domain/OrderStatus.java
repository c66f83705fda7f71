package io.ordertimeout.domain;

import java.util.EnumSet;
import java.util.Set;

/**
 * An order's states. UNPAID ends as PAID or CLOSED; a paid order then lives PAID -> SHIPPED ->
 * RECEIVED -> COMPLETED, with AFTER_SALE between RECEIVED and COMPLETED while an after-sale request
 * is open. Every transition is declared once in {@code lifecycle.Transition} and is a conditional
 * UPDATE on its from-state in MySQL.
 */
public enum OrderStatus {
  UNPAID,
  PAID,
  SHIPPED,
  RECEIVED,
  AFTER_SALE,
  COMPLETED,
  CLOSED;

  private static final Set<OrderStatus> PAID_STATES =
      EnumSet.of(PAID, SHIPPED, RECEIVED, AFTER_SALE, COMPLETED);

  /**
   * True for every state after a payment: the stock is sold, the coupon used, the order can be
   * neither closed nor cancelled, and a repeated payment notification is already settled.
   */
  public boolean paid() {
    return PAID_STATES.contains(this);
  }

  /** The states a payment leads to, as SQL literals for {@code status IN (...)}. */
  public static String paidStatesSql() {
    return "'PAID', 'SHIPPED', 'RECEIVED', 'AFTER_SALE', 'COMPLETED'";
  }
}
