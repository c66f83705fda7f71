package io.ordertimeout.functions.notify;

import static io.ordertimeout.testing.Deadlines.expireNow;
import static org.assertj.core.api.Assertions.assertThat;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.amazonaws.services.lambda.runtime.tests.EventLoader;
import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.wechat.SignedNotification;
import io.ordertimeout.payment.PaidTrade;
import io.ordertimeout.payment.PaymentOutcome;
import io.ordertimeout.testing.LambdaTestContext;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.testing.WeChatStackFixture;
import io.ordertimeout.util.Json;
import java.security.KeyPairGenerator;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code POST /wechatpay/refund-notify/{tenantId}} through the handler and the real SDK: a genuine
 * refund notification settles the tracked refund (204 after the commit), and hostile or malformed
 * requests get WeChat's {"code":"FAIL"} 4xx and change nothing. Notifications are signed by the
 * simulator and carried in the route's sample event.
 */
class RefundNotifyRouteTest extends WeChatStackFixture {
  static final String EVENT = "../../events/payment-notify-wechat-refund.json";
  private PaymentNotifyHandler handler;

  @Override
  protected TestStack newStack() {
    return TestStack.withWeChat("refund-notify", wechat);
  }

  @BeforeEach
  void setUp() {
    stack.seedSku("sku-tea", 10);
    handler = new PaymentNotifyHandler(stack.app().paymentWebhook());
    wechat.setRefundDelay(Duration.ofHours(1)); // settled by the tests' own controls
  }

  /** A paid-after-close case of the default tenant, its refund PROCESSING at WeChat. */
  private String refundedAfterClose(String orderId) {
    stack.place(orderId, "u1", 600, null, new OrderItem("sku-tea", 1));
    stack.app().prepays().prepay(TenantIds.DEFAULT, orderId, OPEN_ID, null);
    var paid = wechat.pay(orderId);
    stack.update(
        "UPDATE orders SET prepaid_at = NULL, prepay_id = NULL WHERE order_id = ?", orderId);
    expireNow(stack, orderId);
    stack.app().closer().close(TenantIds.DEFAULT, List.of(orderId), CloseReason.TIMEOUT);
    assertThat(
            stack
                .app()
                .payments()
                .apply(
                    new PaidTrade(
                        TenantIds.DEFAULT,
                        orderId,
                        paid.transactionId(),
                        100,
                        paid.successTime(),
                        PaidTrade.Source.CLOSE)))
        .isEqualTo(PaymentOutcome.PAID_AFTER_CLOSE);
    String outRefundNo = orderId + "-pac";
    wechat.loseRefundNotification(outRefundNo); // the tests deliver it
    return outRefundNo;
  }

  private APIGatewayV2HTTPResponse deliver(String tenantId, SignedNotification n) {
    return handler.handleRequest(event(tenantId, n), new LambdaTestContext("refund", 10_000));
  }

  private static APIGatewayV2HTTPEvent event(String tenantId, SignedNotification n) {
    APIGatewayV2HTTPEvent event = EventLoader.loadApiGatewayHttpEvent(EVENT);
    Map<String, String> headers = new HashMap<>(event.getHeaders());
    n.headers().forEach((k, v) -> headers.put(k.toLowerCase(Locale.ROOT), v));
    event.setHeaders(headers);
    event.setBody(n.body());
    Map<String, String> params = new HashMap<>();
    params.put("tenantId", tenantId);
    event.setPathParameters(params);
    event.setRawPath("/wechatpay/refund-notify/" + tenantId);
    return event;
  }

  private static String failMessage(APIGatewayV2HTTPResponse r) throws Exception {
    var body = Json.MAPPER.readTree(r.getBody());
    assertThat(body.get("code").asText()).isEqualTo("FAIL");
    return body.get("message").asText();
  }

  private String refundState(String outRefundNo) {
    return stack
        .dump(
            "SELECT r.status, r.status_source, p.refund_status FROM refunds r"
                + " JOIN paid_after_close p ON p.tenant_id = r.tenant_id"
                + " AND p.out_refund_no = r.out_refund_no WHERE r.out_refund_no = '"
                + outRefundNo
                + "'")
        .get(0);
  }

  @Test
  void aGenuineRefundSuccessSettlesTheRefundAfterTheCommit() {
    String outRefundNo = refundedAfterClose("rfn-000001");
    wechat.settleRefund(outRefundNo, "SUCCESS");
    SignedNotification n = wechat.refundNotification(outRefundNo).build();

    APIGatewayV2HTTPResponse r = deliver(TenantIds.DEFAULT, n);

    assertThat(r.getStatusCode()).isEqualTo(204);
    assertThat(refundState(outRefundNo)).isEqualTo("SUCCESS|NOTIFY|SUCCESS|");
    // WeChat's retry of it: 204 again, nothing changes
    assertThat(deliver(TenantIds.DEFAULT, n).getStatusCode()).isEqualTo(204);
    assertThat(refundState(outRefundNo)).isEqualTo("SUCCESS|NOTIFY|SUCCESS|");
  }

  @Test
  void theSimulatorDeliversTheRefundOutcomeToTheRefundsNotifyUrl() {
    String orderId = "rfn-000002";
    stack.place(orderId, "u1", 600, null, new OrderItem("sku-tea", 1));
    stack.app().prepays().prepay(TenantIds.DEFAULT, orderId, OPEN_ID, null);
    wechat.pay(orderId);
    stack.update(
        "UPDATE orders SET prepaid_at = NULL, prepay_id = NULL WHERE order_id = ?", orderId);
    expireNow(stack, orderId);
    stack.app().closer().close(TenantIds.DEFAULT, List.of(orderId), CloseReason.TIMEOUT);
    var paid = wechat.trade(orderId).orElseThrow();
    stack
        .app()
        .payments()
        .apply(
            new PaidTrade(
                TenantIds.DEFAULT,
                orderId,
                paid.transactionId(),
                100,
                paid.successTime(),
                PaidTrade.Source.CLOSE));

    // the refund named the tenant's refund route as its notify_url (the configured notify URL is
    // https://mall.example.com/wechatpay/notify): the notification goes there
    assertThat(wechat.refundNotifyUrl(orderId + "-pac"))
        .contains("https://mall.example.com/wechatpay/refund-notify/default");
  }

  @Test
  void hostileAndMalformedRequestsAre4xxFailAndChangeNothing() throws Exception {
    String outRefundNo = refundedAfterClose("rfn-000003");
    wechat.settleRefund(outRefundNo, "SUCCESS");
    var foreign = KeyPairGenerator.getInstance("RSA");
    foreign.initialize(2048);
    List<String> before = stack.databaseState();
    List<String> refundsBefore = stack.dump("SELECT * FROM refunds ORDER BY 1, 2");
    SignedNotification genuine = wechat.refundNotification(outRefundNo).build();

    Map<String, APIGatewayV2HTTPResponse> answers = new java.util.LinkedHashMap<>();
    answers.put(
        "forged",
        deliver(
            TenantIds.DEFAULT,
            wechat
                .refundNotification(outRefundNo)
                .signedWith(foreign.generateKeyPair().getPrivate())
                .build()));
    answers.put(
        "stale",
        deliver(
            TenantIds.DEFAULT,
            wechat
                .refundNotification(outRefundNo)
                .timestamp(Instant.now().minus(Duration.ofMinutes(10)))
                .build()));
    answers.put(
        "tampered",
        deliver(
            TenantIds.DEFAULT, wechat.refundNotification(outRefundNo).tamperCiphertext().build()));
    answers.put(
        "otherKey",
        deliver(
            TenantIds.DEFAULT,
            wechat
                .refundNotification(outRefundNo)
                .encryptedWith("0123456789abcdef0123456789abcdef")
                .build()));
    answers.put("bodyChanged", deliver(TenantIds.DEFAULT, genuine.withBody(genuine.body() + " ")));
    answers.put("noHeaders", deliver(TenantIds.DEFAULT, genuine.withHeader("Wechatpay-Nonce", "")));
    answers.put("unknownTenant", deliver("nobody-here", genuine));
    answers.put("badTenantId", deliver("../x", genuine));
    // a genuine PAYMENT notification on the refund route: verifies, but is no refund
    answers.put(
        "paymentOnRefundRoute",
        deliver(TenantIds.DEFAULT, wechat.notification("rfn-000003").build()));

    Map<String, Integer> statuses = new java.util.LinkedHashMap<>();
    for (var e : answers.entrySet()) {
      statuses.put(e.getKey(), e.getValue().getStatusCode());
      failMessage(e.getValue());
    }
    assertThat(statuses)
        .containsExactly(
            Map.entry("forged", 401),
            Map.entry("stale", 401),
            Map.entry("tampered", 400),
            Map.entry("otherKey", 400),
            Map.entry("bodyChanged", 401),
            Map.entry("noHeaders", 400),
            Map.entry("unknownTenant", 401),
            Map.entry("badTenantId", 400),
            Map.entry("paymentOnRefundRoute", 400));
    assertThat(stack.databaseState()).isEqualTo(before);
    assertThat(stack.dump("SELECT * FROM refunds ORDER BY 1, 2")).isEqualTo(refundsBefore);
    assertThat(refundState(outRefundNo)).isEqualTo("PROCESSING|CREATE|PROCESSING|");
    // the genuine one still applies: none of the refusals spent its nonce
    assertThat(deliver(TenantIds.DEFAULT, genuine).getStatusCode()).isEqualTo(204);
    assertThat(refundState(outRefundNo)).isEqualTo("SUCCESS|NOTIFY|SUCCESS|");
  }

  @Test
  void anotherMethodOnTheRefundRouteIs405() throws Exception {
    APIGatewayV2HTTPEvent get = EventLoader.loadApiGatewayHttpEvent(EVENT);
    get.setRouteKey("GET /wechatpay/refund-notify/{tenantId}");

    APIGatewayV2HTTPResponse r = handler.handleRequest(get, new LambdaTestContext("r", 10_000));

    assertThat(r.getStatusCode()).isEqualTo(405);
    assertThat(failMessage(r)).contains("use POST");
  }

  @Test
  void theSampleEventIsRefusedAsItsSignatureIsNotOurs() throws Exception {
    APIGatewayV2HTTPResponse r =
        handler.handleRequest(
            EventLoader.loadApiGatewayHttpEvent(EVENT), new LambdaTestContext("r", 10_000));

    assertThat(r.getStatusCode()).isEqualTo(401);
    assertThat(failMessage(r)).contains("STALE_TIMESTAMP");
  }
}
