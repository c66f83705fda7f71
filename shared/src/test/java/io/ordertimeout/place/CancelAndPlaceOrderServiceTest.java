package io.ordertimeout.place;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ordertimeout.cancel.CancelOrderService;
import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.OrderRejected;
import io.ordertimeout.domain.OrderStatus;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.http.ApiError;
import io.ordertimeout.outbox.OutboxRelay;
import io.ordertimeout.outbox.RelaySettings;
import io.ordertimeout.payment.PaidTrade;
import io.ordertimeout.redis.TimerBacklog;
import io.ordertimeout.testing.TestStack;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Placement's refusals and retries, cancel requests and the timer backlog, on the real servers. */
class CancelAndPlaceOrderServiceTest {
  private TestStack stack;

  /** The stack each test runs on; CancelAndPlaceOrderServiceAffectedRowsTest swaps the JDBC URL. */
  TestStack newStack() {
    return TestStack.create("place-cancel");
  }

  @BeforeEach
  void setUp() {
    stack = newStack();
    stack.seedSku("sku-a", 10);
    stack.seedCoupon("cp-1", "u1");
    stack.seedCoupon("cp-2", "u2");
  }

  @AfterEach
  void tearDown() {
    stack.assertInvariants();
    stack.close();
  }

  private PlaceOrderService.Placed place(String orderId, String userId, String coupon, int qty) {
    return stack.place(orderId, userId, 600, coupon, new OrderItem("sku-a", qty));
  }

  private void assertRefused(Runnable call, int status, String code) {
    List<String> before = stack.databaseState();
    assertThatThrownBy(call::run)
        .isInstanceOfSatisfying(
            OrderRejected.class,
            e -> {
              assertThat(ApiError.from(e).status()).isEqualTo(status);
              assertThat(e.code().name()).isEqualTo(code);
            });
    assertThat(stack.databaseState()).isEqualTo(before);
  }

  @Test
  void aRetriedPlacementAnswersTheStoredOrderAndOtherContentIsAConflict() {
    PlaceOrderService.Placed first = place("ord-pl-01", "u1", "cp-1", 2);
    PlaceOrderService.Placed retry = place("ord-pl-01", "u1", "cp-1", 2);

    assertThat(first.created()).isTrue();
    assertThat(retry.created()).isFalse();
    assertThat(retry.order().orderId()).isEqualTo("ord-pl-01");
    assertRefused(() -> place("ord-pl-01", "u1", "cp-1", 3), 409, "ORDER_CONFLICT");
    assertThat(stack.dump("SELECT available, reserved FROM stock")).containsExactly("8|2|");
    assertThat(stack.app().metrics().counter("orders_placed")).isEqualTo(1);
  }

  @Test
  void concurrentIdenticalPlacementsCreateOneOrder() throws Exception {
    int callers = 6;
    ExecutorService pool = Executors.newFixedThreadPool(callers);
    try {
      List<Callable<PlaceOrderService.Placed>> calls = new ArrayList<>();
      for (int i = 0; i < callers; i++) {
        calls.add(() -> place("ord-pl-race", "u1", "cp-1", 1));
      }
      int created = 0;
      for (Future<PlaceOrderService.Placed> f : pool.invokeAll(calls)) {
        created += f.get().created() ? 1 : 0;
      }
      assertThat(created).isEqualTo(1);
    } finally {
      pool.shutdownNow();
    }
    assertThat(stack.count("SELECT COUNT(*) FROM orders")).isEqualTo(1);
    assertThat(stack.dump("SELECT available, reserved FROM stock")).containsExactly("9|1|");
  }

  @Test
  void badSkusStockAndCouponsAreRefusedAndChangeNothing() {
    assertRefused(
        () -> stack.place("ord-pl-02", "u1", 600, null, new OrderItem("sku-x", 1)),
        400,
        "UNKNOWN_SKU");
    assertRefused(() -> place("ord-pl-03", "u1", null, 11), 409, "OUT_OF_STOCK");
    assertRefused(() -> place("ord-pl-04", "u1", "cp-none", 1), 400, "UNKNOWN_COUPON");
    assertRefused(() -> place("ord-pl-05", "u1", "cp-2", 1), 400, "COUPON_NOT_OWNED");
    place("ord-pl-06", "u1", "cp-1", 1);
    assertRefused(() -> place("ord-pl-07", "u1", "cp-1", 1), 400, "COUPON_NOT_AVAILABLE");

    assertThat(stack.dump("SELECT order_id FROM orders")).containsExactly("ord-pl-06|");
  }

  @Test
  void cancelRequestsAppendAnEventOnlyForUnpaidOrders() {
    place("ord-cx-unpaid", "u1", null, 1);
    place("ord-cx-paid", "u1", null, 1);
    place("ord-cx-closed", "u1", null, 1);
    stack
        .app()
        .payments()
        .apply(
            new PaidTrade(
                "default", "ord-cx-paid", "4200000777", 100, null, PaidTrade.Source.NOTIFY));
    stack
        .app()
        .closer()
        .close(TenantIds.DEFAULT, List.of("ord-cx-closed"), CloseReason.USER_CANCEL);
    CancelOrderService cancels = stack.app().cancels();
    // Events reach the stream through the outbox relay: deliver the setup's first.
    OutboxRelay relay = stack.app().newRelay(RelaySettings.defaults(), null);
    relay.relayOnce();
    long events = stack.app().stream().length();

    CancelOrderService.Outcome accepted = cancels.request(TenantIds.DEFAULT, "ord-cx-unpaid");
    CancelOrderService.Outcome closed = cancels.request(TenantIds.DEFAULT, "ord-cx-closed");
    assertRefused(() -> cancels.request(TenantIds.DEFAULT, "ord-cx-paid"), 409, "ORDER_PAID");
    assertRefused(() -> cancels.request(TenantIds.DEFAULT, "ord-cx-none"), 404, "NOT_FOUND");

    assertThat(accepted.accepted()).isTrue();
    assertThat(accepted.order().status()).isEqualTo(OrderStatus.UNPAID);
    assertThat(closed.accepted()).isFalse();
    assertThat(closed.order().status()).isEqualTo(OrderStatus.CLOSED);
    assertThat(stack.app().stream().length()).isEqualTo(events);
    relay.relayOnce();
    assertThat(stack.app().stream().length()).isEqualTo(events + 1);
    assertThat(stack.dump("SELECT status FROM orders WHERE order_id = 'ord-cx-unpaid'"))
        .containsExactly("UNPAID|"); // the consumer closes it, not the request
  }

  @Test
  void theBacklogCountsDueUnclaimedTimersAcrossShards() {
    stack.bulkPlace("due-", 7, Duration.ofMinutes(-1), i -> new OrderItem("sku-a", 1));
    stack.bulkPlace("later-", 2, Duration.ofMinutes(10), i -> new OrderItem("sku-a", 1));
    long now = stack.app().time().nowMillis();

    long backlog =
        TimerBacklog.record(
            stack.app().metrics(),
            stack.app().redis().sync(),
            stack.app().timers(),
            java.util.List.of(TenantIds.DEFAULT),
            now);

    assertThat(backlog).isEqualTo(7);
    assertThat(
            TimerBacklog.measure(
                stack.app().redis().sync(),
                stack.app().timers(),
                java.util.List.of(TenantIds.DEFAULT),
                now + 3_600_000))
        .isEqualTo(9);
    assertThat(stack.app().metrics().gauges()).containsValue(7L);
  }
}
