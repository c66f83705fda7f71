package io.ordertimeout.embedded.wechat;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;

/** Mutable state of one out_trade_no; only touched under the {@link TradeBook} lock. */
final class SimulatedTrade {

  final String outTradeNo;
  final String appid;
  final String mchid;
  final String description;
  final long amountFen;
  final String payerOpenId;
  final String timeExpireText;
  final Instant timeExpire;
  final String prepayId;

  /** The prepay's notify_url as sent, the URL WeChat would notify (null when absent). */
  final String notifyUrl;

  /** The significant prepay parameters; a second prepay must repeat them exactly. */
  final JsonNode fingerprint;

  TradeState state = TradeState.NOTPAY;
  String transactionId;
  Instant successTime;
  long refundedFen;

  SimulatedTrade(
      String outTradeNo,
      String appid,
      String mchid,
      String description,
      long amountFen,
      String payerOpenId,
      String timeExpireText,
      Instant timeExpire,
      String prepayId,
      String notifyUrl,
      JsonNode fingerprint) {
    this.outTradeNo = outTradeNo;
    this.appid = appid;
    this.mchid = mchid;
    this.description = description;
    this.amountFen = amountFen;
    this.payerOpenId = payerOpenId;
    this.timeExpireText = timeExpireText;
    this.timeExpire = timeExpire;
    this.prepayId = prepayId;
    this.notifyUrl = notifyUrl;
    this.fingerprint = fingerprint;
  }

  boolean paid() {
    return state == TradeState.SUCCESS || state == TradeState.REFUND;
  }

  TradeSnapshot snapshot() {
    return new TradeSnapshot(
        outTradeNo,
        state,
        amountFen,
        payerOpenId,
        prepayId,
        transactionId,
        successTime,
        timeExpire,
        refundedFen);
  }
}
