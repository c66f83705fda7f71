package io.ordertimeout.embedded.wechat;

import java.time.Instant;

/**
 * What the simulator holds for one out_trade_no at one moment; handed to tests for assertions.
 *
 * @param transactionId null until paid
 * @param successTime null until paid
 * @param timeExpire null when the prepay carried no time_expire
 */
public record TradeSnapshot(
    String outTradeNo,
    TradeState state,
    long amountFen,
    String payerOpenId,
    String prepayId,
    String transactionId,
    Instant successTime,
    Instant timeExpire,
    long refundedFen) {}
