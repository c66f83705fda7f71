package io.ordertimeout.wechat;

/** WeChat's definite answers to a close. */
public enum WeChatCloseOutcome {
  /** Closed now, or it was closed already (WeChat answers a repeated close with success). */
  CLOSED,
  /** ORDERPAID: the user paid; re-query and take the paid path. */
  ALREADY_PAID,
  /** WeChat has no such trade (never prepaid): nothing to close there. */
  NOT_FOUND
}
