package io.ordertimeout.wechat;

/**
 * WeChat gave no definite answer: 5xx, SYSTEM_ERROR, FREQUENCY_LIMITED, RULE_LIMIT, USERPAYING on
 * close, a timeout, an I/O error or a response that failed verification. The caller retries later
 * with backoff; the trade may or may not have changed on WeChat's side.
 */
public final class PaymentTransientException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final String code;
  private final String tenantId;
  private final String operation;
  private final String reference;

  public PaymentTransientException(
      String code,
      String tenantId,
      String operation,
      String reference,
      String detail,
      Throwable cause) {
    super(
        operation
            + " "
            + reference
            + " for tenant "
            + tenantId
            + " failed transiently: "
            + code
            + (detail == null ? "" : " (" + detail + ")"),
        cause);
    this.code = code;
    this.tenantId = tenantId;
    this.operation = operation;
    this.reference = reference;
  }

  /**
   * WeChat's error code (SYSTEM_ERROR, FREQUENCY_LIMITED, USERPAYING, ...) or IO_ERROR,
   * INVALID_RESPONSE.
   */
  public String code() {
    return code;
  }

  public String tenantId() {
    return tenantId;
  }

  public String operation() {
    return operation;
  }

  /** The out_trade_no or out_refund_no the call was about. */
  public String reference() {
    return reference;
  }
}
