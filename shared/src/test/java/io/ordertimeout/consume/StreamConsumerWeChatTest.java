package io.ordertimeout.consume;

import static io.ordertimeout.testing.Deadlines.expireNow;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.models.stream.PendingMessage;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.wechat.Endpoint;
import io.ordertimeout.embedded.wechat.Fault;
import io.ordertimeout.embedded.wechat.TradeState;
import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import io.ordertimeout.stream.EventStream;
import io.ordertimeout.stream.OrderEvents;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.wechat.PrepayCommand;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The consumer acknowledges an entry only when its close had a definite outcome; entries of prepaid
 * orders that WeChat could not settle stay pending and are retried, through the real SDK against
 * the WeChat Pay simulator.
 */
class StreamConsumerWeChatTest {
  static final String OPEN_ID = "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o";
  static WeChatPaySimulator wechat;
  private TestStack stack;

  @BeforeAll
  static void startWeChat() {
    wechat = WeChatPaySimulator.start();
    // a HANG answers after 2 s, long after the 500 ms read timeout below gave up on it
    wechat.setHangTime(Duration.ofSeconds(2));
  }

  @AfterAll
  static void stopWeChat() {
    wechat.close();
  }

  @AfterEach
  void tearDown() {
    if (stack != null) {
      stack.close();
    }
  }

  /**
   * A stack whose pending entries are claimed again after {@code visibilityMillis} idle and whose
   * WeChat calls give up after 500 ms.
   */
  private void start(String hint, int maxDeliveries, int visibilityMillis) {
    stack =
        TestStack.withOverrides(
            hint,
            Map.of(
                "OTC_STREAM_VISIBILITY_MS", Integer.toString(visibilityMillis),
                "OTC_STREAM_MAX_DELIVERIES", Integer.toString(maxDeliveries)),
            TestStack.gatewayFor(wechat, Duration.ofMillis(500)));
    stack.seedSku("sku-1", 10);
    stack.seedCoupon("cp-1", "u1");
    stack.app().stream().ensureGroup();
  }

  /**
   * Places an order and opens its trade at WeChat, then marks the row prepaid the way PrepayService
   * does: what the consumer sees of a prepay is the trade and the marker, nothing else.
   */
  private void placePrepaid(String orderId, String couponId) {
    stack.place(orderId, "u1", 600, couponId, new OrderItem("sku-1", 2));
    stack
        .app()
        .gateway()
        .prepay(
            "default",
            new PrepayCommand(
                orderId, "test", 100, OPEN_ID, Instant.now().plus(Duration.ofMinutes(10))));
    stack.update(
        "UPDATE orders SET prepay_id = ?, prepaid_at = NOW(3) WHERE order_id = ?",
        "wx-" + orderId,
        orderId);
  }

  private List<PendingMessage> pendingEntries() {
    return stack
        .app()
        .redis()
        .sync()
        .xpending(
            stack.app().stream().key(), EventStream.GROUP, Range.create("-", "+"), Limit.from(100));
  }

  private String newestEntry() {
    return stack
        .app()
        .redis()
        .sync()
        .xrevrange(stack.app().stream().key(), Range.create("-", "+"), Limit.from(1))
        .get(0)
        .getId();
  }

  private String row(String orderId) {
    return stack
        .dump("SELECT status, close_reason FROM orders WHERE order_id = '" + orderId + "'")
        .get(0);
  }

  @Test
  void aCancelAndACloseDueWhoseWeChatCloseFailsStayPendingAndCloseOnceWeChatRecovers() {
    // 1 s: the pass right after the failures does not retry them yet, so the test sees them pending
    start("stream-wx-fail", 5, 1_000);
    placePrepaid("wxfail-cancel", "cp-1");
    placePrepaid("wxfail-due01", null);
    expireNow(stack, "wxfail-due01");
    String cancel = stack.app().events().cancelRequested("wxfail-cancel", "default", "u1");
    stack
        .app()
        .events()
        .closeDue(
            TenantIds.DEFAULT, List.of("wxfail-due01"), OrderEvents.HandOffCause.CLOSE_FAILED);
    String closeDue = newestEntry();
    // The cancel's WeChat close answers 500 SYSTEM_ERROR, the close_due's hangs past the timeout.
    wechat.injectFault(Endpoint.CLOSE, Fault.SYSTEM_ERROR, 1);
    wechat.injectFault(Endpoint.CLOSE, Fault.HANG, 1);
    int closes = wechat.callCount(Endpoint.CLOSE);

    ConsumerStats failing =
        StreamConsumerTest.consumeUntil(
            stack, () -> wechat.callCount(Endpoint.CLOSE) >= closes + 2);

    // Neither entry was acknowledged: both wait in the group's pending list, delivered once.
    assertThat(pendingEntries())
        .extracting(PendingMessage::getId, PendingMessage::getRedeliveryCount)
        .containsExactlyInAnyOrder(tuple(cancel, 1L), tuple(closeDue, 1L));
    assertThat(failing.failed()).isEqualTo(2);
    assertThat(failing.closed()).isZero();
    assertThat(row("wxfail-cancel")).isEqualTo("UNPAID|null|");
    assertThat(row("wxfail-due01")).isEqualTo("UNPAID|null|");
    assertThat(stack.dump("SELECT available, reserved FROM stock")).containsExactly("6|4|");
    assertThat(stack.dump("SELECT status, locked_by_order FROM coupons"))
        .containsExactly("LOCKED|wxfail-cancel|");

    // WeChat answers again: the next claim of the idle entries closes both and acknowledges them.
    ConsumerStats recovered =
        StreamConsumerTest.consumeUntil(stack, () -> pendingEntries().isEmpty());

    assertThat(pendingEntries()).isEmpty();
    assertThat(recovered.closed()).isEqualTo(2);
    assertThat(recovered.failed()).isZero();
    assertThat(row("wxfail-cancel")).isEqualTo("CLOSED|USER_CANCEL|");
    assertThat(row("wxfail-due01")).isEqualTo("CLOSED|TIMEOUT|");
    assertThat(wechat.trade("wxfail-cancel").orElseThrow().state()).isEqualTo(TradeState.CLOSED);
    assertThat(wechat.trade("wxfail-due01").orElseThrow().state()).isEqualTo(TradeState.CLOSED);
    assertThat(stack.dump("SELECT available, reserved FROM stock")).containsExactly("10|0|");
    assertThat(stack.dump("SELECT status, locked_by_order FROM coupons"))
        .containsExactly("AVAILABLE|null|");
    assertThat(stack.count("SELECT COUNT(*) FROM stock_movements WHERE kind = 'RELEASE'"))
        .isEqualTo(2);
    assertThat(stack.count("SELECT COUNT(*) FROM dead_letters")).isZero();
    var redis = stack.app().redis().sync();
    assertThat(redis.exists(stack.app().stream().errorsKey(cancel))).isZero();
    assertThat(redis.exists(stack.app().stream().errorsKey(closeDue))).isZero();
    stack.assertInvariants();
  }

  @Test
  void aCancelOfAnOrderWhosePayerIsPayingIsNeitherClosedNorAckedNorDeadLettered() {
    // Two deliveries would dead-letter a failing entry: deferrals must not use up that budget.
    start("stream-wx-paying", 2, 300);
    placePrepaid("paying-00001", "cp-1");
    wechat.setUserPaying("paying-00001");
    String cancel = stack.app().events().cancelRequested("paying-00001", "default", "u1");
    int queries = wechat.callCount(Endpoint.QUERY);
    int closes = wechat.callCount(Endpoint.CLOSE);

    StreamConsumerTest.consumeUntil(
        stack,
        () ->
            wechat.callCount(Endpoint.QUERY) >= queries + 4
                // what the old consumer did: acknowledge after the first deferral
                || (wechat.callCount(Endpoint.QUERY) > queries && pendingEntries().isEmpty()));

    assertThat(wechat.callCount(Endpoint.QUERY)).isGreaterThanOrEqualTo(queries + 4);
    assertThat(wechat.callCount(Endpoint.CLOSE)).isEqualTo(closes);
    assertThat(pendingEntries()).extracting(PendingMessage::getId).containsExactly(cancel);
    assertThat(stack.app().metrics().counter("stream_deferred")).isGreaterThanOrEqualTo(4);
    assertThat(stack.count("SELECT COUNT(*) FROM dead_letters")).isZero();
    assertThat(row("paying-00001")).isEqualTo("UNPAID|null|");
    assertThat(stack.dump("SELECT available, reserved FROM stock")).containsExactly("8|2|");
    assertThat(stack.dump("SELECT status FROM coupons")).containsExactly("LOCKED|");

    // The payer finishes paying (its notification is lost): the next delivery takes the paid path.
    wechat.pay("paying-00001");
    ConsumerStats paid = StreamConsumerTest.consumeUntil(stack, () -> pendingEntries().isEmpty());

    assertThat(pendingEntries()).isEmpty();
    assertThat(paid.deadLettered()).isZero();
    assertThat(row("paying-00001")).isEqualTo("PAID|null|");
    assertThat(stack.dump("SELECT available, reserved, sold FROM stock")).containsExactly("8|0|2|");
    assertThat(stack.dump("SELECT status FROM coupons")).containsExactly("USED|");
    assertThat(stack.count("SELECT COUNT(*) FROM paid_after_close")).isZero();
    assertThat(stack.count("SELECT COUNT(*) FROM dead_letters")).isZero();
    stack.assertInvariants();
  }

  @Test
  void aCloseDueWhosePayerStaysPayingPastTheLimitIsAcknowledgedAndLeftToItsTimer() {
    start("stream-wx-stuck", 2, 300);
    placePrepaid("stuck-00001", "cp-1");
    wechat.setUserPaying("stuck-00001");
    expireNow(stack, "stuck-00001");
    stack.update(
        "UPDATE orders SET expire_at = TIMESTAMPADD(MINUTE, -10, NOW(3))"
            + " WHERE order_id = 'stuck-00001'");
    stack
        .app()
        .events()
        .closeDue(TenantIds.DEFAULT, List.of("stuck-00001"), OrderEvents.HandOffCause.CLOSE_FAILED);
    long before = stack.app().time().nowMillis();

    StreamConsumerTest.consumeUntil(
        stack,
        () ->
            stack.app().metrics().counter("orders_userpaying_stuck") > 0
                && pendingEntries().isEmpty());

    assertThat(pendingEntries()).isEmpty();
    assertThat(stack.count("SELECT COUNT(*) FROM dead_letters")).isZero();
    assertThat(row("stuck-00001")).isEqualTo("UNPAID|null|");
    assertThat(stack.app().metrics().counter("orders_userpaying_stuck")).isEqualTo(1);
    assertThat(
            stack.dump(
                "SELECT seen_count, resolved_at IS NULL FROM compensation_flags"
                    + " WHERE kind = 'USERPAYING_STUCK'"))
        .containsExactly("1|1|");
    assertThat(stack.app().timers().deadlineOf(TenantIds.DEFAULT, "stuck-00001").orElseThrow())
        .isGreaterThanOrEqualTo(before + Duration.ofMinutes(5).toMillis());
    assertThat(stack.dump("SELECT status FROM coupons")).containsExactly("LOCKED|");
    stack.assertInvariants();
  }
}
