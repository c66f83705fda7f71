package io.ordertimeout.close;

import static io.ordertimeout.testing.Deadlines.expireNow;
import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.ClosedOrder;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.payment.PaidTrade;
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

class OrderCloserTest {
  private TestStack stack;

  /** The stack each test runs on; OrderCloserAffectedRowsTest swaps the JDBC URL. */
  TestStack newStack() {
    return TestStack.create("closer");
  }

  @BeforeEach
  void setUp() {
    stack = newStack();
    stack.seedSku("sku-a", 100);
    stack.seedSku("sku-b", 100);
    stack.seedCoupon("cp-1", "u1");
  }

  @AfterEach
  void tearDown() {
    stack.assertInvariants();
    stack.close();
  }

  @Test
  void closesAnOverdueOrderReleasingStockAndCouponOnce() throws Exception {
    stack.place("order-001", "u1", 1, "cp-1", new OrderItem("sku-a", 3), new OrderItem("sku-b", 2));
    expireNow(stack, "order-001");

    CloseResult first =
        stack.app().closer().close(TenantIds.DEFAULT, List.of("order-001"), CloseReason.TIMEOUT);
    CloseResult second =
        stack.app().closer().close(TenantIds.DEFAULT, List.of("order-001"), CloseReason.TIMEOUT);

    assertThat(first.closed()).extracting(ClosedOrder::orderId).containsExactly("order-001");
    assertThat(first.closed().get(0).lagMillis()).isGreaterThanOrEqualTo(0);
    assertThat(second.closed()).isEmpty();
    assertThat(second.alreadyFinal()).containsExactly("order-001");
    assertThat(stack.dump("SELECT status, close_reason FROM orders"))
        .containsExactly("CLOSED|TIMEOUT|");
    assertThat(stack.dump("SELECT sku_id, available, reserved, sold FROM stock ORDER BY sku_id"))
        .containsExactly("sku-a|100|0|0|", "sku-b|100|0|0|");
    assertThat(stack.count("SELECT COUNT(*) FROM stock_movements WHERE kind = 'RELEASE'"))
        .isEqualTo(2);
    assertThat(stack.dump("SELECT status, locked_by_order FROM coupons"))
        .containsExactly("AVAILABLE|null|");
    assertThat(stack.app().timers().deadlineOf(TenantIds.DEFAULT, "order-001")).isEmpty();
  }

  @Test
  void leavesAnOrderBeforeItsDeadlineOpenAndMovesItsTimerToTheDeadline() {
    stack.place("order-002", "u1", 60, null, new OrderItem("sku-a", 1));

    CloseResult result =
        stack.app().closer().close(TenantIds.DEFAULT, List.of("order-002"), CloseReason.TIMEOUT);

    assertThat(result.closed()).isEmpty();
    assertThat(result.notDue()).containsKey("order-002");
    assertThat(result.notDue().get("order-002")).isBetween(50_000L, 60_001L);
    assertThat(stack.dump("SELECT status FROM orders")).containsExactly("UNPAID|");
    assertThat(stack.app().timers().deadlineOf(TenantIds.DEFAULT, "order-002")).isPresent();
  }

  @Test
  void aUserCancelClosesBeforeTheDeadline() {
    stack.place("order-003", "u1", 600, "cp-1", new OrderItem("sku-a", 5));

    CloseResult result =
        stack
            .app()
            .closer()
            .close(TenantIds.DEFAULT, List.of("order-003"), CloseReason.USER_CANCEL);

    assertThat(result.closed()).hasSize(1);
    assertThat(stack.dump("SELECT status, close_reason FROM orders"))
        .containsExactly("CLOSED|USER_CANCEL|");
    assertThat(stack.dump("SELECT available, reserved FROM stock WHERE sku_id = 'sku-a'"))
        .containsExactly("100|0|");
  }

  @Test
  void aCancelledOrderReachedByItsDeadlineFirstClosesAsUserCancelNotTimeout() {
    // The cancel request committed (orders.cancel_requested_at and its outbox row) but no consumer
    // closed it yet, e.g. its stream entry was lost: the sweep's TIMEOUT close reaches it first.
    stack.place("order-009", "u1", 600, "cp-1", new OrderItem("sku-a", 2));
    stack.place("order-010", "u1", 600, null, new OrderItem("sku-b", 1));
    assertThat(stack.app().cancels().request(TenantIds.DEFAULT, "order-009").accepted()).isTrue();
    expireNow(stack, "order-009");
    expireNow(stack, "order-010");

    CloseResult result =
        stack
            .app()
            .closer()
            .close(TenantIds.DEFAULT, List.of("order-009", "order-010"), CloseReason.TIMEOUT);

    assertThat(result.closed())
        .extracting(ClosedOrder::orderId)
        .containsExactlyInAnyOrder("order-009", "order-010");
    assertThat(stack.dump("SELECT order_id, status, close_reason FROM orders ORDER BY order_id"))
        .containsExactly("order-009|CLOSED|USER_CANCEL|", "order-010|CLOSED|TIMEOUT|");
    assertThat(
            stack.dump(
                "SELECT order_id, JSON_VALUE(payload, '$.reason') FROM outbox"
                    + " WHERE event_type = 'closed' ORDER BY order_id"))
        .containsExactly("order-009|USER_CANCEL|", "order-010|TIMEOUT|");
    assertThat(stack.app().metrics().counter("orders_closed_cancel")).isEqualTo(1);
    assertThat(stack.app().metrics().counter("orders_closed_timeout")).isEqualTo(1);
    assertThat(stack.dump("SELECT status, locked_by_order FROM coupons"))
        .containsExactly("AVAILABLE|null|");
  }

  @Test
  void aBatchReleasesTheLinesOfTheOrdersItClosesOnlyEachWithItsQuantity() {
    // orders of several lines beside orders the batch leaves (not due, paid)
    stack.seedSku("sku-c", 100);
    stack.place("order-020", "u1", 1, null, new OrderItem("sku-a", 3), new OrderItem("sku-b", 2));
    stack.place("order-021", "u1", 600, null, new OrderItem("sku-a", 4), new OrderItem("sku-c", 1));
    stack.place(
        "order-022",
        "u1",
        1,
        null,
        new OrderItem("sku-a", 1),
        new OrderItem("sku-b", 5),
        new OrderItem("sku-c", 7));
    stack.place("order-023", "u1", 1, null, new OrderItem("sku-c", 6));
    expireNow(stack, "order-020");
    expireNow(stack, "order-022");
    expireNow(stack, "order-023");
    stack
        .app()
        .payments()
        .apply(
            new PaidTrade(
                TenantIds.DEFAULT, "order-023", "tx-023", 100, null, PaidTrade.Source.NOTIFY));

    CloseResult result =
        stack
            .app()
            .closer()
            .close(
                TenantIds.DEFAULT,
                List.of("order-023", "order-022", "order-021", "order-020"),
                CloseReason.TIMEOUT);

    assertThat(result.closed())
        .extracting(ClosedOrder::orderId)
        .containsExactly("order-020", "order-022");
    assertThat(result.notDue()).containsOnlyKeys("order-021");
    assertThat(result.alreadyFinal()).containsExactly("order-023");
    assertThat(
            stack.dump(
                "SELECT order_id, sku_id, quantity FROM stock_movements WHERE kind = 'RELEASE'"
                    + " ORDER BY order_id, sku_id"))
        .containsExactly(
            "order-020|sku-a|3|",
            "order-020|sku-b|2|",
            "order-022|sku-a|1|",
            "order-022|sku-b|5|",
            "order-022|sku-c|7|");
    // reserved left: order-021's lines (not due); order-023's sold
    assertThat(stack.dump("SELECT sku_id, available, reserved, sold FROM stock ORDER BY sku_id"))
        .containsExactly("sku-a|96|4|0|", "sku-b|100|0|0|", "sku-c|93|1|6|");
  }

  @Test
  void unknownIdsAreReportedAndTheirTimersRemoved() {
    stack
        .app()
        .timers()
        .schedule(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, "ghost-order", 1);

    CloseResult result =
        stack.app().closer().close(TenantIds.DEFAULT, List.of("ghost-order"), CloseReason.TIMEOUT);

    assertThat(result.unknown()).containsExactly("ghost-order");
    assertThat(stack.app().timers().deadlineOf(TenantIds.DEFAULT, "ghost-order")).isEmpty();
  }

  @Test
  void eightConcurrentClosersOverTheSameOrdersCloseEachExactlyOnce() throws Exception {
    stack.seedSku("hot", 10_000);
    List<String> ids =
        stack.bulkPlace("conc-", 2_000, Duration.ofSeconds(-1), i -> new OrderItem("hot", 2));
    ExecutorService pool = Executors.newFixedThreadPool(8);
    List<Callable<Integer>> workers = new ArrayList<>();
    for (int w = 0; w < 8; w++) {
      List<String> shuffled = new ArrayList<>(ids);
      java.util.Collections.shuffle(shuffled, new java.util.Random(w));
      workers.add(
          () -> {
            int closed = 0;
            for (int from = 0; from < shuffled.size(); from += 250) {
              closed +=
                  stack
                      .app()
                      .closer()
                      .close(
                          TenantIds.DEFAULT,
                          shuffled.subList(from, Math.min(from + 250, shuffled.size())),
                          CloseReason.TIMEOUT)
                      .closed()
                      .size();
            }
            return closed;
          });
    }
    int total = 0;
    for (Future<Integer> f : pool.invokeAll(workers)) {
      total += f.get();
    }
    pool.shutdown();

    assertThat(total).isEqualTo(2_000);
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE status = 'CLOSED'")).isEqualTo(2_000);
    assertThat(stack.count("SELECT COUNT(*) FROM stock_movements WHERE kind = 'RELEASE'"))
        .isEqualTo(2_000);
    assertThat(stack.dump("SELECT available, reserved FROM stock WHERE sku_id = 'hot'"))
        .containsExactly("10000|0|");
  }
}
