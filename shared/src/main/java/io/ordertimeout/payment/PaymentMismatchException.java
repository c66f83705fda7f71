package io.ordertimeout.payment;

/**
 * A verified payment that does not fit our order: nothing was written. The webhook answers 4xx;
 * WeChat's retries will not fix it, so it is also logged and counted for a human.
 */
public final class PaymentMismatchException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /** What did not fit. */
  public enum Kind {
    /**
     * The paid tenant has no order with this out_trade_no (another tenant's order of the same id is
     * another order).
     */
    UNKNOWN_ORDER,
    /** amount.total differs from the order's amount. */
    AMOUNT_MISMATCH,
    /** The order is already PAID by another WeChat transaction. */
    TRANSACTION_MISMATCH,
    /** The trade lacks a field the paid path needs. */
    MALFORMED
  }

  private final Kind kind;
  private final String orderId;

  public PaymentMismatchException(Kind kind, String orderId, String detail) {
    super("payment for order " + orderId + " refused: " + kind + ": " + detail);
    this.kind = kind;
    this.orderId = orderId;
  }

  public Kind kind() {
    return kind;
  }

  public String orderId() {
    return orderId;
  }
}
