package io.ordertimeout.reconcile;

/**
 * What reconciliation made of one bill line, or of one paid order without a line. Flagged
 * categories need an operator (docs/operations/reconciliation.md says what to do for each).
 */
public enum LineCategory {
  /** SUCCESS line, the order PAID here by the same transaction and amount. */
  MATCHED(false),
  /** SUCCESS line, the order still UNPAID here: the payment was applied through the paid path. */
  APPLIED(false),
  /** SUCCESS line, the order CLOSED here: recorded as paid after close and refunded once. */
  PAID_AFTER_CLOSE(false),
  /** A line of another tenant's order on the same merchant, or recorded by its run first. */
  OTHER_TENANT(false),
  /** REFUND line matching a refund recorded here (same out_refund_no and amount). */
  REFUND_MATCHED(false),
  /** SUCCESS line whose trade no order of any tenant is bound to. */
  NO_ORDER(true),
  /** SUCCESS line whose amount is not the order's. */
  AMOUNT_MISMATCH(true),
  /** A line of another merchant than the tenant's. */
  MCHID_MISMATCH(true),
  /** SUCCESS line for an order paid here by another transaction. */
  TRANSACTION_MISMATCH(true),
  /** A line whose trade two tenants' orders could both be (bindings without mchid). */
  SHARED_TRADE(true),
  /** SUCCESS line the paid path refused (the order's state or data does not admit it). */
  APPLY_REFUSED(true),
  /** REFUND line for which no refund is recorded here (made outside this system). */
  REFUND_UNKNOWN(true),
  /** REFUND line whose amount is not the recorded refund's. */
  REFUND_AMOUNT_MISMATCH(true),
  /** A line in a trade state reconciliation does not expect (REVOKED, ...). */
  UNEXPECTED_STATE(true),
  /** An order paid here that day, with no line in the bill. */
  NOT_IN_BILL(true);

  private final boolean flagged;

  LineCategory(boolean flagged) {
    this.flagged = flagged;
  }

  /** True when an operator must look at the line. */
  public boolean flagged() {
    return flagged;
  }
}
