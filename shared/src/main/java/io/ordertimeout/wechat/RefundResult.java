package io.ordertimeout.wechat;

/**
 * A refund as WeChat reports it.
 *
 * @param refundId WeChat's id, null when NOT_FOUND
 * @param refundFen null when NOT_FOUND
 */
public record RefundResult(
    String outRefundNo, String outTradeNo, String refundId, RefundStatus status, Long refundFen) {

  static RefundResult notFound(String outRefundNo) {
    return new RefundResult(outRefundNo, null, null, RefundStatus.NOT_FOUND, null);
  }
}
