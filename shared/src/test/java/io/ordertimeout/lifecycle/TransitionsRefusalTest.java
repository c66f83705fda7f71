package io.ordertimeout.lifecycle;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.OrderStatus;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.payment.PaidTrade;
import io.ordertimeout.testing.TestStack;
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
}
