package io.ordertimeout.compensation;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.config.DeadlineSettings;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.lifecycle.OrderLifecycle;
import io.ordertimeout.lifecycle.Transition;
import io.ordertimeout.payment.PaidTrade;
import io.ordertimeout.redis.TimerIndex;
import io.ordertimeout.testing.TestStack;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Compensation of the receipt, completion and coupon deadlines: each broken state arranged directly
 * in MariaDB and Redis, one pass repairs it (rows and timers asserted), and a second pass changes
 * nothing. Periods are days, so nothing falls due unless a test moves its due time.
 */
class DeadlineCompensationTest {
  private static final Map<Transition.Param, String> SHIPMENT =
      Map.of(Transition.Param.CARRIER, "SF", Transition.Param.TRACKING_NO, "SF123");

  private TestStack stack;

  @AfterEach
  void tearDown() {
    if (stack != null) {
      stack.close();
    }
  }

  private void stack(String hint) {
    stack(hint, Duration.ZERO);
  }

  /** {@code margin}: the invocation margin (tests otherwise use none). */
  private void stack(String hint, Duration margin) {
    stack =
        TestStack.create(
            hint,
            c ->
                c.toBuilder()
                    .deadlines(
                        new DeadlineSettings(
                            Duration.ofDays(10), Duration.ofDays(3), Duration.ofDays(7), 200))
                    .invocationMargin(margin)
                    .build(),
            null);
    stack.seedSku("a", 100);
  }

  private CompensationReport compensate() {
    return stack.app().newCompensator(CompensationSettings.defaults()).run();
  }

  private TimerIndex timers() {
    return stack.app().timers();
  }

  private void placeAndPay(String orderId) {
    stack.place(orderId, "u1", 600, null, new OrderItem("a", 1));
    stack
        .app()
        .payments()
        .apply(
            new PaidTrade("default", orderId, "tx-" + orderId, 100, null, PaidTrade.Source.NOTIFY));
  }

  private void shipped(String orderId) {
    placeAndPay(orderId);
    stack.app().transitions().applyRoute(Transition.SHIP, TenantIds.DEFAULT, orderId, SHIPMENT);
  }

  private void received(String orderId) {
    shipped(orderId);
    stack
        .app()
        .transitions()
        .applyRoute(Transition.CONFIRM_RECEIPT, TenantIds.DEFAULT, orderId, Map.of());
  }

  private OrderLifecycle order(String orderId) {
    return stack.sql(c -> OrderLifecycle.find(c, TenantIds.DEFAULT, orderId)).orElseThrow();
  }

  private void moveDue(String column, String orderId, String interval) {
    stack.update(
        "UPDATE orders SET " + column + " = NOW(3) - INTERVAL " + interval + " WHERE order_id = ?",
        orderId);
  }

  /**
   * Every timer of every kind with its score, and every row: what a second pass must not change.
   */
  private List<String> state() {
    List<String> state = new ArrayList<>(stack.databaseState());
    state.addAll(stack.dump("SELECT seq, order_id, event_type FROM outbox ORDER BY seq"));
    var redis = stack.app().redis().sync();
    for (DeadlineKind kind : DeadlineKind.values()) {
      for (int shard = 0; shard < timers().shards(); shard++) {
        String key = timers().timersKey(TenantIds.DEFAULT, shard, kind);
        redis.zrangeWithScores(key, 0, -1).forEach(v -> state.add(key + " " + v));
      }
    }
    return state;
  }

  private void secondPassChangesNothing(String label) {
    List<String> before = state();
    CompensationReport again = compensate();
    assertThat(state()).isEqualTo(before);
    for (String count : List.of("applied", "rescheduled", "stale_timers_removed")) {
      assertThat(again.count(label + "_" + count)).as(label + "_" + count).isZero();
    }
    assertThat(again.failures()).isEmpty();
  }

  @Test
  void receiptTimersAreReAddedStaleOnesRemovedAndOverdueOrdersReceivedAutomatically() {
    stack("dcomp-receipt");
    shipped("ord_r_missing");
    shipped("ord_r_grace");
    shipped("ord_r_overdue");
    shipped("ord_r_late");
    placeAndPay("ord_r_paid");
    // missing timers: Redis lost them after the commit
    timers()
        .remove(
            TenantIds.DEFAULT, DeadlineKind.AUTO_RECEIPT, List.of("ord_r_missing", "ord_r_grace"));
    // due 10 s ago, within the 60 s grace: the sweep's to apply, so only its timer is re-added
    moveDue("receive_due_at", "ord_r_grace", "10 SECOND");
    // overdue past the grace, one without a timer, one whose timer still holds the old due time
    moveDue("receive_due_at", "ord_r_overdue", "2 MINUTE");
    timers().remove(TenantIds.DEFAULT, DeadlineKind.AUTO_RECEIPT, List.of("ord_r_overdue"));
    moveDue("receive_due_at", "ord_r_late", "3 MINUTE");
    // stale: a PAID order (not shipped) and an order that does not exist
    timers()
        .schedule(
            TenantIds.DEFAULT, DeadlineKind.AUTO_RECEIPT, "ord_r_paid", System.currentTimeMillis());
    timers()
        .schedule(
            TenantIds.DEFAULT,
            DeadlineKind.AUTO_RECEIPT,
            "ord_r_ghost",
            System.currentTimeMillis());

    CompensationReport report = compensate();

    assertThat(report.failures()).isEmpty();
    assertThat(report.count("receipt_applied")).isEqualTo(2);
    assertThat(report.count("receipt_rescheduled")).isEqualTo(2);
    assertThat(report.count("receipt_stale_timers_removed")).isEqualTo(2);
    assertThat(timers().deadlineOf(TenantIds.DEFAULT, DeadlineKind.AUTO_RECEIPT, "ord_r_missing"))
        .hasValue(order("ord_r_missing").receiveDueAt().toEpochMilli());
    assertThat(timers().deadlineOf(TenantIds.DEFAULT, DeadlineKind.AUTO_RECEIPT, "ord_r_grace"))
        .hasValue(order("ord_r_grace").receiveDueAt().toEpochMilli());
    assertThat(
            stack.dump(
                "SELECT order_id, status, received_by, received_at >= receive_due_at,"
                    + " complete_due_at IS NOT NULL FROM orders ORDER BY order_id"))
        .containsExactly(
            "ord_r_grace|SHIPPED|null|null|0|",
            "ord_r_late|RECEIVED|AUTO|1|1|",
            "ord_r_missing|SHIPPED|null|null|0|",
            "ord_r_overdue|RECEIVED|AUTO|1|1|",
            "ord_r_paid|PAID|null|null|0|");
    for (String id : List.of("ord_r_overdue", "ord_r_late")) {
      assertThat(timers().deadlineOf(TenantIds.DEFAULT, DeadlineKind.AUTO_RECEIPT, id))
          .as(id)
          .isEmpty();
      // the transition's own mechanism started the completion deadline
      assertThat(timers().deadlineOf(TenantIds.DEFAULT, DeadlineKind.AUTO_COMPLETE, id))
          .as(id)
          .hasValue(order(id).completeDueAt().toEpochMilli());
    }
    assertThat(stack.count("SELECT COUNT(*) FROM outbox WHERE event_type = 'received'"))
        .isEqualTo(2);
    for (String id : List.of("ord_r_paid", "ord_r_ghost")) {
      assertThat(timers().deadlineOf(TenantIds.DEFAULT, DeadlineKind.AUTO_RECEIPT, id))
          .as(id)
          .isEmpty();
    }
    secondPassChangesNothing("receipt");
    stack.assertInvariants();
  }

  @Test
  void completionTimersAreRepairedOverdueOrdersCompletedAndAnAfterSaleOrderHasNone() {
    stack("dcomp-complete");
    received("ord_c_missing");
    received("ord_c_overdue");
    received("ord_c_aftersale");
    shipped("ord_c_shipped");
    timers()
        .remove(
            TenantIds.DEFAULT,
            DeadlineKind.AUTO_COMPLETE,
            List.of("ord_c_missing", "ord_c_overdue"));
    moveDue("complete_due_at", "ord_c_overdue", "2 MINUTE");
    // an open after-sale request suspends the deadline: even past due it must not complete, and
    // a completion timer left over (a Redis write that failed after the opening) is stale
    stack
        .app()
        .transitions()
        .applyRoute(Transition.OPEN_AFTER_SALE, TenantIds.DEFAULT, "ord_c_aftersale", Map.of());
    moveDue("complete_due_at", "ord_c_aftersale", "2 MINUTE");
    timers()
        .schedule(
            TenantIds.DEFAULT,
            DeadlineKind.AUTO_COMPLETE,
            "ord_c_aftersale",
            System.currentTimeMillis());
    timers()
        .schedule(
            TenantIds.DEFAULT,
            DeadlineKind.AUTO_COMPLETE,
            "ord_c_shipped",
            System.currentTimeMillis());

    CompensationReport report = compensate();

    assertThat(report.failures()).isEmpty();
    assertThat(report.count("complete_applied")).isEqualTo(1);
    assertThat(report.count("complete_rescheduled")).isEqualTo(1);
    assertThat(report.count("complete_stale_timers_removed")).isEqualTo(2);
    assertThat(
            stack.dump(
                "SELECT order_id, status, completed_at >= complete_due_at FROM orders"
                    + " ORDER BY order_id"))
        .containsExactly(
            "ord_c_aftersale|AFTER_SALE|null|",
            "ord_c_missing|RECEIVED|null|",
            "ord_c_overdue|COMPLETED|1|",
            "ord_c_shipped|SHIPPED|null|");
    assertThat(timers().deadlineOf(TenantIds.DEFAULT, DeadlineKind.AUTO_COMPLETE, "ord_c_missing"))
        .hasValue(order("ord_c_missing").completeDueAt().toEpochMilli());
    for (String id : List.of("ord_c_overdue", "ord_c_aftersale", "ord_c_shipped")) {
      assertThat(timers().deadlineOf(TenantIds.DEFAULT, DeadlineKind.AUTO_COMPLETE, id))
          .as(id)
          .isEmpty();
    }
    // the shipped order keeps its own receipt timer
    assertThat(timers().deadlineOf(TenantIds.DEFAULT, DeadlineKind.AUTO_RECEIPT, "ord_c_shipped"))
        .hasValue(order("ord_c_shipped").receiveDueAt().toEpochMilli());
    secondPassChangesNothing("complete");
    stack.assertInvariants();
  }

  @Test
  void couponTimersAreRepairedExpiredAvailableCouponsExpireAndLockedOnesAreLeftToTheirOrder() {
    stack("dcomp-coupon");
    var coupons = stack.app().coupons();
    Instant later = Instant.now().plus(Duration.ofDays(30));
    for (String id : List.of("cp-missing", "cp-expired", "cp-held-past", "cp-held-later")) {
      coupons.issue(id, "default", "u1", later);
    }
    stack.place("ord_k1", "u1", 600, "cp-held-past", new OrderItem("a", 1));
    stack.place("ord_k2", "u1", 600, "cp-held-later", new OrderItem("a", 1));
    long heldLater =
        timers()
            .deadlineOf(TenantIds.DEFAULT, DeadlineKind.COUPON_EXPIRY, "cp-held-later")
            .orElseThrow();
    timers()
        .remove(TenantIds.DEFAULT, DeadlineKind.COUPON_EXPIRY, List.of("cp-missing", "cp-expired"));
    stack.update(
        "UPDATE coupons SET valid_until = NOW(3) - INTERVAL 2 MINUTE"
            + " WHERE coupon_id IN ('cp-expired', 'cp-held-past')");
    timers()
        .schedule(
            TenantIds.DEFAULT, DeadlineKind.COUPON_EXPIRY, "cp-ghost", System.currentTimeMillis());

    CompensationReport report = compensate();

    assertThat(report.failures()).isEmpty();
    assertThat(report.count("coupon_applied")).isEqualTo(1);
    assertThat(report.count("coupon_rescheduled")).isEqualTo(1);
    // cp-held-past (LOCKED past its validity: its order's close expires it) and cp-ghost
    assertThat(report.count("coupon_stale_timers_removed")).isEqualTo(2);
    assertThat(
            stack.dump(
                "SELECT coupon_id, status, locked_by_order, expired_at >= valid_until FROM coupons"
                    + " ORDER BY coupon_id"))
        .containsExactly(
            "cp-expired|EXPIRED|null|1|",
            "cp-held-later|LOCKED|ord_k2|null|",
            "cp-held-past|LOCKED|ord_k1|null|",
            "cp-missing|AVAILABLE|null|null|");
    assertThat(timers().deadlineOf(TenantIds.DEFAULT, DeadlineKind.COUPON_EXPIRY, "cp-missing"))
        .hasValue(
            coupons
                .find(TenantIds.DEFAULT, "cp-missing")
                .orElseThrow()
                .validUntil()
                .toEpochMilli());
    // a LOCKED coupon before its validity keeps its timer: its order may close and return it
    assertThat(timers().deadlineOf(TenantIds.DEFAULT, DeadlineKind.COUPON_EXPIRY, "cp-held-later"))
        .hasValue(heldLater);
    for (String id : List.of("cp-expired", "cp-held-past", "cp-ghost")) {
      assertThat(timers().deadlineOf(TenantIds.DEFAULT, DeadlineKind.COUPON_EXPIRY, id))
          .as(id)
          .isEmpty();
    }
    // the orders holding coupons are untouched: UNPAID with their payment timers
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE status = 'UNPAID'")).isEqualTo(2);
    secondPassChangesNothing("coupon");
    stack.assertInvariants();
  }

  @Test
  void aPassWhoseTimeRunsShortStopsBetweenPagesOfDeadlinesAndTheNextRunAppliesTheRest() {
    stack("dcomp-time", Duration.ofSeconds(19));
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 25; i++) {
      String id = String.format("ord_t%02d", i);
      shipped(id);
      ids.add(id);
    }
    stack.update("UPDATE orders SET receive_due_at = NOW(3) - INTERVAL 2 MINUTE");
    timers().remove(TenantIds.DEFAULT, DeadlineKind.AUTO_RECEIPT, ids);
    long margin = stack.app().compensationMargin().toMillis();
    assertThat(margin).isEqualTo(19_000);
    // time enough until the first page of receipts is applied, then less than the margin is left
    LongSupplier remaining =
        () ->
            stack.count("SELECT COUNT(*) FROM orders WHERE status = 'RECEIVED'") == 0
                ? margin + 60_000
                : margin - 1;
    CompensationSettings d = CompensationSettings.defaults();
    CompensationSettings pagesOf10 =
        new CompensationSettings(
            d.grace(),
            10,
            d.pageBudget(),
            d.recentWindow(),
            d.closedWindow(),
            d.notifyGrace(),
            d.wechatBudget(),
            d.stuckAfter(),
            d.parkFor());

    CompensationReport cut = stack.app().newCompensator(pagesOf10).run(remaining);

    assertThat(cut.count("receipt_applied")).isEqualTo(10);
    assertThat(cut.count("receipt_rescheduled")).isZero();
    assertThat(cut.skipped()).startsWith("overdue").contains("timers");
    assertThat(cut.failures()).isEmpty();
    // exactly the first page in (receive_due_at, order_id) order; the others wait untouched
    assertThat(
            stack.dump("SELECT order_id FROM orders WHERE status = 'RECEIVED' ORDER BY order_id"))
        .containsExactlyElementsOf(ids.subList(0, 10).stream().map(id -> id + "|").toList());
    for (String id : ids.subList(10, 25)) {
      assertThat(timers().deadlineOf(TenantIds.DEFAULT, DeadlineKind.AUTO_RECEIPT, id))
          .as(id)
          .isEmpty();
    }

    CompensationReport next = stack.app().newCompensator(pagesOf10).run(() -> margin + 60_000);

    assertThat(next.skipped()).isEmpty();
    assertThat(next.count("receipt_applied")).isEqualTo(15);
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE status = 'RECEIVED'")).isEqualTo(25);
    assertThat(timers().size(TenantIds.DEFAULT, DeadlineKind.AUTO_RECEIPT)).isZero();
    assertThat(timers().size(TenantIds.DEFAULT, DeadlineKind.AUTO_COMPLETE)).isEqualTo(25);
    stack.assertInvariants();
  }
}
