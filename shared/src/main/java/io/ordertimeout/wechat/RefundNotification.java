package io.ordertimeout.wechat;

import java.time.Instant;

/**
 * A verified, decrypted refund notification (event types REFUND.SUCCESS, REFUND.ABNORMAL,
 * REFUND.CLOSED): WeChat's word on a refund it accepted earlier.
 *
 * @param notificationId the event id; WeChat repeats it on every retry of one event
 * @param nonce the Wechatpay-Nonce header; a second request with the same nonce is a replay
 * @param timestamp the signed Wechatpay-Timestamp
 * @param successTime null unless refundStatus is SUCCESS
 * @param refundFen amount.refund; payerRefundFen what went back to the payer (refund less coupons)
 * @param userReceivedAccount where the money went, e.g. "支付用户零钱" or a bank card
 */
public record RefundNotification(
    String notificationId,
    String eventType,
    String nonce,
    Instant timestamp,
    String mchid,
    String outTradeNo,
    String transactionId,
    String outRefundNo,
    String refundId,
    RefundStatus refundStatus,
    Instant successTime,
    long totalFen,
    long refundFen,
    Long payerTotalFen,
    Long payerRefundFen,
    String userReceivedAccount) {}
