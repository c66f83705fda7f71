package io.ordertimeout.wechat;

import com.wechat.pay.java.service.payments.model.Transaction;
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

  /** A direct merchant's query answer. */
  static TradeStatus of(String outTradeNo, Transaction t) {
    if (t == null || t.getTradeState() == null) {
      throw withoutState(outTradeNo);
    }
    Long amount =
        t.getAmount() == null || t.getAmount().getTotal() == null
            ? null
            : t.getAmount().getTotal().longValue();
    return new TradeStatus(
        outTradeNo,
        WeChatPayGateway.tradeState(t.getTradeState()),
        t.getTransactionId(),
        amount,
        WeChatPayGateway.instant(t.getSuccessTime()));
  }

  /** A sub-merchant's query answer (the partner API's transaction). */
  static TradeStatus of(
      String outTradeNo, com.wechat.pay.java.service.partnerpayments.jsapi.model.Transaction t) {
    if (t == null || t.getTradeState() == null) {
      throw withoutState(outTradeNo);
    }
    Long amount =
        t.getAmount() == null || t.getAmount().getTotal() == null
            ? null
            : t.getAmount().getTotal().longValue();
    return new TradeStatus(
        outTradeNo,
        PartnerPayments.tradeState(t.getTradeState()),
        t.getTransactionId(),
        amount,
        WeChatPayGateway.instant(t.getSuccessTime()));
  }

  private static IllegalStateException withoutState(String outTradeNo) {
    return new IllegalStateException("query of " + outTradeNo + " answered without trade_state");
  }

  static TradeStatus notFound(String outTradeNo) {
    return new TradeStatus(outTradeNo, TradeState.NOT_FOUND, null, null, null);
  }
}
