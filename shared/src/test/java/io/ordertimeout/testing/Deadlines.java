package io.ordertimeout.testing;

import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.redis.TimerIndex;

/** Makes orders due now instead of waiting for their deadline. */
public final class Deadlines {
  private Deadlines() {}

  /**
   * Moves {@code orderId}'s deadline 1 ms into the past, in MariaDB ({@code expire_at}, by the DB's
   * own clock as the closer compares it) and, if the order has a timer, its score in Redis: the
   * next close or sweep sees it due without the test sleeping. A missing timer stays missing (ZADD
   * XX), so tests of an order without one keep testing that.
   */
  public static void expireNow(TestStack stack, String orderId) {
    int rows =
        stack.update(
            "UPDATE orders SET expire_at = TIMESTAMPADD(MICROSECOND, -1000, NOW(3))"
                + " WHERE order_id = ?",
            orderId);
    if (rows != 1) {
      throw new IllegalStateException("expireNow: no order " + orderId);
    }
    TimerIndex timers = stack.app().timers();
    long pastMillis = stack.app().time().nowMillis() - 1;
    stack
        .app()
        .redis()
        .sync()
        .zadd(
            timers.timersKey(
                TenantIds.DEFAULT, timers.shardOf(orderId), DeadlineKind.PAYMENT_TIMEOUT),
            io.lettuce.core.ZAddArgs.Builder.xx(),
            pastMillis,
            orderId);
  }
}
