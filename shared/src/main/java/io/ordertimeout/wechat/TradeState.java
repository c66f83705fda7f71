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

  /**
   * SUCCESS only: the money is with the merchant. REFUND (paid, then refunded in part or in full)
   * is not: the payer got money back, WeChat takes no new payment on the trade, and whether the
   * order should count as sold is the merchant's decision. The close path closes such an order
   * unpaid, compensation flags it (REFUNDED_TRADE) instead of marking it PAID or refunding again.
   */
  public boolean paid() {
    return this == SUCCESS;
  }
}
