package io.ordertimeout.payment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.wechat.SignedNotification;
import io.ordertimeout.payment.NotificationService.Result;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.testing.WeChatStackFixture;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The payment-notify use case on notifications signed by the WeChat Pay simulator. */
class NotificationServiceTest extends WeChatStackFixture {
  @Override
  protected TestStack newStack() {
    return TestStack.withWeChat("notify-svc", wechat);
  }

  @BeforeEach
  void seed() {
    stack.seedSku("sku-a", 100);
  }

  /** A placed, prepaid order that the payer paid at WeChat; its notification not yet delivered. */
  private String paidAtWeChat(String orderId) {
    stack.place(orderId, "u1", 600, null, new OrderItem("sku-a", 1));
    stack.app().prepays().prepay(TenantIds.DEFAULT, orderId, OPEN_ID, null);
    wechat.pay(orderId);
    return orderId;
  }

  private Result handle(SignedNotification n) {
    return stack.app().notifications().handle("default", n.headers(), n.body());
  }

  private String status(String orderId) {
    return stack.dump("SELECT status FROM orders WHERE order_id = '" + orderId + "'").get(0);
  }

  @Test
  void aRedeliveredSuccessIsAcknowledgedWithoutASecondWrite() {
    SignedNotification n = wechat.notification(paidAtWeChat("ord-nt-01")).build();

    assertThat(handle(n)).isEqualTo(Result.APPLIED);
    List<String> afterFirst = stack.databaseState();
    assertThat(handle(n)).isEqualTo(Result.ALREADY_APPLIED); // same nonce, already settled

    assertThat(stack.databaseState()).isEqualTo(afterFirst);
    assertThat(status("ord-nt-01")).isEqualTo("PAID|");
    assertThat(stack.app().metrics().counter("payment_duplicates")).isEqualTo(1);
  }

  @Test
  void aReusedNonceOnAnUnappliedPaymentIsRefusedBeforeAnyWrite() {
    SignedNotification first = wechat.notification(paidAtWeChat("ord-nt-02")).build();
    assertThat(handle(first)).isEqualTo(Result.APPLIED);
    SignedNotification replay =
        wechat
            .notification(paidAtWeChat("ord-nt-03"))
            .nonce(first.header("Wechatpay-Nonce"))
            .build();
    List<String> before = stack.databaseState();

    assertThatThrownBy(() -> handle(replay)).isInstanceOf(ReplayedNotificationException.class);

    assertThat(stack.databaseState()).isEqualTo(before);
    assertThat(status("ord-nt-03")).isEqualTo("UNPAID|");
    assertThat(stack.app().metrics().counter("payment_notifications_replayed")).isEqualTo(1);
  }

  @Test
  void aNotificationThatFailsToApplyIsJudgedAfreshWhenRedelivered() {
    SignedNotification n = wechat.notification(paidAtWeChat("ord-nt-04")).build();
    stack.update("UPDATE orders SET amount_fen = 101 WHERE order_id = 'ord-nt-04'");

    assertThatThrownBy(() -> handle(n))
        .isInstanceOfSatisfying(
            PaymentMismatchException.class,
            e -> assertThat(e.kind()).isEqualTo(PaymentMismatchException.Kind.AMOUNT_MISMATCH));
    assertThat(status("ord-nt-04")).isEqualTo("UNPAID|");

    // The nonce was forgotten with the failure: the identical request now applies.
    stack.update("UPDATE orders SET amount_fen = 100 WHERE order_id = 'ord-nt-04'");
    assertThat(handle(n)).isEqualTo(Result.APPLIED);
    assertThat(status("ord-nt-04")).isEqualTo("PAID|");
  }

  @Test
  void otherEventTypesAreAcknowledgedAndIgnored() {
    SignedNotification n =
        wechat.notification(paidAtWeChat("ord-nt-05")).eventType("REFUND.SUCCESS").build();
    List<String> before = stack.databaseState();

    assertThat(handle(n)).isEqualTo(Result.IGNORED);

    assertThat(stack.databaseState()).isEqualTo(before);
    assertThat(stack.app().metrics().counter("payment_notifications_ignored")).isEqualTo(1);
  }
}
