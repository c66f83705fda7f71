package io.ordertimeout.close;

import static io.ordertimeout.testing.Deadlines.expireNow;
import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.ClosedOrder;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.wechat.Endpoint;
import io.ordertimeout.embedded.wechat.Fault;
import io.ordertimeout.embedded.wechat.SignedNotification;
import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import io.ordertimeout.payment.NotificationService;
import io.ordertimeout.testing.Await;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.testing.WeChatStackFixture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Step 2 of the close path through the real SDK against the WeChat Pay simulator. */
class OrderCloserWeChatTest extends WeChatStackFixture {
  @Override
  protected TestStack newStack() {
    // 500 ms read timeout: a hanging WeChat call fails fast enough for a test
    return TestStack.withWeChat("closer-wx", wechat, Duration.ofMillis(500));
  }

  @BeforeEach
  void seed() {
    stack.seedSku("sku-a", 5_000);
    stack.seedCoupon("cp-1", "u1");
  }

  /** Places and prepays an order, then moves its deadline just behind the DB's now. */
  private String duePrepaid(String orderId, String couponId) {
    stack.place(orderId, "u1", 600, couponId, new OrderItem("sku-a", 2));
    stack.app().prepays().prepay(TenantIds.DEFAULT, orderId, OPEN_ID, null);
    expireNow(stack, orderId);
    return orderId;
  }

  private CloseResult close(String... ids) {
    return stack.app().closer().close(TenantIds.DEFAULT, List.of(ids), CloseReason.TIMEOUT);
  }

  private String status(String orderId) {
    return stack.dump("SELECT status FROM orders WHERE order_id = '" + orderId + "'").get(0);
  }

  @Test
  void neverPrepaidOrdersMakeNoWeChatCall() {
    stack.place("plain-0001", "u1", 600, null, new OrderItem("sku-a", 1));
    expireNow(stack, "plain-0001");
    int queries = wechat.callCount(Endpoint.QUERY);
    int closes = wechat.callCount(Endpoint.CLOSE);

    CloseResult result = close("plain-0001");

    assertThat(result.closed()).extracting(ClosedOrder::orderId).containsExactly("plain-0001");
    assertThat(wechat.callCount(Endpoint.QUERY)).isEqualTo(queries);
    assertThat(wechat.callCount(Endpoint.CLOSE)).isEqualTo(closes);
  }

  @Test
  void aPrepaidUnpaidOrderIsClosedAtWeChatBeforeTheDatabase() {
    duePrepaid("pp-closed-01", "cp-1");

    CloseResult result = close("pp-closed-01");

    assertThat(result.closed()).extracting(ClosedOrder::orderId).containsExactly("pp-closed-01");
    assertThat(wechat.trade("pp-closed-01").orElseThrow().state())
        .isEqualTo(io.ordertimeout.embedded.wechat.TradeState.CLOSED);
    assertThat(status("pp-closed-01")).isEqualTo("CLOSED|");
    assertThat(stack.dump("SELECT status FROM coupons")).containsExactly("AVAILABLE|");
    assertThat(stack.app().timers().deadlineOf(TenantIds.DEFAULT, "pp-closed-01")).isEmpty();
  }

  @Test
  void aTradePaidAtWeChatWhoseNotificationWasLostTakesThePaidPath() {
    duePrepaid("pp-paid-001", "cp-1");
    String transactionId = wechat.pay("pp-paid-001").transactionId(); // no webhook: lost
    int closes = wechat.callCount(Endpoint.CLOSE);

    CloseResult result = close("pp-paid-001");

    assertThat(result.paid()).containsExactly("pp-paid-001");
    assertThat(result.closed()).isEmpty();
    assertThat(wechat.callCount(Endpoint.CLOSE)).isEqualTo(closes);
    assertThat(stack.dump("SELECT status, transaction_id FROM orders"))
        .containsExactly("PAID|" + transactionId + "|");
    assertThat(stack.count("SELECT COUNT(*) FROM stock_movements WHERE kind = 'SELL'"))
        .isEqualTo(1);
    assertThat(stack.dump("SELECT available, reserved, sold FROM stock"))
        .containsExactly("4998|0|2|");
    assertThat(stack.dump("SELECT status FROM coupons")).containsExactly("USED|");
    assertThat(stack.app().timers().deadlineOf(TenantIds.DEFAULT, "pp-paid-001")).isEmpty();
  }

  @Test
  void aUserPayingAtTheDeadlineIsDeferredNeverClosedAndThenPaid() {
    duePrepaid("pp-paying-01", "cp-1");
    wechat.setUserPaying("pp-paying-01");
    long before = stack.app().time().nowMillis();

    CloseResult deferred = close("pp-paying-01");
    long retryAt = stack.app().timers().deadlineOf(TenantIds.DEFAULT, "pp-paying-01").orElseThrow();
    wechat.pay("pp-paying-01");
    CloseResult paid = close("pp-paying-01");

    assertThat(deferred.deferred()).containsExactly("pp-paying-01");
    assertThat(deferred.closed()).isEmpty();
    assertThat(retryAt).isGreaterThanOrEqualTo(before + OrderCloser.USER_PAYING_RETRY.toMillis());
    assertThat(paid.paid()).containsExactly("pp-paying-01");
    assertThat(status("pp-paying-01")).isEqualTo("PAID|");
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE closed_at IS NOT NULL")).isZero();
  }

  @Test
  void wechat500sLeaveTheOrderUnpaidAndALaterPassClosesIt() {
    duePrepaid("pp-500-0001", "cp-1");
    wechat.injectFault(Endpoint.QUERY, Fault.SYSTEM_ERROR, 1);
    wechat.injectFault(Endpoint.QUERY, Fault.FREQUENCY_LIMITED, 1);

    CloseResult first = close("pp-500-0001");
    CloseResult second = close("pp-500-0001");
    String afterFailures = status("pp-500-0001");
    boolean timerKept =
        stack.app().timers().deadlineOf(TenantIds.DEFAULT, "pp-500-0001").isPresent();
    CloseResult third = close("pp-500-0001");

    assertThat(first.failed()).containsExactly("pp-500-0001");
    assertThat(second.failed()).containsExactly("pp-500-0001");
    assertThat(afterFailures).isEqualTo("UNPAID|");
    assertThat(timerKept).isTrue();
    assertThat(third.closed()).extracting(ClosedOrder::orderId).containsExactly("pp-500-0001");
    assertThat(stack.app().metrics().counter("close_wechat_failures")).isEqualTo(2);
  }

  @Test
  void aHangingWeChatCloseTimesOutLeavesTheOrderUnpaidAndIsRetried() {
    duePrepaid("pp-hang-0001", "cp-1");
    duePrepaid("pp-hang-0002", null);
    wechat.setHangTime(Duration.ofSeconds(3));
    wechat.injectFault(Endpoint.CLOSE, Fault.HANG, 1);

    CloseResult first = close("pp-hang-0001", "pp-hang-0002");
    CloseResult retry = close(first.failed().toArray(String[]::new));

    // one of the two hit the hanging close and timed out; the other closed in the same batch
    assertThat(first.failed()).hasSize(1);
    assertThat(first.closed()).hasSize(1);
    assertThat(retry.closed()).hasSize(1);
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE status = 'CLOSED'")).isEqualTo(2);
  }

  @Test
  void aPaymentDuringTheCloseIsAppliedOnceAndTheOrderNeverCloses() throws Exception {
    duePrepaid("pp-race-0001", "cp-1");
    int closes = wechat.callCount(Endpoint.CLOSE);
    try (WeChatPaySimulator.Gate closeCalls = wechat.hold(Endpoint.CLOSE)) {
      CompletableFuture<CloseResult> closing =
          CompletableFuture.supplyAsync(() -> close("pp-race-0001"));
      // the simulator counts a call on arrival and holds it: the closer has queried NOTPAY and
      // waits on its close call
      Await.until(
          "the closer's WeChat close call arrived",
          () -> wechat.callCount(Endpoint.CLOSE) > closes);
      wechat.pay("pp-race-0001");
      SignedNotification n = wechat.notification("pp-race-0001").build();
      NotificationService.Result notified =
          stack.app().notifications().handle("default", n.headers(), n.body());
      closeCalls.open();
      CloseResult result = closing.get();

      assertThat(notified).isEqualTo(NotificationService.Result.APPLIED);
      // WeChat answered the close with ORDERPAID; the re-query took the paid path (a no-op now)
      assertThat(result.paid()).containsExactly("pp-race-0001");
      assertThat(status("pp-race-0001")).isEqualTo("PAID|");
      assertThat(stack.count("SELECT COUNT(*) FROM stock_movements WHERE kind = 'SELL'"))
          .isEqualTo(1);
      assertThat(stack.count("SELECT COUNT(*) FROM stock_movements WHERE kind = 'RELEASE'"))
          .isZero();
    }
  }

  @Test
  void closeAnsweredOrderClosedIsClosedAndTheOrderClosesWithoutAConfirmingQuery() {
    duePrepaid("pp-oclosed-1", "cp-1");
    wechat.injectFault(Endpoint.CLOSE, Fault.ORDER_CLOSED, 1);
    int queries = wechat.callCount(Endpoint.QUERY);

    CloseResult result = close("pp-oclosed-1");

    assertThat(result.closed()).extracting(ClosedOrder::orderId).containsExactly("pp-oclosed-1");
    assertThat(wechat.callCount(Endpoint.QUERY) - queries).as("the query before the close").isOne();
    assertThat(stack.count("SELECT COUNT(*) FROM stock_movements WHERE kind = 'RELEASE'"))
        .isEqualTo(1);
    assertThat(stack.dump("SELECT status FROM coupons")).containsExactly("AVAILABLE|");
  }

  @Test
  void closeAnsweredSystemErrorFrequencyLimitedOrRuleLimitIsRetriedUntilWeChatCloses() {
    duePrepaid("pp-transient", "cp-1");
    wechat.injectFault(Endpoint.CLOSE, Fault.SYSTEM_ERROR, 1);
    wechat.injectFault(Endpoint.CLOSE, Fault.FREQUENCY_LIMITED, 1);
    wechat.injectFault(Endpoint.CLOSE, Fault.RULE_LIMIT, 1);

    List<CloseResult> refused =
        List.of(close("pp-transient"), close("pp-transient"), close("pp-transient"));
    String afterRefusals = status("pp-transient");
    boolean timerKept =
        stack.app().timers().deadlineOf(TenantIds.DEFAULT, "pp-transient").isPresent();
    CloseResult closed = close("pp-transient");

    assertThat(refused).allSatisfy(r -> assertThat(r.failed()).containsExactly("pp-transient"));
    assertThat(refused).allSatisfy(r -> assertThat(r.closed()).isEmpty());
    assertThat(afterRefusals).isEqualTo("UNPAID|");
    assertThat(timerKept).as("the claim lease brings it back").isTrue();
    assertThat(stack.app().metrics().counter("close_wechat_failures")).isEqualTo(3);
    assertThat(closed.closed()).extracting(ClosedOrder::orderId).containsExactly("pp-transient");
    assertThat(stack.count("SELECT COUNT(*) FROM stock_movements WHERE kind = 'RELEASE'"))
        .isEqualTo(1);
  }

  @Test
  void closeAnsweredUserPayingInEitherSpellingDefersTheOrder() {
    duePrepaid("pp-upaying-1", "cp-1");
    wechat.injectFault(Endpoint.CLOSE, Fault.USERPAYING, 1); // 202 with an error body
    wechat.injectFault(Endpoint.CLOSE, Fault.USER_PAYING, 1); // 400 USER_PAYING
    long before = stack.app().time().nowMillis();

    CloseResult first = close("pp-upaying-1");
    CloseResult second = close("pp-upaying-1");
    long retryAt = stack.app().timers().deadlineOf(TenantIds.DEFAULT, "pp-upaying-1").orElseThrow();
    CloseResult third = close("pp-upaying-1");

    assertThat(first.deferred()).containsExactly("pp-upaying-1");
    assertThat(second.deferred()).containsExactly("pp-upaying-1");
    assertThat(retryAt).isGreaterThanOrEqualTo(before + OrderCloser.USER_PAYING_RETRY.toMillis());
    assertThat(first.closed()).isEmpty();
    assertThat(second.closed()).isEmpty();
    assertThat(third.closed()).extracting(ClosedOrder::orderId).containsExactly("pp-upaying-1");
  }

  @Test
  void a204WhileThePayerPaysIsConfirmedByAQueryAndTakesThePaidPath() throws Exception {
    duePrepaid("pp-204-paid1", "cp-1");
    wechat.injectFault(Endpoint.CLOSE, Fault.NO_CONTENT, 1);
    int closes = wechat.callCount(Endpoint.CLOSE);
    try (WeChatPaySimulator.Gate closeCalls = wechat.hold(Endpoint.CLOSE)) {
      CompletableFuture<CloseResult> closing =
          CompletableFuture.supplyAsync(() -> close("pp-204-paid1"));
      // the closer queried NOTPAY and waits on its held close call; the payer pays meanwhile,
      // and WeChat answers the close 204 instead of ORDERPAID
      Await.until(
          "the closer's WeChat close call arrived",
          () -> wechat.callCount(Endpoint.CLOSE) > closes);
      String transactionId = wechat.pay("pp-204-paid1").transactionId(); // notification lost
      closeCalls.open();
      CloseResult result = closing.get();

      assertThat(result.paid()).containsExactly("pp-204-paid1");
      assertThat(result.closed()).isEmpty();
      assertThat(stack.dump("SELECT status, transaction_id, closed_at FROM orders"))
          .containsExactly("PAID|" + transactionId + "|null|");
      assertThat(stack.count("SELECT COUNT(*) FROM paid_after_close")).isZero();
      assertThat(stack.count("SELECT COUNT(*) FROM stock_movements WHERE kind = 'RELEASE'"))
          .isZero();
    }
  }

  @Test
  void a204ForATradeWeChatDoesNotKnowClosesNoOrderThatStoredAPrepayId() {
    duePrepaid("pp-204-gone1", "cp-1");
    wechat.forget(List.of("pp-204-gone1")); // the prepay answered, yet WeChat has no such trade
    wechat.injectFault(Endpoint.CLOSE, Fault.NO_CONTENT, 1);

    CloseResult result = close("pp-204-gone1");

    assertThat(result.failed()).containsExactly("pp-204-gone1");
    assertThat(status("pp-204-gone1")).isEqualTo("UNPAID|");
    assertThat(stack.app().metrics().counter("close_unconfirmed")).isEqualTo(1);
    assertThat(stack.app().timers().deadlineOf(TenantIds.DEFAULT, "pp-204-gone1")).isPresent();
    assertThat(stack.dump("SELECT status FROM coupons")).containsExactly("LOCKED|");
  }

  @Test
  void aTradeUnknownToWeChatOfAnOrderThatNeverStoredAPrepayIdCloses() {
    // marked prepaid, but its prepay never reached WeChat: no prepay_id, no trade
    stack.place("pp-neverwx-1", "u1", 600, "cp-1", new OrderItem("sku-a", 2));
    stack.update("UPDATE orders SET prepaid_at = NOW(3) WHERE order_id = 'pp-neverwx-1'");
    expireNow(stack, "pp-neverwx-1");
    wechat.injectFault(Endpoint.CLOSE, Fault.NO_CONTENT, 1);

    CloseResult result = close("pp-neverwx-1");

    assertThat(result.closed()).extracting(ClosedOrder::orderId).containsExactly("pp-neverwx-1");
    assertThat(stack.dump("SELECT status FROM coupons")).containsExactly("AVAILABLE|");
    assertThat(stack.app().metrics().counter("close_unconfirmed")).isZero();
  }

  /**
   * Measures, does not assert: N prepaid orders (200 in the default build; -Dotc.bench.prepaid=2000
   * for the full figure), 20 ms per WeChat call (query + close each).
   */
  @Tag("integration")
  @Test
  void throughputOfClosingPrepaidOrdersWithSlowWeChat() {
    int n = Integer.getInteger("otc.bench.prepaid", 200);
    stack.seedSku("sku-bulk", 10_000);
    List<String> ids =
        stack.bulkPlace("bulkpp", n, Duration.ofMinutes(10), i -> new OrderItem("sku-bulk", 1));
    for (String id : ids) {
      stack
          .app()
          .gateway()
          .prepay(
              "default",
              new io.ordertimeout.wechat.PrepayCommand(
                  id, "bulk", 100, OPEN_ID, java.time.Instant.now().plus(Duration.ofMinutes(10))));
    }
    stack.update(
        "UPDATE orders SET prepay_id = 'sim', prepaid_at = NOW(3), expire_at = TIMESTAMPADD(MICROSECOND, -1000, NOW(3)) WHERE order_id LIKE 'bulkpp%'");
    wechat.setLatency(Endpoint.QUERY, Duration.ofMillis(20));
    wechat.setLatency(Endpoint.CLOSE, Duration.ofMillis(20));
    try {
      long started = System.nanoTime();
      List<CloseResult> results = new ArrayList<>();
      for (int from = 0; from < ids.size(); from += 500) {
        results.add(
            stack
                .app()
                .closer()
                .close(
                    TenantIds.DEFAULT,
                    ids.subList(from, Math.min(ids.size(), from + 500)),
                    CloseReason.TIMEOUT));
      }
      long millis = (System.nanoTime() - started) / 1_000_000;
      long closed = results.stream().mapToLong(r -> r.closed().size()).sum();
      long failed = results.stream().mapToLong(r -> r.failed().size()).sum();
      System.out.printf(
          "close throughput: %d of %d prepaid orders closed in %d ms (%.0f orders/s; %d left for"
              + " the next pass), 20 ms per WeChat call, batches of 500, 16 concurrent calls%n",
          closed, n, millis, closed * 1000.0 / millis, failed);
      // whatever a busy machine timed out is closed by later passes, never lost
      for (int pass = 0;
          pass < 5 && stack.count("SELECT COUNT(*) FROM orders WHERE status = 'UNPAID'") > 0;
          pass++) {
        stack.app().closer().close(TenantIds.DEFAULT, ids, CloseReason.TIMEOUT);
      }
      assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE status = 'CLOSED'")).isEqualTo(n);
    } finally {
      wechat.setLatency(Endpoint.QUERY, Duration.ZERO);
      wechat.setLatency(Endpoint.CLOSE, Duration.ZERO);
    }
  }
}
