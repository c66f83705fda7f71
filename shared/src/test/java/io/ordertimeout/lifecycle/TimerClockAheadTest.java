package io.ordertimeout.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.config.DeadlineSettings;
import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.payment.PaidTrade;
import io.ordertimeout.redis.TimeSource;
import io.ordertimeout.redis.TimerIndex;
import io.ordertimeout.testing.TestStack;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The timer clock (Redis TIME in production) runs 500 ms ahead of MySQL's NOW(3): every lifecycle
 * and coupon timer is claimed 500 ms before the database says it is due. The claim must cost one
 * early claim, not a claim per poll for those 500 ms; and a LOCKED coupon claimed early keeps its
 * timer, so it still expires at its validity when its order closes before then.
 *
 * <p>The sweep is driven here one pass at a time, as TimeoutSweeper does (claim at the timer
 * clock's now, apply the kind's handler, poll again when the shard's next score has come), so the
 * claims of one timer can be counted. Before the fix: 60-140 claims of one timer, and the LOCKED
 * coupon stayed AVAILABLE past its validity.
 */
class TimerClockAheadTest {
  private static final long AHEAD_MS = 500;

  /** A poll of the tests' sweep (OTC_SWEEP_POLL_MS is 20; 2 ms makes a busy loop show at once). */
  private static final long POLL_MS = 2;

  private final TimeSource ahead = () -> System.currentTimeMillis() + AHEAD_MS;
  private TestStack stack;

  @BeforeEach
  void setUp() {
    stack =
        TestStack.create(
            "life-ahead",
            c ->
                c.toBuilder()
                    .deadlines(
                        new DeadlineSettings(
                            Duration.ofSeconds(1), Duration.ofDays(3), Duration.ofSeconds(1), 200))
                    .build(),
            ahead);
    stack.seedSku("a", 10);
  }

  @AfterEach
  void close() {
    stack.close();
  }

  private void placeAndPay(String orderId) {
    stack.place(orderId, "u1", 600, null, new OrderItem("a", 1));
    stack
        .app()
        .payments()
        .apply(
            new PaidTrade("default", orderId, "tx-" + orderId, 100, null, PaidTrade.Source.NOTIFY));
  }

  /** Sweeps one timer until {@code done} holds (or 10 s): answers how many times it was claimed. */
  private int claimsUntil(DeadlineKind kind, String subject, BooleanSupplier done)
      throws InterruptedException {
    return claims(kind, subject, done, Integer.MAX_VALUE);
  }

  /** As above, stopping after at most {@code maxClaims} claims. */
  private int claims(DeadlineKind kind, String subject, BooleanSupplier done, int maxClaims)
      throws InterruptedException {
    TimerIndex timers = stack.app().timers();
    DueHandlers.Handler handler =
        DueHandlers.of(stack.app().transitions(), stack.app().coupons()).get(kind);
    TimerIndex.TimerSet set = new TimerIndex.TimerSet(TenantIds.DEFAULT, kind);
    int claims = 0;
    long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!done.getAsBoolean() && claims < maxClaims && System.nanoTime() < end) {
      List<String> claimed =
          timers
              .claimDue(timers.shardOf(subject), ahead.nowMillis(), 30_000, Map.of(set, 10))
              .get(set);
      if (claimed.contains(subject)) {
        claims++;
        handler.apply(TenantIds.DEFAULT, claimed);
      }
      Thread.sleep(POLL_MS);
    }
    return claims;
  }

  private String status(String table, String idColumn, String id) {
    return stack
        .dump("SELECT status FROM " + table + " WHERE " + idColumn + " = '" + id + "'")
        .get(0)
        .replace("|", "");
  }

  @Test
  void aReceiptTimerClaimedEarlyIsClaimedAgainOnlyWhenTheDatabaseSaysItIsDue() throws Exception {
    placeAndPay("ord_ahead1");
    stack
        .app()
        .transitions()
        .applyRoute(
            Transition.SHIP,
            TenantIds.DEFAULT,
            "ord_ahead1",
            Map.of(Transition.Param.CARRIER, "SF", Transition.Param.TRACKING_NO, "SF1"));

    int claims =
        claimsUntil(
            DeadlineKind.AUTO_RECEIPT,
            "ord_ahead1",
            () -> status("orders", "order_id", "ord_ahead1").equals("RECEIVED"));

    assertThat(status("orders", "order_id", "ord_ahead1")).isEqualTo("RECEIVED");
    assertThat(claims).as("claims of one receipt timer").isBetween(1, 3);
    // never before the deadline by the database clock
    assertThat(stack.dump("SELECT received_by, received_at >= receive_due_at FROM orders"))
        .containsExactly("AUTO|1|");
  }

  @Test
  void aCouponTimerClaimedEarlyIsClaimedAgainOnlyWhenTheDatabaseSaysItIsDue() throws Exception {
    stack.app().coupons().issue("cp-ahead", "default", "u1", Instant.now().plusSeconds(1));

    int claims =
        claimsUntil(
            DeadlineKind.COUPON_EXPIRY,
            "cp-ahead",
            () -> status("coupons", "coupon_id", "cp-ahead").equals("EXPIRED"));

    assertThat(claims).as("claims of one coupon timer").isBetween(1, 3);
    assertThat(stack.dump("SELECT status, expired_at >= valid_until FROM coupons"))
        .containsExactly("EXPIRED|1|");
  }

  /**
   * The coupon's timer is claimed while its order holds it and its validity has 500 ms left by
   * MySQL; the order closes within them, so the coupon is AVAILABLE again, and must expire when its
   * validity ends. Before the fix the early claim removed the timer: AVAILABLE for good.
   */
  @Test
  void aLockedCouponClaimedEarlyStillExpiresAtItsValidityAfterItsOrderCloses() throws Exception {
    stack.app().coupons().issue("cp-held", "default", "u1", Instant.now().plusMillis(1_500));
    stack.place("ord_ahead2", "u1", 600, "cp-held", new OrderItem("a", 1));
    DeadlineKind kind = DeadlineKind.COUPON_EXPIRY;

    int first = claims(kind, "cp-held", () -> false, 1);
    stack.app().closer().close(TenantIds.DEFAULT, List.of("ord_ahead2"), CloseReason.OPERATOR);
    assertThat(stack.dump("SELECT status, valid_until > NOW(3) FROM coupons"))
        .as("the order closed before the coupon's validity ended")
        .containsExactly("AVAILABLE|1|");

    int later =
        claimsUntil(
            kind, "cp-held", () -> status("coupons", "coupon_id", "cp-held").equals("EXPIRED"));

    assertThat(first).isEqualTo(1);
    assertThat(status("coupons", "coupon_id", "cp-held")).isEqualTo("EXPIRED");
    assertThat(later).as("claims after the close").isBetween(1, 3);
    assertThat(stack.dump("SELECT expired_at >= valid_until, locked_by_order FROM coupons"))
        .containsExactly("1|null|");
    stack.assertInvariants();
  }
}
