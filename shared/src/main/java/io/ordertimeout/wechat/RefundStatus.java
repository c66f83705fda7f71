package io.ordertimeout.wechat;

/** WeChat's refund status, plus NOT_FOUND for an out_refund_no WeChat does not know. */
public enum RefundStatus {
  PROCESSING,
  SUCCESS,
  CLOSED,
  ABNORMAL,
  NOT_FOUND
}
