package io.ordertimeout.domain;

/**
 * A request a use case refuses, with a stable machine-readable code and the order, SKU or coupon it
 * names in the message. Thrown before anything is written, or from inside a transaction that is
 * then rolled back, so a refused request changes nothing. The HTTP layer maps each code to a status
 * (http.ApiError#from); the use cases know nothing about HTTP.
 */
public class OrderRejected extends RuntimeException {
  /** Each code is the string clients see in the error body, so the names are part of the API. */
  public enum Code {
    NOT_FOUND,
    /** The tenant has no row in {@code tenants}: it was never onboarded (400). */
    UNKNOWN_TENANT,
    ORDER_CONFLICT,
    UNKNOWN_SKU,
    OUT_OF_STOCK,
    UNKNOWN_COUPON,
    COUPON_NOT_OWNED,
    COUPON_NOT_AVAILABLE,
    /** The order is not in the transition's from-state (409, with the current state). */
    ILLEGAL_TRANSITION,
    /** The user's one receipt extension was used already (409). */
    RECEIPT_ALREADY_EXTENDED,
    /**
     * A route asked after the deadline it must come before (receipt, completion) by the database
     * clock, applied by the sweep or not yet (409).
     */
    DEADLINE_PASSED,
    /** A coupon id issued already with other fields (409). */
    COUPON_CONFLICT,
    ORDER_PAID,
    ORDER_NOT_UNPAID,
    ORDER_EXPIRED,
    PREPAY_REFUSED,
    PAYMENTS_DISABLED,
    WECHAT_UNAVAILABLE,
    WECHAT_REJECTED
  }

  private final Code code;

  public OrderRejected(Code code, String message) {
    super(message, null, false, false);
    this.code = code;
  }

  public Code code() {
    return code;
  }
}
