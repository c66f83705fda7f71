package io.ordertimeout.payment;

/** What applying one paid trade did. */
public enum PaymentOutcome {
  /** This call moved the order UNPAID -> PAID. */
  PAID,
  /** The order was already PAID by this transaction: a duplicate, nothing changed. */
  ALREADY_PAID,
  /**
   * The order is CLOSED: the case is recorded in paid_after_close (once) and its refund requested.
   */
  PAID_AFTER_CLOSE
}
