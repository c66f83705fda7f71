package io.ordertimeout.close;

import static io.ordertimeout.testing.Deadlines.expireNow;
import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.compensation.CompensationReport;
import io.ordertimeout.compensation.CompensationSettings;
import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.ClosedOrder;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.wechat.TradeState;
import io.ordertimeout.metrics.MetricNames;
import io.ordertimeout.testing.Await;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.testing.WeChatStackFixture;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The USERPAYING deferral is bounded: past OTC_USERPAYING_LIMIT_MS (5 min by default) after the
 * deadline, an order whose payer is still at the password sheet is flagged, counted and looked at
 * once per compensation period instead of every 5 s, and compensation settles it by query. Real SDK
 * against the simulator; every test ends with the invariant checker (the fixture).
 */
class UserPayingLimitTest extends WeChatStackFixture {
  @Override
  protected TestStack newStack() {
    return TestStack.withWeChat("userpaying", wechat);
  }

  @BeforeEach
  void seed() {
    stack.seedSku("sku-a", 100);
    stack.seedCoupon("cp-1", "u1");
  }

  /** Places and prepays an order; its payer starts paying; its deadline is {@code ago} behind. */
  private void payingSince(String orderId, int timeoutSeconds, Duration ago) {
    stack.place(orderId, "u1", timeoutSeconds, "cp-1", new OrderItem("sku-a", 2));
    stack.app().prepays().prepay(TenantIds.DEFAULT, orderId, OPEN_ID, null);
    wechat.setUserPaying(orderId);
    expireNow(stack, orderId);
    stack.update(
        "UPDATE orders SET expire_at = TIMESTAMPADD(MICROSECOND, ?, NOW(3)) WHERE order_id = ?",
        -ago.toNanos() / 1_000,
        orderId);
  }

  private CloseResult close(String orderId) {
    return stack.app().closer().close(TenantIds.DEFAULT, List.of(orderId), CloseReason.TIMEOUT);
  }

  private CompensationReport compensate() {
    return stack.app().newCompensator(CompensationSettings.defaults()).run();
  }

  private long timer(String orderId) {
    return stack.app().timers().deadlineOf(TenantIds.DEFAULT, orderId).orElseThrow();
  }

  private String flag(String orderId) {
    List<String> rows =
        stack.dump(
            "SELECT seen_count, resolved_at IS NULL FROM compensation_flags"
                + " WHERE kind = 'USERPAYING_STUCK' AND subject = '"
                + orderId
                + "'");
    return rows.isEmpty() ? "none" : rows.get(0);
  }

  private long stuckCount() {
    return stack.app().metrics().counter(MetricNames.ORDERS_USERPAYING_STUCK);
  }

  @Test
  void withinTheLimitThePayerIsAskedAgainIn5SecondsAndNothingIsFlagged() {
    payingSince("up-within-01", 600, Duration.ofMinutes(1));
    long before = stack.app().time().nowMillis();

    CloseResult result = close("up-within-01");

    assertThat(result.deferred()).containsExactly("up-within-01");
    assertThat(timer("up-within-01"))
        .isGreaterThanOrEqualTo(before + OrderCloser.USER_PAYING_RETRY.toMillis())
        .isLessThan(before + OrderCloser.USER_PAYING_STUCK_RETRY.toMillis());
    assertThat(flag("up-within-01")).isEqualTo("none");
    assertThat(stuckCount()).isZero();
  }

  @Test
  void aPayerWhoWalksAwayFromTheSheetIsFlaggedThenClosedByCompensationOnce() {
    payingSince("up-abandon-1", 600, Duration.ofMinutes(10));
    long before = stack.app().time().nowMillis();

    CloseResult deferred = close("up-abandon-1");
    long retryAt = timer("up-abandon-1");
    String flagged = flag("up-abandon-1");
    wechat.abandonPayment("up-abandon-1"); // USERPAYING -> NOTPAY at WeChat
    CompensationReport settled = compensate();
    CompensationReport again = compensate();

    assertThat(deferred.deferred()).containsExactly("up-abandon-1");
    assertThat(deferred.closed()).isEmpty();
    // past the limit: no 5 s retry, one compensation period
    assertThat(retryAt)
        .isGreaterThanOrEqualTo(before + OrderCloser.USER_PAYING_STUCK_RETRY.toMillis());
    assertThat(flagged).isEqualTo("1|1|");
    assertThat(stuckCount()).isEqualTo(1);
    assertThat(settled.count("missed_by_redis")).isEqualTo(1);
    assertThat(settled.count("userpaying_stuck_resolved")).isEqualTo(1);
    assertThat(again.count("missed_by_redis")).isZero();
    assertThat(stack.dump("SELECT status, close_reason FROM orders"))
        .containsExactly("CLOSED|TIMEOUT|");
    assertThat(wechat.trade("up-abandon-1").orElseThrow().state()).isEqualTo(TradeState.CLOSED);
    assertThat(stack.count("SELECT COUNT(*) FROM stock_movements WHERE kind = 'RELEASE'"))
        .isEqualTo(1);
    assertThat(stack.dump("SELECT available, reserved, sold FROM stock"))
        .containsExactly("100|0|0|");
    assertThat(stack.dump("SELECT status, locked_by_order FROM coupons"))
        .containsExactly("AVAILABLE|null|");
    assertThat(flag("up-abandon-1")).isEqualTo("1|0|");
    assertThat(stack.app().timers().deadlineOf(TenantIds.DEFAULT, "up-abandon-1")).isEmpty();
    assertThat(stuckCount()).isEqualTo(1);
  }

  @Test
  void aPayerWhoCompletesAfterTimeExpireIsPaidAndNeverClosed() {
    // time_expire at WeChat is the order's deadline, 3 s out; the payer is at the sheet before it
    payingSince("up-late-pay1", 3, Duration.ofMinutes(10));
    Instant timeExpire = wechat.trade("up-late-pay1").orElseThrow().timeExpire();
    Await.until("WeChat's time_expire passed", () -> Instant.now().isAfter(timeExpire));

    CloseResult deferred = close("up-late-pay1");
    String transactionId = wechat.pay("up-late-pay1").transactionId(); // accepted past time_expire
    CompensationReport settled = compensate();

    assertThat(deferred.deferred()).containsExactly("up-late-pay1");
    assertThat(settled.count("overdue_paid_at_wechat")).isEqualTo(1);
    assertThat(settled.count("userpaying_stuck_resolved")).isEqualTo(1);
    assertThat(stack.dump("SELECT status, transaction_id, closed_at FROM orders"))
        .containsExactly("PAID|" + transactionId + "|null|");
    assertThat(stack.count("SELECT COUNT(*) FROM stock_movements WHERE kind = 'SELL'"))
        .isEqualTo(1);
    assertThat(stack.count("SELECT COUNT(*) FROM stock_movements WHERE kind = 'RELEASE'")).isZero();
    assertThat(stack.dump("SELECT status FROM coupons")).containsExactly("USED|");
    assertThat(stack.count("SELECT COUNT(*) FROM paid_after_close")).isZero();
    assertThat(flag("up-late-pay1")).isEqualTo("1|0|");
  }

  @Test
  void aPayerWhoNeverLeavesTheSheetStaysFlaggedCountedAndOpenAtCompensationsCadence() {
    payingSince("up-forever-1", 600, Duration.ofMinutes(10));

    CloseResult first = close("up-forever-1");
    CompensationReport pass1 = compensate();
    long before = stack.app().time().nowMillis();
    CompensationReport pass2 = compensate();

    assertThat(first.deferred()).containsExactly("up-forever-1");
    assertThat(pass1.count("overdue_left_open")).isEqualTo(1);
    assertThat(pass2.count("overdue_left_open")).isEqualTo(1);
    assertThat(pass2.count("userpaying_stuck_resolved")).isZero();
    // each look counts (the alarm's metric) and is one more sighting of the one flag
    assertThat(stuckCount()).isEqualTo(3);
    assertThat(flag("up-forever-1")).isEqualTo("3|1|");
    assertThat(timer("up-forever-1"))
        .isGreaterThanOrEqualTo(before + OrderCloser.USER_PAYING_STUCK_RETRY.toMillis());
    assertThat(stack.dump("SELECT status FROM orders")).containsExactly("UNPAID|");
    assertThat(stack.dump("SELECT status FROM coupons")).containsExactly("LOCKED|");
    assertThat(stack.dump("SELECT available, reserved, sold FROM stock"))
        .containsExactly("98|2|0|");
    assertThat(wechat.trade("up-forever-1").orElseThrow().state()).isEqualTo(TradeState.USERPAYING);
  }

  @Test
  void aPayerWhoWalksAwayLaterInTheSimulatorEndsClosedThroughTheSweepPath() {
    payingSince("up-walks-01", 600, Duration.ofMinutes(10));
    wechat.abandonPayment("up-walks-01");
    // walks away 3 s from now: long after the close below has asked
    wechat.setUserPaying("up-walks-01", Duration.ofSeconds(3));

    CloseResult deferred = close("up-walks-01");
    Await.until(
        "the payer walked away",
        () -> wechat.trade("up-walks-01").orElseThrow().state() == TradeState.NOTPAY);
    CloseResult closed = close("up-walks-01");

    assertThat(deferred.deferred()).containsExactly("up-walks-01");
    assertThat(closed.closed()).extracting(ClosedOrder::orderId).containsExactly("up-walks-01");
    assertThat(stack.count("SELECT COUNT(*) FROM stock_movements WHERE kind = 'RELEASE'"))
        .isEqualTo(1);
    assertThat(stack.dump("SELECT status FROM coupons")).containsExactly("AVAILABLE|");
  }
}
