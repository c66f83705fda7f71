package io.ordertimeout.wechat;

/** WeChat's trade_state, plus NOT_FOUND for a trade WeChat has no record of. */
public enum TradeState {
  NOTPAY,
  SUCCESS,
  CLOSED,
  USERPAYING,
  PAYERROR,
  REVOKED,
  REFUND,
  NOT_FOUND;

  /** SUCCESS or REFUND: money reached the merchant, so the order is paid. */
  public boolean paid() {
    return this == SUCCESS || this == REFUND;
  }
}
