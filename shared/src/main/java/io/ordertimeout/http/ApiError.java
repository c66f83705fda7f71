package io.ordertimeout.http;

import io.ordertimeout.domain.OrderRejected;

/**
 * A request the API refuses, with its HTTP status and a stable machine-readable code. Thrown before
 * anything is written, or from inside a transaction that is then rolled back, so a refused request
 * changes nothing.
 */
public final class ApiError extends RuntimeException {
  private final int status;
  private final String code;

  public ApiError(int status, String code, String message) {
    super(message, null, false, false);
    this.status = status;
    this.code = code;
  }

  public static ApiError badRequest(String code, String message) {
    return new ApiError(400, code, message);
  }

  public static ApiError conflict(String code, String message) {
    return new ApiError(409, code, message);
  }

  public static ApiError notFound(String message) {
    return new ApiError(404, "NOT_FOUND", message);
  }

  /**
   * The HTTP answer to a use case's refusal: 404 unknown order, 400 a reference that does not exist
   * or is not the caller's, 409 a state conflict, 502 WeChat refused, 503 WeChat absent or silent.
   */
  public static ApiError from(OrderRejected rejected) {
    int status =
        switch (rejected.code()) {
          case NOT_FOUND -> 404;
          case UNKNOWN_TENANT,
              UNKNOWN_SKU,
              UNKNOWN_COUPON,
              COUPON_NOT_OWNED,
              COUPON_NOT_AVAILABLE ->
              400;
          case ORDER_CONFLICT,
              OUT_OF_STOCK,
              ORDER_PAID,
              ORDER_NOT_UNPAID,
              ORDER_EXPIRED,
              PREPAY_REFUSED,
              ILLEGAL_TRANSITION,
              RECEIPT_ALREADY_EXTENDED,
              DEADLINE_PASSED,
              COUPON_CONFLICT ->
              409;
          case WECHAT_REJECTED -> 502;
          case PAYMENTS_DISABLED, WECHAT_UNAVAILABLE -> 503;
        };
    return new ApiError(status, rejected.code().name(), rejected.getMessage());
  }

  public int status() {
    return status;
  }

  public String code() {
    return code;
  }
}
