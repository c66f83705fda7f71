package io.ordertimeout.wechat;

import java.time.Instant;

/**
 * A trade as WeChat's query reports it.
 *
 * @param transactionId null until paid
 * @param amountFen null when WeChat did not report one (NOT_FOUND)
 * @param successTime null until paid
 */
public record TradeStatus(
    String outTradeNo,
    TradeState state,
    String transactionId,
    Long amountFen,
    Instant successTime) {

  static TradeStatus notFound(String outTradeNo) {
    return new TradeStatus(outTradeNo, TradeState.NOT_FOUND, null, null, null);
  }
}
