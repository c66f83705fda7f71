package io.ordertimeout.wechat;

import java.time.Instant;
import java.util.Objects;

/**
 * What a JSAPI prepay needs from the order.
 *
 * @param trade the trade the order's binding names
 * @param timeExpire the order's deadline; WeChat refuses payment after it, so a user cannot pay an
 *     order the close path is about to close
 */
public record PrepayCommand(
    WeChatTrade trade, String description, long amountFen, String payerOpenId, Instant timeExpire) {

  /** A prepay of trade {@code outTradeNo} of the tenant's merchant. */
  public PrepayCommand(
      String outTradeNo,
      String description,
      long amountFen,
      String payerOpenId,
      Instant timeExpire) {
    this(WeChatTrade.ofTenantMerchant(outTradeNo), description, amountFen, payerOpenId, timeExpire);
  }

  public PrepayCommand {
    Objects.requireNonNull(trade, "trade");
    Objects.requireNonNull(description, "description");
    Objects.requireNonNull(payerOpenId, "payerOpenId");
    Objects.requireNonNull(timeExpire, "timeExpire");
    if (amountFen <= 0 || amountFen > Integer.MAX_VALUE) {
      // WeChat's amount.total is a 32-bit fen count
      throw new IllegalArgumentException(
          "amountFen out of range for " + trade.outTradeNo() + ": " + amountFen);
    }
  }

  public String outTradeNo() {
    return trade.outTradeNo();
  }
}
