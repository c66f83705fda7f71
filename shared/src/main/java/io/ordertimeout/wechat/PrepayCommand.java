package io.ordertimeout.wechat;

import java.time.Instant;
import java.util.Objects;

/**
 * What a JSAPI prepay needs from the order.
 *
 * @param timeExpire the order's deadline; WeChat refuses payment after it, so a user cannot pay an
 *     order the close path is about to close
 */
public record PrepayCommand(
    String outTradeNo, String description, long amountFen, String payerOpenId, Instant timeExpire) {

  public PrepayCommand {
    Objects.requireNonNull(outTradeNo, "outTradeNo");
    Objects.requireNonNull(description, "description");
    Objects.requireNonNull(payerOpenId, "payerOpenId");
    Objects.requireNonNull(timeExpire, "timeExpire");
    if (amountFen <= 0 || amountFen > Integer.MAX_VALUE) {
      // WeChat's amount.total is a 32-bit fen count
      throw new IllegalArgumentException(
          "amountFen out of range for " + outTradeNo + ": " + amountFen);
    }
  }
}
