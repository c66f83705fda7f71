package io.ordertimeout.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ordertimeout.config.DeadlineSettings;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.OrderRejected;
import io.ordertimeout.domain.OrderStatus;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.payment.PaidTrade;
import io.ordertimeout.sweep.TimeoutSweeper;
import io.ordertimeout.testing.Await;
import io.ordertimeout.testing.TestStack;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The order's life after payment on the real servers: routes through {@link Transitions}, deadlines
 * through the real sweep claiming every kind from the timer index. Periods are seconds here.
 */
class LifecycleTest {
  private static final Map<Transition.Param, String> SHIPMENT =
      Map.of(Transition.Param.CARRIER, "SF", Transition.Param.TRACKING_NO, "SF123");

  private TestStack stack;

  @AfterEach
  void close() {
    if (stack != null) {
      stack.close();
    }
  }

  private TestStack stack(String hint, Duration receipt, Duration extension, Duration window) {
    stack =
        TestStack.create(
            hint,
            c ->
                c.toBuilder()
                    .deadlines(new DeadlineSettings(receipt, extension, window, 200))
                    .build(),
            null);
    stack.seedSku("a", 10);
    return stack;
  }

  private void placeAndPay(String orderId) {
    stack.place(orderId, "u1", 600, null, new OrderItem("a", 1));
    stack
        .app()
        .payments()
        .apply(
            new PaidTrade("default", orderId, "tx-" + orderId, 100, null, PaidTrade.Source.NOTIFY));
  }

  private Transitions transitions() {
    return stack.app().transitions();
  }

  private OrderStatus status(String orderId) {
    return OrderStatus.valueOf(
        stack
            .dump("SELECT status FROM orders WHERE order_id = '" + orderId + "'")
            .get(0)
            .replace("|", ""));
  }

  private void sweepUntil(String orderId, OrderStatus status) {
    TimeoutSweeper sweeper = stack.app().newSweeper();
    Thread t = new Thread(() -> sweeper.run(() -> 60_000));
    t.start();
    try {
      Await.until(orderId + " " + status, Duration.ofSeconds(20), () -> status(orderId) == status);
    } finally {
      sweeper.terminate();
    }
  }

  @Test
  void shippedOrderIsReceivedAutomaticallyAndCompletedAfterTheWindow() {
    stack("life-auto", Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofSeconds(1));
    placeAndPay("ord_life1");

    Transitions.Outcome shipped =
        transitions().applyRoute(Transition.SHIP, TenantIds.DEFAULT, "ord_life1", SHIPMENT);

    assertThat(shipped.changed()).isTrue();
    assertThat(shipped.order().status()).isEqualTo(OrderStatus.SHIPPED);
    assertThat(shipped.order().trackingNo()).isEqualTo("SF123");
    assertThat(
            stack
                .app()
                .timers()
                .deadlineOf(TenantIds.DEFAULT, DeadlineKind.AUTO_RECEIPT, "ord_life1"))
        .hasValue(shipped.order().receiveDueAt().toEpochMilli());

    sweepUntil("ord_life1", OrderStatus.COMPLETED);

    List<String> row =
        stack.dump(
            "SELECT received_by, received_at >= receive_due_at, completed_at >= complete_due_at,"
                + " TIMESTAMPDIFF(MICROSECOND, received_at, complete_due_at) FROM orders");
    assertThat(row).containsExactly("AUTO|1|1|1000000|");
    assertThat(
            stack.dump("SELECT event_type FROM outbox WHERE order_id = 'ord_life1' ORDER BY seq"))
        .containsExactly("created|", "paid|", "shipped|", "received|", "completed|");
    // every timer of the order is gone: nothing left to fire
    for (DeadlineKind kind : DeadlineKind.values()) {
      assertThat(stack.app().timers().deadlineOf(TenantIds.DEFAULT, kind, "ord_life1"))
          .as(kind.label())
          .isEmpty();
    }
    stack.assertInvariants();
  }

  @Test
  void aRetriedShipIsAcceptedUnchangedAndAnIllegalTransitionIs409WithTheState() {
    stack("life-routes", Duration.ofDays(10), Duration.ofDays(3), Duration.ofDays(7));
    placeAndPay("ord_life2");
    stack.place("ord_life3", "u1", 600, null, new OrderItem("a", 1));

    transitions().applyRoute(Transition.SHIP, TenantIds.DEFAULT, "ord_life2", SHIPMENT);
    Transitions.Outcome again =
        transitions().applyRoute(Transition.SHIP, TenantIds.DEFAULT, "ord_life2", SHIPMENT);

    assertThat(again.changed()).isFalse();
    assertThat(stack.count("SELECT COUNT(*) FROM outbox WHERE event_type = 'shipped'"))
        .isEqualTo(1);
    assertThatThrownBy(
            () ->
                transitions()
                    .applyRoute(
                        Transition.SHIP,
                        TenantIds.DEFAULT,
                        "ord_life2",
                        Map.of(
                            Transition.Param.CARRIER, "YTO", Transition.Param.TRACKING_NO, "Y9")))
        .isInstanceOf(IllegalTransition.class)
        .hasMessageContaining("is SHIPPED");
    assertThatThrownBy(
            () ->
                transitions().applyRoute(Transition.SHIP, TenantIds.DEFAULT, "ord_life3", SHIPMENT))
        .isInstanceOfSatisfying(
            IllegalTransition.class, e -> assertThat(e.current()).isEqualTo(OrderStatus.UNPAID));
    assertThatThrownBy(
            () ->
                transitions()
                    .applyRoute(Transition.SHIP, TenantIds.DEFAULT, "ord_nothere", SHIPMENT))
        .isInstanceOfSatisfying(
            OrderRejected.class, e -> assertThat(e.code()).isEqualTo(OrderRejected.Code.NOT_FOUND));
    // the refused requests changed nothing
    assertThat(stack.dump("SELECT order_id, status, carrier FROM orders ORDER BY order_id"))
        .containsExactly("ord_life2|SHIPPED|SF|", "ord_life3|UNPAID|null|");
  }

  @Test
  void theReceiptDeadlineMovesLaterOnceAndNeverAgain() {
    stack("life-extend", Duration.ofDays(10), Duration.ofDays(3), Duration.ofDays(7));
    placeAndPay("ord_life4");
    Instant due =
        transitions()
            .applyRoute(Transition.SHIP, TenantIds.DEFAULT, "ord_life4", SHIPMENT)
            .order()
            .receiveDueAt();

    Transitions.Outcome extended =
        transitions()
            .applyRoute(Transition.EXTEND_RECEIPT, TenantIds.DEFAULT, "ord_life4", Map.of());

    assertThat(extended.order().receiveDueAt()).isEqualTo(due.plus(Duration.ofDays(3)));
    assertThat(
            stack
                .app()
                .timers()
                .deadlineOf(TenantIds.DEFAULT, DeadlineKind.AUTO_RECEIPT, "ord_life4"))
        .hasValue(due.plus(Duration.ofDays(3)).toEpochMilli());
    assertThatThrownBy(
            () ->
                transitions()
                    .applyRoute(
                        Transition.EXTEND_RECEIPT, TenantIds.DEFAULT, "ord_life4", Map.of()))
        .isInstanceOfSatisfying(
            OrderRejected.class,
            e -> assertThat(e.code()).isEqualTo(OrderRejected.Code.RECEIPT_ALREADY_EXTENDED));
    assertThat(stack.dump("SELECT receipt_extended_at IS NOT NULL, status FROM orders"))
        .containsExactly("1|SHIPPED|");
    assertThat(stack.count("SELECT COUNT(*) FROM outbox WHERE event_type = 'receipt_extended'"))
        .isEqualTo(1);
  }

  @Test
  void anOpenAfterSaleSuspendsCompletionForExactlyTheTimeItWasOpen() throws Exception {
    stack("life-aftersale", Duration.ofDays(10), Duration.ofDays(3), Duration.ofSeconds(2));
    placeAndPay("ord_life5");
    transitions().applyRoute(Transition.SHIP, TenantIds.DEFAULT, "ord_life5", SHIPMENT);
    transitions().applyRoute(Transition.CONFIRM_RECEIPT, TenantIds.DEFAULT, "ord_life5", Map.of());
    transitions().applyRoute(Transition.OPEN_AFTER_SALE, TenantIds.DEFAULT, "ord_life5", Map.of());

    // while the request is open there is no completion timer, and a due one would not apply
    assertThat(
            stack
                .app()
                .timers()
                .deadlineOf(TenantIds.DEFAULT, DeadlineKind.AUTO_COMPLETE, "ord_life5"))
        .isEmpty();
    stack.update("UPDATE orders SET after_sale_opened_at = NOW(3) - INTERVAL 5 SECOND");
    Transitions.Batch none =
        transitions().applyDue(Transition.COMPLETE, TenantIds.DEFAULT, List.of("ord_life5"));
    assertThat(none.applied()).isEmpty();
    assertThat(none.other()).containsEntry("ord_life5", OrderStatus.AFTER_SALE);

    Transitions.Outcome resolved =
        transitions()
            .applyRoute(Transition.RESOLVE_AFTER_SALE, TenantIds.DEFAULT, "ord_life5", Map.of());

    assertThat(resolved.order().status()).isEqualTo(OrderStatus.RECEIVED);
    // received + 2 s window + ~5 s open (the UPDATE above moved the opening 5 s back)
    assertThat(
            stack.dump(
                "SELECT TIMESTAMPDIFF(SECOND, received_at, complete_due_at) BETWEEN 6 AND 8,"
                    + " after_sale_opened_at IS NULL, after_sales FROM orders"))
        .containsExactly("1|1|1|");
    assertThat(
            stack
                .app()
                .timers()
                .deadlineOf(TenantIds.DEFAULT, DeadlineKind.AUTO_COMPLETE, "ord_life5"))
        .hasValue(resolved.order().completeDueAt().toEpochMilli());
    // not due yet: the deadline batch leaves it and puts its timer back at the due time
    Transitions.Batch early =
        transitions().applyDue(Transition.COMPLETE, TenantIds.DEFAULT, List.of("ord_life5"));
    assertThat(early.applied()).isEmpty();
    assertThat(early.notDue()).containsKey("ord_life5");
  }

  @Test
  void couponsExpireAtTheirValidityAndALockedOneWhenItsOrderCloses() {
    stack("life-coupons", Duration.ofDays(10), Duration.ofDays(3), Duration.ofDays(7));
    Coupons coupons = stack.app().coupons();
    Instant soon = Instant.now().plusSeconds(1);
    coupons.issue("cp-free", "default", "u1", soon);
    coupons.issue("cp-held", "default", "u1", soon);
    coupons.issue("cp-later", "default", "u1", Instant.now().plus(Duration.ofDays(30)));
    stack.place("ord_life6", "u1", 600, "cp-held", new OrderItem("a", 1));

    TimeoutSweeper sweeper = stack.app().newSweeper();
    Thread t = new Thread(() -> sweeper.run(() -> 60_000));
    t.start();
    try {
      Await.until(
          "cp-free expired and cp-held's timer removed",
          Duration.ofSeconds(20),
          () ->
              stack.count("SELECT COUNT(*) FROM coupons WHERE status = 'EXPIRED'") == 1
                  && stack
                      .app()
                      .timers()
                      .deadlineOf(TenantIds.DEFAULT, DeadlineKind.COUPON_EXPIRY, "cp-held")
                      .isEmpty());
    } finally {
      sweeper.terminate();
    }
    assertThat(
            stack.dump(
                "SELECT coupon_id, status, expired_at >= valid_until FROM coupons ORDER BY coupon_id"))
        .containsExactly("cp-free|EXPIRED|1|", "cp-held|LOCKED|null|", "cp-later|AVAILABLE|null|");
    // an expired coupon cannot be used for a new order
    assertThatThrownBy(() -> stack.place("ord_life7", "u1", 600, "cp-free", new OrderItem("a", 1)))
        .isInstanceOfSatisfying(
            OrderRejected.class,
            e -> assertThat(e.code()).isEqualTo(OrderRejected.Code.COUPON_NOT_AVAILABLE));

    // the order holding the expired coupon closes: the coupon expires, it is not made AVAILABLE
    stack
        .app()
        .closer()
        .close(
            TenantIds.DEFAULT, List.of("ord_life6"), io.ordertimeout.domain.CloseReason.OPERATOR);

    assertThat(
            stack.dump(
                "SELECT status, locked_by_order, expired_at IS NOT NULL FROM coupons WHERE coupon_id = 'cp-held'"))
        .containsExactly("EXPIRED|null|1|");
    // an identical issue is a retry; another coupon under the same id is refused
    assertThat(
            coupons
                .issue(
                    "cp-later",
                    "default",
                    "u1",
                    coupons.find(TenantIds.DEFAULT, "cp-later").orElseThrow().validUntil())
                .created())
        .isFalse();
    assertThatThrownBy(() -> coupons.issue("cp-later", "default", "u2", soon))
        .isInstanceOfSatisfying(
            OrderRejected.class,
            e -> assertThat(e.code()).isEqualTo(OrderRejected.Code.COUPON_CONFLICT));
    stack.assertInvariants();
  }
}
