package io.ordertimeout.payment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ordertimeout.compensation.CompensationSettings;
import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.PlaceOrderCommand;
import io.ordertimeout.embedded.wechat.Endpoint;
import io.ordertimeout.embedded.wechat.SignedNotification;
import io.ordertimeout.embedded.wechat.TradeSnapshot;
import io.ordertimeout.payment.RefundNotificationService.Result;
import io.ordertimeout.testing.Await;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.testing.WeChatStackFixture;
import io.ordertimeout.wechat.GatewaySettings;
import io.ordertimeout.wechat.MerchantCredentials;
import io.ordertimeout.wechat.PaymentGateway;
import io.ordertimeout.wechat.RefundResult;
import io.ordertimeout.wechat.RefundStatus;
import io.ordertimeout.wechat.StaticMerchantDirectory;
import io.ordertimeout.wechat.WeChatPayGateway;
import io.ordertimeout.wechat.WeChatTrade;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Refund outcomes on the real SDK against the simulator: a paid-after-close refund tracked from
 * WeChat's acceptance to its final word, by notification or by compensation's query; ABNORMAL
 * flagged for an operator; a notification of one tenant's refund posted to another tenant of the
 * same merchant refused; refunds of one order a minute apart.
 */
class RefundOutcomesTest extends WeChatStackFixture {
  private static final String A = "shop-a";
  private static final String B = "shop-b";

  @Override
  protected TestStack newStack() {
    return TestStack.withOverrides("refunds", Map.of(), sharedMerchant());
  }

  /** Tenants A, B and default on the simulator's one merchant account. */
  private PaymentGateway sharedMerchant() {
    MerchantCredentials one = TestStack.credentialsFor(wechat);
    return new WeChatPayGateway(
        new StaticMerchantDirectory(Map.of(A, one, B, one, "default", one)),
        Clock.systemUTC(),
        GatewaySettings.production()
            .withReadTimeout(Duration.ofSeconds(5))
            .withBaseUrl(wechat.baseUrl()));
  }

  @BeforeEach
  void seed() {
    for (String tenant : List.of(A, B)) {
      stack.app().tenants().onboard(tenant);
      stack.update(
          "INSERT INTO stock (tenant_id, sku_id, available, total) VALUES (?, 'sku-1', 10, 10)",
          tenant);
    }
    // settled by the tests' own controls unless a test shortens it
    wechat.setRefundDelay(Duration.ofHours(1));
  }

  private static String newId() {
    return "rf" + UUID.randomUUID().toString().replace("-", "").substring(0, 20);
  }

  /** An order of {@code tenant} paid at WeChat after it closed here: refunded, PROCESSING. */
  private String paidAfterClose(String tenant, String orderId) {
    stack
        .app()
        .placeOrders()
        .place(
            new PlaceOrderCommand(
                orderId, tenant, "u1", List.of(new OrderItem("sku-1", 1)), null, 100, 600));
    stack.app().prepays().prepay(tenant, orderId, OPEN_ID, null);
    TradeSnapshot paid = wechat.pay(orderId);
    stack.update(
        "UPDATE orders SET prepaid_at = NULL, prepay_id = NULL,"
            + " expire_at = TIMESTAMPADD(MICROSECOND, -1000, NOW(3))"
            + " WHERE tenant_id = ? AND order_id = ?",
        tenant,
        orderId);
    assertThat(stack.app().closer().close(tenant, List.of(orderId), CloseReason.TIMEOUT).closed())
        .hasSize(1);
    PaymentOutcome outcome =
        stack
            .app()
            .payments()
            .apply(
                new PaidTrade(
                    tenant,
                    orderId,
                    paid.transactionId(),
                    100,
                    paid.successTime(),
                    PaidTrade.Source.CLOSE));
    assertThat(outcome).isEqualTo(PaymentOutcome.PAID_AFTER_CLOSE);
    return orderId + "-pac";
  }

  private List<String> refundRow(String tenant, String outRefundNo) {
    return stack.dump(
        "SELECT r.status, r.status_source, r.request_count, r.refund_id IS NOT NULL,"
            + " p.refund_status FROM refunds r LEFT JOIN paid_after_close p"
            + " ON p.tenant_id = r.tenant_id AND p.out_refund_no = r.out_refund_no"
            + " WHERE r.tenant_id = '"
            + tenant
            + "' AND r.out_refund_no = '"
            + outRefundNo
            + "'");
  }

  private Result handle(String tenant, SignedNotification n) {
    return stack.app().paymentWebhook().refunds().handle(tenant, n.headers(), n.body());
  }

  private List<String> openFlags(String kind) {
    return stack.dump(
        "SELECT tenant_id, subject FROM compensation_flags WHERE kind = '"
            + kind
            + "' AND resolved_at IS NULL ORDER BY tenant_id, subject");
  }

  @Test
  void aPaidAfterCloseRefundIsTrackedFromAcceptanceToItsNotifiedSuccess() {
    String orderId = newId();
    String outRefundNo = paidAfterClose(A, orderId);
    assertThat(refundRow(A, outRefundNo)).containsExactly("PROCESSING|CREATE|1|1|PROCESSING|");

    wechat.loseRefundNotification(outRefundNo); // delivered by hand below
    wechat.settleRefund(outRefundNo, "SUCCESS");
    SignedNotification n = wechat.refundNotification(outRefundNo).build();

    assertThat(handle(A, n)).isEqualTo(Result.APPLIED);
    assertThat(refundRow(A, outRefundNo)).containsExactly("SUCCESS|NOTIFY|1|1|SUCCESS|");
    assertThat(
            stack.dump(
                "SELECT success_at IS NOT NULL, user_received_account FROM refunds"
                    + " WHERE out_refund_no = '"
                    + outRefundNo
                    + "'"))
        .containsExactly("1|支付用户零钱|");
    List<String> after = stack.databaseState();
    // WeChat's retry of the same event: acknowledged, nothing written, whatever its nonce
    assertThat(handle(A, n)).isEqualTo(Result.ALREADY_APPLIED);
    assertThat(stack.databaseState()).isEqualTo(after);
    assertThat(refundRow(A, outRefundNo)).containsExactly("SUCCESS|NOTIFY|1|1|SUCCESS|");
  }

  @Test
  void anAbnormalRefundIsFlaggedCountedAndResolvedOnceWeChatGoesOn() {
    String orderId = newId();
    String outRefundNo = paidAfterClose(A, orderId);
    wechat.loseRefundNotification(outRefundNo);
    wechat.settleRefund(outRefundNo, "ABNORMAL");

    assertThat(handle(A, wechat.refundNotification(outRefundNo).build())).isEqualTo(Result.APPLIED);

    assertThat(refundRow(A, outRefundNo)).containsExactly("ABNORMAL|NOTIFY|1|1|ABNORMAL|");
    assertThat(openFlags(Refunds.ABNORMAL_FLAG)).containsExactly(A + "|" + orderId + "|");
    assertThat(stack.app().metrics().counter("refunds_abnormal")).isEqualTo(1);

    // the operator applies for the exception refund; WeChat pays it; its notification is lost
    wechat.loseRefundNotification(outRefundNo);
    wechat.reapplyAbnormalRefund(outRefundNo);
    wechat.settleRefund(outRefundNo, "SUCCESS");
    ageRequest(outRefundNo);
    stack.app().newCompensator(CompensationSettings.defaults()).run();

    assertThat(refundRow(A, outRefundNo)).containsExactly("SUCCESS|QUERY|1|1|SUCCESS|");
    assertThat(openFlags(Refunds.ABNORMAL_FLAG)).isEmpty();
  }

  @Test
  void withoutANotificationCompensationQueriesTheRefund() {
    wechat.setRefundDelay(Duration.ofMillis(50));
    String orderId = newId();
    String outRefundNo = orderId + "-pac";
    wechat.loseRefundNotification(outRefundNo);
    paidAfterClose(A, orderId);
    Await.until(
        "the simulator settled " + outRefundNo,
        Duration.ofSeconds(10),
        () -> wechat.refundStatus(outRefundNo).orElse("").equals("SUCCESS"));
    assertThat(refundRow(A, outRefundNo)).containsExactly("PROCESSING|CREATE|1|1|PROCESSING|");
    int queries = wechat.callCount(Endpoint.REFUND_QUERY);

    // within the notify grace nothing is asked: the notification may still come
    stack.app().newCompensator(CompensationSettings.defaults()).run();
    assertThat(wechat.callCount(Endpoint.REFUND_QUERY)).isEqualTo(queries);

    ageRequest(outRefundNo);
    var report = stack.app().newCompensator(CompensationSettings.defaults()).run();

    assertThat(refundRow(A, outRefundNo)).containsExactly("SUCCESS|QUERY|1|1|SUCCESS|");
    assertThat(report.toJson()).contains("refunds_settled_by_query");
    assertThat(wechat.callCount(Endpoint.REFUND_QUERY)).isEqualTo(queries + 1);
    // a settled refund is not asked about again
    stack.app().newCompensator(CompensationSettings.defaults()).run();
    assertThat(wechat.callCount(Endpoint.REFUND_QUERY)).isEqualTo(queries + 1);
  }

  /** As if the refund was sent two minutes ago: past compensation's notify grace. */
  private void ageRequest(String outRefundNo) {
    stack.update(
        "UPDATE refunds SET requested_at = TIMESTAMPADD(MINUTE, -2, requested_at)"
            + " WHERE out_refund_no = ?",
        outRefundNo);
  }

  @Test
  void aClosedRefundIsFlaggedAndFinal() {
    String orderId = newId();
    String outRefundNo = paidAfterClose(A, orderId);
    wechat.loseRefundNotification(outRefundNo);
    wechat.settleRefund(outRefundNo, "CLOSED");
    SignedNotification closed = wechat.refundNotification(outRefundNo).build();

    assertThat(handle(A, closed)).isEqualTo(Result.APPLIED);

    assertThat(refundRow(A, outRefundNo)).containsExactly("CLOSED|NOTIFY|1|1|CLOSED|");
    assertThat(openFlags(Refunds.CLOSED_FLAG)).containsExactly(A + "|" + orderId + "|");
    // final: a later SUCCESS word (forged order of events) changes nothing
    assertThat(
            stack
                .app()
                .payments()
                .refunds()
                .apply(
                    A,
                    outRefundNo,
                    new Refunds.Outcome(RefundStatus.SUCCESS, null, null, null),
                    Refunds.Source.QUERY))
        .isFalse();
    assertThat(refundRow(A, outRefundNo)).containsExactly("CLOSED|NOTIFY|1|1|CLOSED|");
  }

  /**
   * Tenants A and B share one merchant: A's genuine refund notification verifies on B's URL too. It
   * must change nothing for B (B has no order bound to that trade) nor for A, and answer
   * UNKNOWN_ORDER (the webhook's 404); A's own URL then applies it.
   */
  @Test
  void aRefundNotificationOnAnotherTenantsUrlChangesNothing() {
    String orderId = newId();
    String outRefundNo = paidAfterClose(A, orderId);
    wechat.loseRefundNotification(outRefundNo);
    wechat.settleRefund(outRefundNo, "SUCCESS");
    SignedNotification n = wechat.refundNotification(outRefundNo).build();
    List<String> before = stack.databaseState();
    List<String> refundsBefore = stack.dump("SELECT * FROM refunds ORDER BY 1, 2");

    assertThatThrownBy(() -> handle(B, n))
        .isInstanceOfSatisfying(
            PaymentMismatchException.class,
            e -> assertThat(e.kind()).isEqualTo(PaymentMismatchException.Kind.UNKNOWN_ORDER));

    assertThat(stack.databaseState()).isEqualTo(before);
    assertThat(stack.dump("SELECT * FROM refunds ORDER BY 1, 2")).isEqualTo(refundsBefore);
    assertThat(stack.app().metrics().counter("refund_notifications_unbound")).isEqualTo(1);
    // the nonce was not spent on B's refusal: A's URL takes the very same request
    assertThat(handle(A, n)).isEqualTo(Result.APPLIED);
    assertThat(refundRow(A, outRefundNo)).containsExactly("SUCCESS|NOTIFY|1|1|SUCCESS|");
  }

  @Test
  void aReusedNonceOnAnUnappliedRefundIsRefusedBeforeAnyWrite() {
    String first = paidAfterClose(A, newId());
    String second = paidAfterClose(A, newId());
    for (String no : List.of(first, second)) {
      wechat.loseRefundNotification(no);
      wechat.settleRefund(no, "SUCCESS");
    }
    SignedNotification one = wechat.refundNotification(first).build();
    assertThat(handle(A, one)).isEqualTo(Result.APPLIED);
    SignedNotification replay =
        wechat.refundNotification(second).nonce(one.header("Wechatpay-Nonce")).build();

    assertThatThrownBy(() -> handle(A, replay)).isInstanceOf(ReplayedNotificationException.class);
    assertThat(refundRow(A, second)).containsExactly("PROCESSING|CREATE|1|1|PROCESSING|");
  }

  /**
   * WeChat wants refunds of one order a minute apart: a second refund of the order within the
   * spacing is not sent (no call reaches WeChat, its row stays PENDING), a retry of the first (same
   * out_refund_no) is answered from the row, and once the spacing passed the second goes.
   */
  @Test
  void refundsOfOneOrderGoAtLeastTheSpacingApart() throws InterruptedException {
    String orderId = newId();
    stack
        .app()
        .placeOrders()
        .place(
            new PlaceOrderCommand(
                orderId, A, "u1", List.of(new OrderItem("sku-1", 1)), null, 100, 600));
    stack.app().prepays().prepay(A, orderId, OPEN_ID, null);
    TradeSnapshot paid = wechat.pay(orderId);
    stack
        .app()
        .payments()
        .apply(
            new PaidTrade(
                A,
                orderId,
                paid.transactionId(),
                100,
                paid.successTime(),
                PaidTrade.Source.NOTIFY));
    Duration spacing = Duration.ofSeconds(1);
    Refunds refunds =
        new Refunds(
            new io.ordertimeout.mysql.Tx(stack.app().dataSource()),
            stack.app().gateway(),
            stack.app().metrics(),
            spacing);
    WeChatTrade trade = stack.app().payments().bindings().resolve(A, orderId).trade();
    Refunds.Request first =
        new Refunds.Request(
            A, orderId, trade, orderId + "-r1", 40, "部分退款", Refunds.Purpose.PAID_AFTER_CLOSE);
    Refunds.Request second =
        new Refunds.Request(
            A, orderId, trade, orderId + "-r2", 60, "部分退款", Refunds.Purpose.PAID_AFTER_CLOSE);
    int calls = wechat.callCount(Endpoint.REFUND);

    assertThat(refunds.request(first).status()).isEqualTo(RefundStatus.PROCESSING);
    assertThatThrownBy(() -> refunds.request(second))
        .isInstanceOf(RefundSpacingException.class)
        .hasMessageContaining(orderId + "-r1");
    RefundResult retried = refunds.request(first);

    assertThat(retried.status()).isEqualTo(RefundStatus.PROCESSING);
    assertThat(wechat.callCount(Endpoint.REFUND)).isEqualTo(calls + 1);
    assertThat(
            stack.dump(
                "SELECT out_refund_no, status, request_count, requested_at IS NOT NULL"
                    + " FROM refunds WHERE order_id = '"
                    + orderId
                    + "' ORDER BY out_refund_no"))
        .containsExactly(orderId + "-r1|PROCESSING|1|1|", orderId + "-r2|PENDING|0|0|");

    Thread.sleep(spacing.toMillis() + 100);
    assertThat(refunds.request(second).status()).isEqualTo(RefundStatus.PROCESSING);
    assertThat(wechat.callCount(Endpoint.REFUND)).isEqualTo(calls + 2);
    assertThat(
            stack.dump(
                "SELECT TIMESTAMPDIFF(MICROSECOND, a.requested_at, b.requested_at) >= 1000000"
                    + " FROM refunds a JOIN refunds b ON b.order_id = a.order_id"
                    + " WHERE a.out_refund_no = '"
                    + orderId
                    + "-r1' AND b.out_refund_no = '"
                    + orderId
                    + "-r2'"))
        .containsExactly("1|");
  }
}
