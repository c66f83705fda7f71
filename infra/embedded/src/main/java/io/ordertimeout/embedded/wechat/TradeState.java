package io.ordertimeout.embedded.wechat;

/** trade_state values of WeChat Pay's transaction query, as the simulator models them. */
public enum TradeState {
  NOTPAY,
  USERPAYING,
  SUCCESS,
  CLOSED,
  REFUND
}
