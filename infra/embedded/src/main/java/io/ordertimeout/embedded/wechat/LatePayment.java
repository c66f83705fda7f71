package io.ordertimeout.embedded.wechat;

import java.time.Instant;

/**
 * A payment the payer makes later ({@link WeChatPaySimulator#payLater}), and how it went.
 *
 * @param detail why WeChat refused it (e.g. "cannot pay X in state CLOSED"); empty otherwise
 */
public record LatePayment(Instant dueAt, Outcome outcome, String detail) {

  /** PENDING until due; then PAID, or REFUSED because the trade was closed or expired. */
  public enum Outcome {
    PENDING,
    PAID,
    REFUSED
  }

  static LatePayment pending(Instant dueAt) {
    return new LatePayment(dueAt, Outcome.PENDING, "");
  }

  LatePayment paid() {
    return new LatePayment(dueAt, Outcome.PAID, "");
  }

  LatePayment refused(String why) {
    return new LatePayment(dueAt, Outcome.REFUSED, why);
  }
}
