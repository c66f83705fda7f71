package io.ordertimeout.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.OrderRejected;
import io.ordertimeout.domain.OrderStatus;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.payment.PaidTrade;
import io.ordertimeout.testing.TestStack;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A route's transition asked of an order in a state it does not leave from is 409
 * ILLEGAL_TRANSITION with that state, whatever the transition's shape: an extension of a PAID order
 * is not "extended already", and resolving an after-sale that was never opened is not a retry.
 * (Both failed on the first version of Transitions.)
 */
class TransitionsRefusalTest {
  private TestStack stack;

  @BeforeEach
  void setUp() {
    stack = TestStack.create("life-refusal");
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

  /**
   * EXTEND_RECEIPT is SHIPPED -> SHIPPED, so applyRoute's "from == to" branch reads every refusal
   * as the guard's: a PAID (or RECEIVED, UNPAID...) order is answered RECEIPT_ALREADY_EXTENDED.
   */
  @Test
  void extendingAPaidOrderIsAnIllegalTransitionNotAnExtensionAlreadyMade() {
    placeAndPay("ord_ref1");

    assertThatThrownBy(
            () ->
                stack
                    .app()
                    .transitions()
                    .applyRoute(Transition.EXTEND_RECEIPT, TenantIds.DEFAULT, "ord_ref1", Map.of()))
        .isInstanceOfSatisfying(
            IllegalTransition.class,
            e ->
                org.assertj.core.api.Assertions.assertThat(e.current())
                    .isEqualTo(OrderStatus.PAID));
  }

  /**
   * RESOLVE_AFTER_SALE's to-state is RECEIVED, so a RECEIVED order that never had a request open
   * (after_sales = 0) is answered as a retry: changed = false, 200.
   */
  @Test
  void resolvingAnAfterSaleThatWasNeverOpenedIsAnIllegalTransition() {
    placeAndPay("ord_ref2");
    Transitions t = stack.app().transitions();
    t.applyRoute(
        Transition.SHIP,
        TenantIds.DEFAULT,
        "ord_ref2",
        Map.of(Transition.Param.CARRIER, "SF", Transition.Param.TRACKING_NO, "SF1"));
    t.applyRoute(Transition.CONFIRM_RECEIPT, TenantIds.DEFAULT, "ord_ref2", Map.of());

    assertThatThrownBy(
            () ->
                t.applyRoute(
                    Transition.RESOLVE_AFTER_SALE, TenantIds.DEFAULT, "ord_ref2", Map.of()))
        .isInstanceOf(IllegalTransition.class);
  }

  private static final Map<Transition.Param, String> SHIPMENT =
      Map.of(Transition.Param.CARRIER, "SF", Transition.Param.TRACKING_NO, "SF1");

  private Transitions transitions() {
    return stack.app().transitions();
  }

  private void shipped(String orderId) {
    placeAndPay(orderId);
    transitions().applyRoute(Transition.SHIP, TenantIds.DEFAULT, orderId, SHIPMENT);
  }

  private void received(String orderId) {
    shipped(orderId);
    transitions().applyRoute(Transition.CONFIRM_RECEIPT, TenantIds.DEFAULT, orderId, Map.of());
  }

  /** The order's row, its outbox rows and its timers of every kind: a refusal changes none. */
  private List<String> stateOf(String orderId) {
    List<String> state =
        new ArrayList<>(
            stack.dump(
                "SELECT status, receive_due_at, receipt_extended_at, received_at, received_by,"
                    + " complete_due_at, after_sale_opened_at, after_sales, version FROM orders"
                    + " WHERE order_id = '"
                    + orderId
                    + "'"));
    state.addAll(
        stack.dump("SELECT seq, event_type FROM outbox WHERE order_id = '" + orderId + "'"));
    for (DeadlineKind kind : DeadlineKind.values()) {
      state.add(kind + " " + stack.app().timers().deadlineOf(TenantIds.DEFAULT, kind, orderId));
    }
    return state;
  }

  private void refusedAsDeadlinePassed(Transition t, String orderId) {
    List<String> before = stateOf(orderId);
    assertThatThrownBy(() -> transitions().applyRoute(t, TenantIds.DEFAULT, orderId, Map.of()))
        .isInstanceOfSatisfying(
            OrderRejected.class,
            e -> assertThat(e.code()).isEqualTo(OrderRejected.Code.DEADLINE_PASSED))
        .hasMessageContaining(orderId);
    assertThat(stateOf(orderId)).as("a refused %s changes nothing", t).isEqualTo(before);
  }

  /**
   * The receipt deadline has passed by NOW(3), the sweep has not applied it (its timer is still in
   * Redis, not claimed): an extension, or the user's confirmation, comes too late. Both were
   * accepted before (200, the deadline moved 3 days later after it had passed).
   */
  @Test
  void aRouteAfterTheReceiptDeadlineIsDeadlinePassedBeforeTheSweepAppliesIt() {
    shipped("ord_late1");
    stack.update(
        "UPDATE orders SET receive_due_at = NOW(3) - INTERVAL 1 SECOND WHERE order_id ="
            + " 'ord_late1'");

    refusedAsDeadlinePassed(Transition.EXTEND_RECEIPT, "ord_late1");
    refusedAsDeadlinePassed(Transition.CONFIRM_RECEIPT, "ord_late1");
    assertThat(stack.dump("SELECT status, receipt_extended_at FROM orders"))
        .containsExactly("SHIPPED|null|");
  }

  /**
   * After-sale opened once the completion deadline has passed: accepted before, completion held.
   */
  @Test
  void openingAnAfterSaleAfterTheCompletionDeadlineIsDeadlinePassedBeforeTheSweepAppliesIt() {
    received("ord_late2");
    stack.update(
        "UPDATE orders SET complete_due_at = NOW(3) - INTERVAL 1 SECOND WHERE order_id ="
            + " 'ord_late2'");

    refusedAsDeadlinePassed(Transition.OPEN_AFTER_SALE, "ord_late2");
    assertThat(stack.dump("SELECT status, after_sales FROM orders")).containsExactly("RECEIVED|0|");
  }

  /**
   * The same request at the same database time gets the same answer whether the sweep has applied
   * the deadline or not: after COMPLETE or AUTO_RECEIVE ran, DEADLINE_PASSED too (not
   * ILLEGAL_TRANSITION, and for the confirmation not a 200 "retry").
   */
  @Test
  void aRouteAfterItsDeadlineIsDeadlinePassedAlsoOnceTheSweepAppliedIt() {
    received("ord_late3");
    shipped("ord_late4");
    stack.update(
        "UPDATE orders SET complete_due_at = NOW(3) - INTERVAL 1 SECOND WHERE order_id ="
            + " 'ord_late3'");
    stack.update(
        "UPDATE orders SET receive_due_at = NOW(3) - INTERVAL 1 SECOND WHERE order_id ="
            + " 'ord_late4'");
    assertThat(
            transitions()
                .applyDue(Transition.COMPLETE, TenantIds.DEFAULT, List.of("ord_late3"))
                .applied())
        .containsKey("ord_late3");
    assertThat(
            transitions()
                .applyDue(Transition.AUTO_RECEIVE, TenantIds.DEFAULT, List.of("ord_late4"))
                .applied())
        .containsKey("ord_late4");

    refusedAsDeadlinePassed(Transition.OPEN_AFTER_SALE, "ord_late3");
    refusedAsDeadlinePassed(Transition.EXTEND_RECEIPT, "ord_late4");
    refusedAsDeadlinePassed(Transition.CONFIRM_RECEIPT, "ord_late4");
  }

  /**
   * Before the deadline the routes work as ever, and a user's confirmation retried after it is a
   * retry.
   */
  @Test
  void aRouteBeforeItsDeadlineIsAppliedAndARetriedConfirmationAfterItIsStillARetry() {
    shipped("ord_late5");
    Transitions.Outcome confirmed =
        transitions()
            .applyRoute(Transition.CONFIRM_RECEIPT, TenantIds.DEFAULT, "ord_late5", Map.of());
    assertThat(confirmed.changed()).isTrue();
    stack.update(
        "UPDATE orders SET receive_due_at = NOW(3) - INTERVAL 1 SECOND WHERE order_id ="
            + " 'ord_late5'");

    Transitions.Outcome retried =
        transitions()
            .applyRoute(Transition.CONFIRM_RECEIPT, TenantIds.DEFAULT, "ord_late5", Map.of());

    assertThat(retried.changed()).isFalse();
    assertThat(retried.order().receivedBy()).isEqualTo("USER");
    stack.assertInvariants();
  }
}
