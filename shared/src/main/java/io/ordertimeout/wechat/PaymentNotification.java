package io.ordertimeout.wechat;

import java.time.Instant;

/**
 * A verified, decrypted payment notification.
 *
 * @param notificationId the event id; WeChat repeats it on every retry of one event
 * @param nonce the Wechatpay-Nonce header; a second request with the same nonce is a replay
 * @param timestamp the signed Wechatpay-Timestamp
 * @param successTime null unless tradeState is SUCCESS
 */
public record PaymentNotification(
    String notificationId,
    String eventType,
    String nonce,
    Instant timestamp,
    String outTradeNo,
    String transactionId,
    TradeState tradeState,
    long amountTotalFen,
    String mchid,
    String appid,
    Instant successTime) {}
