package io.ordertimeout.payment;

/**
 * A refund not sent because another refund of the same order went to WeChat less than a minute ago
 * (WeChat wants refunds of one order at least a minute apart). Nothing was sent; the row stays
 * PENDING and the caller's retry (compensation's next pass) sends it with the same out_refund_no.
 */
public final class RefundSpacingException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public RefundSpacingException(
      String tenantId, String orderId, String outRefundNo, String recentOutRefundNo) {
    super(
        "refund "
            + outRefundNo
            + " of order "
            + tenantId
            + "/"
            + orderId
            + " waits: refund "
            + recentOutRefundNo
            + " of the same order went to WeChat less than "
            + Refunds.WECHAT_SPACING.toSeconds()
            + " s ago");
  }
}
