package io.ordertimeout.payment;

import io.ordertimeout.wechat.WeChatTrade;

/**
 * Which WeChat trade an order uses (table wechat_trades), and whether calls may act on it.
 *
 * @param mchid null for a trade created before bindings recorded the merchant
 * @param problem why no WeChat call may name this trade; {@link Problem#NONE} when calls may
 */
public record TradeBinding(
    String tenantId, String orderId, String mchid, String outTradeNo, Problem problem) {

  /** Why a bound trade cannot be acted on. */
  public enum Problem {
    NONE,
    /**
     * The trade predates the recorded merchant, and another tenant's order of the same merchant
     * names the same out_trade_no: which of the two orders WeChat's trade belongs to cannot be
     * told.
     */
    SHARED_TRADE,
    /** The trade was created under another mchid than the tenant's merchant has now. */
    MERCHANT_CHANGED
  }

  public boolean reachable() {
    return problem == Problem.NONE;
  }

  /**
   * The trade to name in gateway calls.
   *
   * @throws IllegalStateException when the binding is not {@link #reachable()}
   */
  public WeChatTrade trade() {
    if (!reachable()) {
      throw new IllegalStateException(
          "the WeChat trade "
              + outTradeNo
              + " of order "
              + tenantId
              + "/"
              + orderId
              + " is unreachable: "
              + problem);
    }
    return new WeChatTrade(mchid, outTradeNo);
  }

  TradeBinding withProblem(Problem p) {
    return new TradeBinding(tenantId, orderId, mchid, outTradeNo, p);
  }
}
