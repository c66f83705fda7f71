package io.ordertimeout.wechat;

import com.wechat.pay.java.core.exception.HttpException;
import com.wechat.pay.java.core.exception.ServiceException;
import java.io.InterruptedIOException;
import java.util.Set;

/**
 * Sorts the SDK's failures into "definite" and "try again". Codes are listed in both spellings
 * where WeChat has used both (APIv2's ORDERNOTEXIST lives on in some APIv3 answers next to
 * ORDER_NOT_EXIST).
 *
 * <p>RULE_LIMIT (HTTP 403, "business rule limit") is WeChat refusing the request for now under a
 * rule of its own, typically a frequency rule: nothing about the trade changed, so it is retried as
 * SYSTEM_ERROR and FREQUENCY_LIMITED are, never taken as a verdict on the trade.
 */
final class WeChatErrors {

  private static final Set<String> TRANSIENT_CODES =
      Set.of(
          "SYSTEM_ERROR",
          "SYSTEMERROR",
          "FREQUENCY_LIMITED",
          "RULE_LIMIT",
          "USERPAYING",
          "USER_PAYING",
          "BANK_ERROR",
          "BANKERROR");
  private static final Set<String> PAID_CODES = Set.of("ORDERPAID", "ORDER_PAID");
  private static final Set<String> NOT_FOUND_CODES =
      Set.of("ORDER_NOT_EXIST", "ORDERNOTEXIST", "RESOURCE_NOT_EXISTS");
  private static final Set<String> CLOSED_CODES = Set.of("ORDER_CLOSED", "ORDERCLOSED");

  private WeChatErrors() {}

  static boolean isPaid(ServiceException e) {
    return PAID_CODES.contains(e.getErrorCode());
  }

  static boolean isNotFound(ServiceException e) {
    return e.getHttpStatusCode() == 404 && NOT_FOUND_CODES.contains(e.getErrorCode());
  }

  static boolean isClosed(ServiceException e) {
    return CLOSED_CODES.contains(e.getErrorCode());
  }

  /** Maps an SDK failure of one call to PaymentTransientException or PaymentRejectedException. */
  static RuntimeException translate(
      RuntimeException e, String tenantId, String operation, String reference) {
    if (e instanceof ServiceException se) {
      return translateService(se, tenantId, operation, reference);
    }
    if (e instanceof HttpException) {
      String code = e.getCause() instanceof InterruptedIOException ? "TIMEOUT" : "IO_ERROR";
      return new PaymentTransientException(
          code, tenantId, operation, reference, String.valueOf(e.getCause()), e);
    }
    // ValidationException, MalformedMessageException, the validator's IllegalArgumentException for
    // a
    // missing or stale Wechatpay-Timestamp, Gson failing on a non-JSON error page: the answer
    // cannot be
    // trusted, so we do not know what WeChat did.
    return new PaymentTransientException(
        "INVALID_RESPONSE", tenantId, operation, reference, e.getMessage(), e);
  }

  private static RuntimeException translateService(
      ServiceException e, String tenantId, String operation, String reference) {
    int status = e.getHttpStatusCode();
    String code = e.getErrorCode() == null ? "HTTP_" + status : e.getErrorCode();
    if (status >= 500 || status == 429 || TRANSIENT_CODES.contains(code)) {
      return new PaymentTransientException(
          code, tenantId, operation, reference, e.getErrorMessage(), e);
    }
    return new PaymentRejectedException(
        code, status, tenantId, operation, reference, e.getErrorMessage());
  }

  /**
   * A close-order refusal that is a definite answer about the trade; anything else (USER_PAYING,
   * SYSTEM_ERROR, FREQUENCY_LIMITED, RULE_LIMIT, ...) is rethrown for the caller to translate.
   */
  static WeChatCloseOutcome closeOutcome(ServiceException e) {
    if (isPaid(e)) {
      return WeChatCloseOutcome.ALREADY_PAID;
    }
    if (isNotFound(e)) {
      return WeChatCloseOutcome.NOT_FOUND;
    }
    if (isClosed(e)) {
      return WeChatCloseOutcome.ALREADY_CLOSED;
    }
    throw e;
  }
}
