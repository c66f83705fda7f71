package io.ordertimeout.wechat;

/**
 * WeChat refused the request for good (PARAM_ERROR, OUT_TRADE_NO_USED, ORDER_CLOSED on prepay,
 * NOT_ENOUGH, SIGN_ERROR, ...): retrying the same request will not help.
 */
public final class PaymentRejectedException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final String code;
  private final int httpStatus;
  private final String reference;

  public PaymentRejectedException(
      String code,
      int httpStatus,
      String tenantId,
      String operation,
      String reference,
      String message) {
    super(
        operation
            + " "
            + reference
            + " for tenant "
            + tenantId
            + " rejected by WeChat Pay: HTTP "
            + httpStatus
            + " "
            + code
            + " "
            + message);
    this.code = code;
    this.httpStatus = httpStatus;
    this.reference = reference;
  }

  public String code() {
    return code;
  }

  public int httpStatus() {
    return httpStatus;
  }

  public String reference() {
    return reference;
  }
}
