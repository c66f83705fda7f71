package io.ordertimeout.close;

import static io.ordertimeout.testing.Deadlines.expireNow;
import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.compensation.CompensationReport;
import io.ordertimeout.compensation.CompensationSettings;
import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.ClosedOrder;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.wechat.Endpoint;
import io.ordertimeout.embedded.wechat.TradeState;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.testing.WeChatStackFixture;
import io.ordertimeout.wechat.WeChatTrade;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A trade in state REFUND (paid, then refunded by the merchant by hand) is not paid: the close path
 * closes its order unpaid and releases the stock, compensation flags it (REFUNDED_TRADE) and
 * neither marks the order PAID nor refunds again.
 */
class RefundedTradeTest extends WeChatStackFixture {
  @Override
  protected TestStack newStack() {
    return TestStack.withWeChat("refunded", wechat, Duration.ofSeconds(5));
  }

  @BeforeEach
  void seed() {
    stack.seedSku("sku-a", 10);
    stack.seedCoupon("cp-1", "u1");
  }

  /** Prepaid, paid at WeChat with its notification lost, then refunded in full by the merchant. */
  private void paidAndRefundedByHand(String orderId) {
    stack.place(orderId, "u1", 600, "cp-1", new OrderItem("sku-a", 2));
    stack.app().prepays().prepay(TenantIds.DEFAULT, orderId, OPEN_ID, null);
    wechat.pay(orderId);
    stack
        .app()
        .gateway()
        .refund(
            TenantIds.DEFAULT,
            WeChatTrade.ofTenantMerchant(orderId),
            "manual-" + orderId,
            100,
            "refunded by the merchant");
    assertThat(wechat.trade(orderId).orElseThrow().state()).isEqualTo(TradeState.REFUND);
  }

  private CompensationReport compensate() {
    return stack
        .app()
        .newCompensator(CompensationSettings.defaults().withNotifyGrace(Duration.ZERO))
        .run();
  }

  @Test
  void aRefundedTradeClosesItsOrderUnpaidAndCompensationFlagsIt() {
    paidAndRefundedByHand("rf-close-01");
    expireNow(stack, "rf-close-01");
    int refunds = wechat.callCount(Endpoint.REFUND);

    CloseResult result =
        stack.app().closer().close(TenantIds.DEFAULT, List.of("rf-close-01"), CloseReason.TIMEOUT);
    CompensationReport report = compensate();

    // before: REFUND counted as paid, the order became PAID and its stock sold
    assertThat(result.paid()).isEmpty();
    assertThat(result.closed()).extracting(ClosedOrder::orderId).containsExactly("rf-close-01");
    assertThat(stack.dump("SELECT status, transaction_id FROM orders"))
        .containsExactly("CLOSED|null|");
    assertThat(stack.dump("SELECT available, reserved, sold FROM stock"))
        .containsExactly("10|0|0|");
    assertThat(stack.dump("SELECT status FROM coupons")).containsExactly("AVAILABLE|");
    assertThat(stack.app().metrics().counter("close_refunded_trade")).isEqualTo(1);
    assertThat(report.flags())
        .extracting(f -> f.kind() + " " + f.subject())
        .containsExactly("REFUNDED_TRADE rf-close-01");
    assertThat(report.count("paid_after_close_found")).isZero();
    assertThat(stack.count("SELECT COUNT(*) FROM paid_after_close")).isZero();
    assertThat(wechat.callCount(Endpoint.REFUND)).isEqualTo(refunds);
  }

  @Test
  void compensationFlagsAnUnpaidOrderWhoseTradeWasRefundedInsteadOfMarkingItPaid() {
    paidAndRefundedByHand("rf-unpaid-1");

    CompensationReport report = compensate();

    // before: the lost-notification audit made the order PAID and sold its stock
    assertThat(report.count("lost_notifications_paid")).isZero();
    assertThat(report.flags())
        .extracting(f -> f.kind() + " " + f.subject())
        .containsExactly("REFUNDED_TRADE rf-unpaid-1");
    assertThat(stack.dump("SELECT status FROM orders")).containsExactly("UNPAID|");
    assertThat(stack.dump("SELECT available, reserved, sold FROM stock")).containsExactly("8|2|0|");
  }
}
