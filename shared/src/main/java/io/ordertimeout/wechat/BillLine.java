package io.ordertimeout.wechat;

import java.time.LocalDateTime;

/**
 * One detail line of WeChat Pay's trade bill of type ALL: a payment (trade state SUCCESS) or a
 * refund (REFUND), with the amounts in fen. Only the columns reconciliation reads are kept.
 *
 * @param tradeTime 交易时间, Beijing wall-clock time as the bill writes it
 * @param subMchid 特约商户号 ("0" or empty outside service-provider mode)
 * @param tradeState 交易状态: SUCCESS, REFUND or REVOKED
 * @param settlementFen 应结订单金额
 * @param refundId 微信退款单号 (empty or "0" on a payment line)
 * @param outRefundNo 商户退款单号 (empty or "0" on a payment line)
 * @param refundFen 退款金额
 * @param refundStatus 退款状态 (SUCCESS, PROCESSING, ... on a refund line)
 * @param totalFen 订单金额
 * @param requestedRefundFen 申请退款金额
 */
public record BillLine(
    LocalDateTime tradeTime,
    String appid,
    String mchid,
    String subMchid,
    String transactionId,
    String outTradeNo,
    String tradeState,
    long settlementFen,
    String refundId,
    String outRefundNo,
    long refundFen,
    String refundStatus,
    long totalFen,
    long requestedRefundFen) {

  /**
   * The merchant whose trade the line is: 特约商户号 on a service provider's line (商户号 is then the
   * provider's, shared by all its sub-merchants), else 商户号.
   */
  public String tradeMchid() {
    return subMchid.isEmpty() || "0".equals(subMchid) ? mchid : subMchid;
  }

  public boolean payment() {
    return "SUCCESS".equals(tradeState);
  }

  public boolean refund() {
    return "REFUND".equals(tradeState);
  }
}
