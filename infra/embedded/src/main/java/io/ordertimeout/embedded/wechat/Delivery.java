package io.ordertimeout.embedded.wechat;

import java.time.Instant;

/**
 * One attempt to deliver a notification to the webhook.
 *
 * @param attempt 1 for the first try, 2.. for WeChat's retries
 * @param status the webhook's HTTP status, or -1 when the connection failed or timed out
 */
public record Delivery(
    String notificationId, String outTradeNo, int attempt, int status, Instant at) {

  public boolean accepted() {
    return status >= 200 && status < 300;
  }
}
