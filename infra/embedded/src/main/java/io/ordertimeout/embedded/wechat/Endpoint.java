package io.ordertimeout.embedded.wechat;

/**
 * The WeChat Pay APIv3 endpoints the simulator serves; used to count calls and aim faults. Each
 * counts its partner form too (a service provider's call for a sub-merchant, {@link SubMerchants}):
 * PREPAY POST /v3/pay/partner/transactions/jsapi, QUERY and CLOSE under
 * /v3/pay/partner/transactions/out-trade-no/, REFUND and REFUND_QUERY with sub_mchid.
 */
public enum Endpoint {
  /** POST /v3/pay/transactions/jsapi */
  PREPAY,
  /** GET /v3/pay/transactions/out-trade-no/{out_trade_no}?mchid= */
  QUERY,
  /** POST /v3/pay/transactions/out-trade-no/{out_trade_no}/close */
  CLOSE,
  /** POST /v3/refund/domestic/refunds */
  REFUND,
  /** GET /v3/refund/domestic/refunds/{out_refund_no} */
  REFUND_QUERY
}
