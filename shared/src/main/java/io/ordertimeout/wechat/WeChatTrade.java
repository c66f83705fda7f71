package io.ordertimeout.wechat;

import java.util.Objects;

/**
 * A trade at WeChat Pay as the trade binding recorded it: WeChat keys trades by (mchid,
 * out_trade_no), and each such pair belongs to exactly one (tenant, order). Gateway calls take
 * this, never a bare order id.
 *
 * @param mchid the merchant the trade was created under; null for a trade created before bindings
 *     recorded it (it is then the tenant's merchant)
 */
public record WeChatTrade(String mchid, String outTradeNo) {

  public WeChatTrade {
    Objects.requireNonNull(outTradeNo, "outTradeNo");
  }

  /** A trade of the tenant's merchant, whichever it is (tests, and bindings without mchid). */
  public static WeChatTrade ofTenantMerchant(String outTradeNo) {
    return new WeChatTrade(null, outTradeNo);
  }
}
