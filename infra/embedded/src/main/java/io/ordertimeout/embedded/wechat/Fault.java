package io.ordertimeout.embedded.wechat;

/**
 * A failure the simulator can be told to answer with, the way WeChat Pay fails in production. The
 * close-order answers of the APIv3 documentation are all here, so each can be met on purpose
 * whatever the trade's state: ORDER_CLOSED, SYSTEM_ERROR, USERPAYING (and its USER_PAYING
 * spelling), RULE_LIMIT, FREQUENCY_LIMITED, and a bare 204 that proves nothing.
 */
public enum Fault {
  /** HTTP 500 {"code":"SYSTEM_ERROR"}: WeChat's "try again later". */
  SYSTEM_ERROR(500, "SYSTEM_ERROR", "系统错误"),
  /** HTTP 429 {"code":"FREQUENCY_LIMITED"}: the merchant exceeded its call rate. */
  FREQUENCY_LIMITED(429, "FREQUENCY_LIMITED", "频率超限"),
  /** HTTP 403 {"code":"RULE_LIMIT"}: a business rule refuses the request for now. */
  RULE_LIMIT(403, "RULE_LIMIT", "业务规则限制"),
  /** HTTP 400 {"code":"ORDER_CLOSED"}: the trade is closed already. */
  ORDER_CLOSED(400, "ORDER_CLOSED", "订单已关闭"),
  /**
   * HTTP 202 {"code":"USERPAYING"}: the payer is entering the password (a 2xx that is no success).
   */
  USERPAYING(202, "USERPAYING", "用户支付中，需要输入密码"),
  /** HTTP 400 {"code":"USER_PAYING"}: the same, in the spelling some answers use. */
  USER_PAYING(400, "USER_PAYING", "用户支付中"),
  /**
   * HTTP 204 and nothing done: the answer WeChat has given a close of an out_trade_no it did not
   * know. The trade, if there is one, keeps its state.
   */
  NO_CONTENT(204, "", ""),
  /** No answer until the simulator's hang time passes, so the client's read timeout fires first. */
  HANG(0, "", "");

  final int status;
  final String code;
  final String message;

  Fault(int status, String code, String message) {
    this.status = status;
    this.code = code;
    this.message = message;
  }
}
