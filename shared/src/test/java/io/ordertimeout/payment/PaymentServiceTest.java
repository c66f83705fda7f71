package io.ordertimeout.payment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.wechat.Endpoint;
import io.ordertimeout.embedded.wechat.Fault;
import io.ordertimeout.embedded.wechat.TradeSnapshot;
import io.ordertimeout.payment.PaymentMismatchException.Kind;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.testing.WeChatStackFixture;
import io.ordertimeout.wechat.PaymentTransientException;
import io.ordertimeout.wechat.RefundResult;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The paid path's refusals, duplicates and paid-after-close refunds, on the real servers and the
 * WeChat Pay simulator. TestStack.place orders cost 100 fen.
 */
class PaymentServiceTest extends WeChatStackFixture {
  /** The stack each test runs on; PaymentServiceAffectedRowsTest swaps the JDBC URL. */
  @Override
  protected TestStack newStack() {
    return TestStack.withWeChat("pay-svc", wechat);
  }

  @BeforeEach
  void seed() {
    stack.seedSku("sku-a", 100);
    stack.seedCoupon("cp-1", "u1");
  }

  private PaymentService payments() {
    return stack.app().payments();
  }

  private static PaidTrade trade(String tenant, String orderId, String txn, long amountFen) {
    return new PaidTrade(
        tenant,
        orderId,
        txn,
        amountFen,
        Instant.parse("2026-01-02T03:04:05Z"),
        PaidTrade.Source.NOTIFY);
  }

  /**
   * Places and prepays {@code orderId}, lets WeChat's payer pay it (the notification is lost: no
   * webhook), then closes the order in the database without asking WeChat, as a close that raced
   * the payment would have. Returns WeChat's trade.
   */
  private TradeSnapshot closedButPaidAtWeChat(String orderId) {
    stack.place(orderId, "u1", 600, null, new OrderItem("sku-a", 2));
    stack.app().prepays().prepay(TenantIds.DEFAULT, orderId, OPEN_ID, null);
    TradeSnapshot paid = wechat.pay(orderId);
    closeWithoutWeChat(orderId);
    return paid;
  }

  private void closeWithoutWeChat(String orderId) {
    stack.update(
        "UPDATE orders SET prepaid_at = NULL, prepay_id = NULL,"
            + " expire_at = TIMESTAMPADD(MICROSECOND, -1000, NOW(3)) WHERE order_id = ?",
        orderId);
    assertThat(
            stack
                .app()
                .closer()
                .close(TenantIds.DEFAULT, List.of(orderId), CloseReason.TIMEOUT)
                .closed())
        .hasSize(1);
  }

  private List<String> pacRow(String orderId) {
    return stack.dump(
        "SELECT transaction_id, amount_fen, detected_by, out_refund_no, refund_status,"
            + " refund_attempts, refund_id IS NOT NULL, last_error FROM paid_after_close"
            + " WHERE order_id = '"
            + orderId
            + "'");
  }

  @Test
  void mismatchedTradesAreRefusedBeforeAnyWrite() {
    stack.place("ord-mm-01", "u1", 600, "cp-1", new OrderItem("sku-a", 1));
    List<String> before = stack.databaseState();

    assertMismatch(trade("default", "ord-nope", "4200000001", 100), Kind.UNKNOWN_ORDER, "ord-nope");
    assertMismatch(
        trade("shop-9", "ord-mm-01", "4200000001", 100), Kind.UNKNOWN_ORDER, "ord-mm-01");
    assertMismatch(
        trade("default", "ord-mm-01", "4200000001", 99), Kind.AMOUNT_MISMATCH, "ord-mm-01");
    assertThatThrownBy(() -> trade("default", "ord-mm-01", " ", 100))
        .isInstanceOfSatisfying(
            PaymentMismatchException.class, e -> assertThat(e.kind()).isEqualTo(Kind.MALFORMED));

    assertThat(stack.databaseState()).isEqualTo(before);
    assertThat(stack.app().timers().deadlineOf(TenantIds.DEFAULT, "ord-mm-01")).isPresent();
    assertThat(payments().alreadySettled(trade("default", "ord-nope", "4200000001", 100)))
        .isFalse();
  }

  /**
   * The webhook asks alreadySettled before the paid path: another tenant's merchant reporting the
   * very trade that paid an order must get the paid path's UNKNOWN_ORDER (that tenant has no such
   * order), not "already applied" (which the webhook would answer 204 for an order that tenant does
   * not own).
   */
  @Test
  void aPaidOrderIsNotSettledForAnotherTenantsTrade() {
    stack.place("ord-ten-01", "u1", 600, null, new OrderItem("sku-a", 1));
    PaidTrade paid = trade("default", "ord-ten-01", "4200000021", 100);
    assertThat(payments().apply(paid)).isEqualTo(PaymentOutcome.PAID);
    List<String> after = stack.databaseState();
    PaidTrade sameTradeOtherTenant = trade("shop-9", "ord-ten-01", "4200000021", 100);

    assertThat(payments().alreadySettled(paid)).isTrue();
    assertThat(payments().alreadySettled(sameTradeOtherTenant)).isFalse();
    assertMismatch(sameTradeOtherTenant, Kind.UNKNOWN_ORDER, "ord-ten-01");
    assertThat(stack.databaseState()).isEqualTo(after);
  }

  private void assertMismatch(PaidTrade trade, Kind kind, String orderId) {
    assertThatThrownBy(() -> payments().apply(trade))
        .isInstanceOfSatisfying(
            PaymentMismatchException.class,
            e -> {
              assertThat(e.kind()).isEqualTo(kind);
              assertThat(e.orderId()).isEqualTo(orderId);
              assertThat(e.getMessage()).contains(orderId, kind.name());
            });
  }

  @Test
  void aSecondSuccessChangesNothingAndAnotherTransactionIsRefused() {
    stack.place("ord-dup-01", "u1", 600, "cp-1", new OrderItem("sku-a", 3));
    PaidTrade paid = trade("default", "ord-dup-01", "4200000011", 100);

    assertThat(payments().alreadySettled(paid)).isFalse();
    assertThat(payments().apply(paid)).isEqualTo(PaymentOutcome.PAID);
    List<String> afterFirst = stack.databaseState();
    assertThat(payments().apply(paid)).isEqualTo(PaymentOutcome.ALREADY_PAID);
    assertMismatch(
        trade("default", "ord-dup-01", "4200000099", 100), Kind.TRANSACTION_MISMATCH, "ord-dup-01");

    assertThat(stack.databaseState()).isEqualTo(afterFirst);
    assertThat(stack.dump("SELECT status, transaction_id, paid_at FROM orders"))
        .containsExactly("PAID|4200000011|2026-01-02 03:04:05|");
    assertThat(stack.dump("SELECT available, reserved, sold FROM stock"))
        .containsExactly("97|0|3|");
    assertThat(stack.dump("SELECT status FROM coupons")).containsExactly("USED|");
    assertThat(stack.app().timers().deadlineOf(TenantIds.DEFAULT, "ord-dup-01")).isEmpty();
    assertThat(payments().alreadySettled(paid)).isTrue();
    assertThat(payments().alreadySettled(trade("default", "ord-dup-01", "4200000099", 100)))
        .isFalse();
    assertThat(stack.app().metrics().counter("orders_paid")).isEqualTo(1);
    assertThat(stack.app().metrics().counter("payment_duplicates")).isEqualTo(1);
  }

  @Test
  void aPaymentOfAClosedOrderIsRecordedOnceAndRefundedOnce() {
    TradeSnapshot wx = closedButPaidAtWeChat("ord-pac-01");
    PaidTrade paid = trade("default", "ord-pac-01", wx.transactionId(), 100);
    List<String> stockBefore = stack.dump("SELECT available, reserved, sold FROM stock");

    assertThat(payments().alreadySettled(paid)).isFalse();
    assertThat(payments().apply(paid)).isEqualTo(PaymentOutcome.PAID_AFTER_CLOSE);
    int refunds = wechat.callCount(Endpoint.REFUND);
    assertThat(payments().apply(paid)).isEqualTo(PaymentOutcome.PAID_AFTER_CLOSE);

    assertThat(pacRow("ord-pac-01"))
        .containsExactly(wx.transactionId() + "|100|NOTIFY|ord-pac-01-pac|PROCESSING|1|1|null|");
    assertThat(wechat.callCount(Endpoint.REFUND)).isEqualTo(refunds);
    assertThat(wechat.trade("ord-pac-01").orElseThrow().refundedFen()).isEqualTo(100);
    assertThat(stack.dump("SELECT status FROM orders")).containsExactly("CLOSED|");
    assertThat(stack.dump("SELECT available, reserved, sold FROM stock")).isEqualTo(stockBefore);
    assertThat(payments().alreadySettled(paid)).isTrue();
    assertThat(payments().retryRefund(TenantIds.DEFAULT, "ord-pac-01"))
        .isNull(); // settled: no second request
    assertThat(stack.app().metrics().counter("paid_after_close")).isEqualTo(1);
    assertThat(stack.app().metrics().counter("paid_after_close_refunds")).isEqualTo(1);
  }

  @Test
  void aRefundWeChatDidNotTakeIsRecordedAndTakenByTheRetry() {
    TradeSnapshot wx = closedButPaidAtWeChat("ord-pac-02");
    PaidTrade paid = trade("default", "ord-pac-02", wx.transactionId(), 100);
    wechat.injectFault(Endpoint.REFUND, Fault.SYSTEM_ERROR, 1);

    assertThatThrownBy(() -> payments().apply(paid))
        .isInstanceOfSatisfying(
            PaymentTransientException.class, e -> assertThat(e.code()).isEqualTo("SYSTEM_ERROR"));
    assertThat(pacRow("ord-pac-02").get(0))
        .startsWith(wx.transactionId() + "|100|NOTIFY|ord-pac-02-pac|PENDING|1|0|")
        .contains("SYSTEM_ERROR");
    assertThat(payments().alreadySettled(paid)).isFalse();
    assertThat(stack.app().metrics().counter("paid_after_close_refund_failures")).isEqualTo(1);

    RefundResult retried = payments().retryRefund(TenantIds.DEFAULT, "ord-pac-02");

    assertThat(retried).isNotNull();
    assertThat(retried.refundId()).isNotBlank();
    assertThat(pacRow("ord-pac-02"))
        .containsExactly(wx.transactionId() + "|100|NOTIFY|ord-pac-02-pac|PROCESSING|2|1|null|");
    assertThat(wechat.trade("ord-pac-02").orElseThrow().refundedFen()).isEqualTo(100);
    assertThat(payments().alreadySettled(paid)).isTrue();
  }

  @Test
  void aRefundWeChatRejectsIsLeftForAHuman() {
    // Prepaid but never paid at WeChat: a "paid" trade for it cannot be refunded there.
    stack.place("ord-pac-03", "u1", 600, null, new OrderItem("sku-a", 1));
    stack.app().prepays().prepay(TenantIds.DEFAULT, "ord-pac-03", OPEN_ID, null);
    closeWithoutWeChat("ord-pac-03");
    PaidTrade paid =
        new PaidTrade("default", "ord-pac-03", "4200000333", 100, null, PaidTrade.Source.CLOSE);

    assertThat(payments().apply(paid)).isEqualTo(PaymentOutcome.PAID_AFTER_CLOSE);

    assertThat(pacRow("ord-pac-03").get(0))
        .startsWith("4200000333|100|CLOSE|ord-pac-03-pac|PENDING|1|0|")
        .contains("INVALID_REQUEST");
    assertThat(stack.app().metrics().counter("paid_after_close_refund_rejected")).isEqualTo(1);
    assertThat(wechat.trade("ord-pac-03").orElseThrow().refundedFen()).isZero();
    assertThat(payments().alreadySettled(paid)).isFalse();
  }

  @Test
  void withoutAGatewayTheCaseIsRecordedAndLeftPending() {
    try (TestStack plain = TestStack.create("pay-svc-nogw")) {
      plain.seedSku("sku-a", 10);
      plain.place("ord-pac-04", "u1", 600, null, new OrderItem("sku-a", 1));
      plain.app().closer().close(TenantIds.DEFAULT, List.of("ord-pac-04"), CloseReason.USER_CANCEL);

      PaymentOutcome outcome =
          plain.app().payments().apply(trade("default", "ord-pac-04", "4200000444", 100));

      assertThat(outcome).isEqualTo(PaymentOutcome.PAID_AFTER_CLOSE);
      assertThat(
              plain.dump("SELECT refund_status, refund_attempts, last_error FROM paid_after_close"))
          .containsExactly("PENDING|1|no payment gateway configured|");
      assertThat(plain.app().metrics().counter("paid_after_close_refund_failures")).isEqualTo(1);
      assertThat(plain.app().payments().retryRefund(TenantIds.DEFAULT, "ord-unknown")).isNull();
      assertThatThrownBy(() -> plain.app().notifications())
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("OTC_WECHAT_");
      plain.assertInvariants();
    }
  }
}
