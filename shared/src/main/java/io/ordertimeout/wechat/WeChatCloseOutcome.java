package io.ordertimeout.wechat;

/**
 * WeChat's answers to a close that are not errors. Only {@link #ALREADY_CLOSED} and {@link
 * #ALREADY_PAID} prove the trade's state: a 204 has been seen for an out_trade_no WeChat did not
 * know, so the close path confirms {@link #CLOSED} and {@link #NOT_FOUND} with a query before the
 * database closes the order.
 */
public enum WeChatCloseOutcome {
  /** 204: WeChat accepted the close (a repeated close answers the same); confirm by a query. */
  CLOSED,
  /** ORDER_CLOSED: the trade was closed already; nothing can be paid on it. */
  ALREADY_CLOSED,
  /** ORDERPAID: the user paid; re-query and take the paid path. */
  ALREADY_PAID,
  /** 404 ORDER_NOT_EXIST: WeChat has no such trade (never prepaid); confirm by a query. */
  NOT_FOUND
}
