package io.ordertimeout.functions.notify;

import static io.ordertimeout.testing.Deadlines.expireNow;
import static org.assertj.core.api.Assertions.assertThat;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.amazonaws.services.lambda.runtime.tests.EventLoader;
import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.wechat.Endpoint;
import io.ordertimeout.embedded.wechat.SignedNotification;
import io.ordertimeout.testing.LambdaTestContext;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.testing.WeChatStackFixture;
import io.ordertimeout.util.Json;
import io.ordertimeout.wechat.PrepayCommand;
import java.nio.charset.StandardCharsets;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The webhook through the real SDK: notifications are built and signed by the WeChat Pay simulator
 * and carried in the sample event's envelope (the sample's own signature cannot verify against the
 * test's random keys).
 */
class PaymentNotifyHandlerTest extends WeChatStackFixture {
  static final String EVENT = "../../events/payment-notify-wechat-success.json";
  private PaymentNotifyHandler handler;

  @Override
  protected TestStack newStack() {
    return TestStack.withWeChat("notify", wechat);
  }

  @BeforeEach
  void setUp() {
    stack.seedSku("sku-tea", 10);
    stack.seedCoupon("cp-1", "u1");
    handler = new PaymentNotifyHandler(stack.app().paymentWebhook());
  }

  /** Places and prepays (through the prepay use case) an order of 100 fen, then the user pays. */
  private String paidOrder(String orderId, String couponId) {
    stack.place(orderId, "u1", 600, couponId, new OrderItem("sku-tea", 2));
    stack.app().prepays().prepay(TenantIds.DEFAULT, orderId, OPEN_ID, null);
    wechat.pay(orderId); // no webhook set: the simulator's own delivery is lost, tests send
    return orderId;
  }

  private APIGatewayV2HTTPResponse deliver(SignedNotification n) {
    return handler.handleRequest(event(n, false), new LambdaTestContext("payment-notify", 10_000));
  }

  /** The sample event with the notification's headers (lower-cased, as API Gateway sends them). */
  private static APIGatewayV2HTTPEvent event(SignedNotification n, boolean base64) {
    APIGatewayV2HTTPEvent event = EventLoader.loadApiGatewayHttpEvent(EVENT);
    Map<String, String> headers = new HashMap<>(event.getHeaders());
    n.headers().forEach((k, v) -> headers.put(k.toLowerCase(Locale.ROOT), v));
    event.setHeaders(headers);
    event.setBody(
        base64
            ? Base64.getEncoder().encodeToString(n.body().getBytes(StandardCharsets.UTF_8))
            : n.body());
    event.setIsBase64Encoded(base64);
    return event;
  }

  private static String failMessage(APIGatewayV2HTTPResponse r) throws Exception {
    var body = Json.MAPPER.readTree(r.getBody());
    assertThat(body.get("code").asText()).isEqualTo("FAIL");
    return body.get("message").asText();
  }

  private String status(String orderId) {
    return stack.dump("SELECT status FROM orders WHERE order_id = '" + orderId + "'").get(0);
  }

  @Test
  void aGenuineNotificationUnderAnotherRouteKeyIsRefusedAndChangesNothing() {
    paidOrder("route-000001", null);
    SignedNotification n = wechat.notification("route-000001").build();
    List<String> dbBefore = stack.databaseState();
    List<String> redisBefore = stack.redisState();

    APIGatewayV2HTTPEvent otherRoute = event(n, false);
    otherRoute.setRouteKey("POST /wechatpay/refund-notify");
    APIGatewayV2HTTPEvent otherMethod = event(n, false);
    otherMethod.setRouteKey("GET /wechatpay/notify");
    APIGatewayV2HTTPEvent catchAll = event(n, false);
    catchAll.setRouteKey("$default");

    assertThat(
            handler.handleRequest(otherRoute, new LambdaTestContext("n", 10_000)).getStatusCode())
        .isEqualTo(404);
    assertThat(
            handler.handleRequest(otherMethod, new LambdaTestContext("n", 10_000)).getStatusCode())
        .isEqualTo(405);
    assertThat(handler.handleRequest(catchAll, new LambdaTestContext("n", 10_000)).getStatusCode())
        .isEqualTo(404);
    assertThat(stack.databaseState()).isEqualTo(dbBefore);
    assertThat(stack.redisState()).isEqualTo(redisBefore);
    assertThat(status("route-000001")).isEqualTo("UNPAID|");
    // the same notification under the template's routeKey is the one that pays
    assertThat(deliver(n).getStatusCode()).isEqualTo(204);
    assertThat(status("route-000001")).isEqualTo("PAID|");
  }

  @Test
  void theSampleEventItselfIsRefusedAsItsSignatureIsNotOurs() throws Exception {
    APIGatewayV2HTTPResponse r =
        handler.handleRequest(
            EventLoader.loadApiGatewayHttpEvent(EVENT), new LambdaTestContext("n", 10_000));

    // signed long ago by a key we do not have: refused before anything else is looked at
    assertThat(r.getStatusCode()).isEqualTo(401);
    assertThat(failMessage(r)).contains("STALE_TIMESTAMP");
  }

  @Test
  void aGenuineBase64NotificationPaysTheOrderAfterTheCommit() {
    paidOrder("pay-000001", "cp-1");
    String transactionId = wechat.trade("pay-000001").orElseThrow().transactionId();

    APIGatewayV2HTTPResponse r =
        handler.handleRequest(
            event(wechat.notification("pay-000001").build(), true),
            new LambdaTestContext("n", 10_000));

    assertThat(r.getStatusCode()).isEqualTo(204);
    assertThat(stack.dump("SELECT status, transaction_id, paid_at IS NOT NULL FROM orders"))
        .containsExactly("PAID|" + transactionId + "|1|");
    assertThat(stack.dump("SELECT sku_id, kind, quantity FROM stock_movements WHERE kind = 'SELL'"))
        .containsExactly("sku-tea|SELL|2|");
    assertThat(stack.dump("SELECT available, reserved, sold FROM stock")).containsExactly("8|0|2|");
    assertThat(stack.dump("SELECT status FROM coupons")).containsExactly("USED|");
    assertThat(stack.app().timers().deadlineOf(TenantIds.DEFAULT, "pay-000001")).isEmpty();
  }

  @Test
  void aForgedSignatureIsRefusedWith401AndChangesNothing() throws Exception {
    paidOrder("forged-0001", "cp-1");
    List<String> before = stack.databaseState();
    PrivateKey attacker = KeyPairGenerator.getInstance("RSA").generateKeyPair().getPrivate();

    APIGatewayV2HTTPResponse r =
        deliver(wechat.notification("forged-0001").signedWith(attacker).build());

    assertThat(r.getStatusCode()).isEqualTo(401);
    assertThat(failMessage(r)).contains("BAD_SIGNATURE");
    assertThat(stack.databaseState()).isEqualTo(before);
  }

  @Test
  void anotherPublicKeyIdOrApiV3KeyIsRefused() throws Exception {
    paidOrder("wrongkey-01", "cp-1");
    List<String> before = stack.databaseState();

    APIGatewayV2HTTPResponse wrongSerial =
        deliver(wechat.notification("wrongkey-01").serial("PUB_KEY_ID_0199999999999999").build());
    APIGatewayV2HTTPResponse wrongApiV3Key =
        deliver(
            wechat
                .notification("wrongkey-01")
                .encryptedWith("0123456789abcdef0123456789abcdef")
                .build());

    assertThat(wrongSerial.getStatusCode()).isEqualTo(401);
    assertThat(wrongApiV3Key.getStatusCode()).isEqualTo(400);
    assertThat(failMessage(wrongApiV3Key)).contains("DECRYPTION_FAILED");
    assertThat(stack.databaseState()).isEqualTo(before);
  }

  @Test
  void aStaleTimestampIsRefused() throws Exception {
    paidOrder("stale-00001", "cp-1");
    List<String> before = stack.databaseState();

    APIGatewayV2HTTPResponse r =
        deliver(
            wechat
                .notification("stale-00001")
                .timestamp(Instant.now().minus(Duration.ofMinutes(6)))
                .build());

    assertThat(r.getStatusCode()).isEqualTo(401);
    assertThat(failMessage(r)).contains("STALE_TIMESTAMP");
    assertThat(stack.databaseState()).isEqualTo(before);
  }

  @Test
  void aTamperedCiphertextIsRefused() throws Exception {
    paidOrder("tamper-0001", "cp-1");
    List<String> before = stack.databaseState();

    APIGatewayV2HTTPResponse r =
        deliver(wechat.notification("tamper-0001").tamperCiphertext().build());

    assertThat(r.getStatusCode()).isEqualTo(400);
    assertThat(failMessage(r)).contains("DECRYPTION_FAILED");
    assertThat(stack.databaseState()).isEqualTo(before);
  }

  @Test
  void aReusedNonceIsRefusedButARedeliveryOfAnAppliedPaymentSucceeds() throws Exception {
    paidOrder("replay-0001", "cp-1");
    paidOrder("replay-0002", null);
    SignedNotification first = wechat.notification("replay-0001").build();
    assertThat(deliver(first).getStatusCode()).isEqualTo(204);

    APIGatewayV2HTTPResponse sameRequestAgain = deliver(first);
    APIGatewayV2HTTPResponse nonceReused =
        deliver(wechat.notification("replay-0002").nonce(first.header("Wechatpay-Nonce")).build());

    assertThat(sameRequestAgain.getStatusCode()).isEqualTo(204);
    assertThat(nonceReused.getStatusCode()).isEqualTo(409);
    assertThat(failMessage(nonceReused)).contains("replays nonce");
    assertThat(status("replay-0002")).isEqualTo("UNPAID|");
    assertThat(stack.count("SELECT COUNT(*) FROM stock_movements WHERE kind = 'SELL'"))
        .isEqualTo(1);
    // a fresh nonce (WeChat's own retry) for the refused order goes through
    assertThat(deliver(wechat.notification("replay-0002").build()).getStatusCode()).isEqualTo(204);
  }

  private void bindTrade(String orderId) {
    stack.update(
        "INSERT INTO wechat_trades (tenant_id, order_id, mchid, out_trade_no) VALUES (?,?,?,?)",
        "default",
        orderId,
        stack.app().gateway().merchantId("default"),
        orderId);
  }

  @Test
  void anAmountOtherThanTheOrdersIsRefused() throws Exception {
    stack.place("amount-0001", "u1", 600, "cp-1", new OrderItem("sku-tea", 1));
    // prepaid around our use case with another amount, as a tampered prepay would be
    // (its trade bound to the order first, as every prepay binds it before calling WeChat)
    bindTrade("amount-0001");
    stack
        .app()
        .gateway()
        .prepay(
            "default",
            new PrepayCommand(
                "amount-0001", "x", 1, OPEN_ID, Instant.now().plus(Duration.ofMinutes(5))));
    wechat.pay("amount-0001");
    List<String> before = stack.databaseState();

    APIGatewayV2HTTPResponse r = deliver(wechat.notification("amount-0001").build());

    assertThat(r.getStatusCode()).isEqualTo(400);
    assertThat(failMessage(r)).contains("AMOUNT_MISMATCH");
    assertThat(stack.databaseState()).isEqualTo(before);
  }

  @Test
  void aPaymentForAnUnknownOrderIsRefusedWith404() throws Exception {
    stack
        .app()
        .gateway()
        .prepay(
            "default",
            new PrepayCommand(
                "nosuch-0001", "x", 100, OPEN_ID, Instant.now().plus(Duration.ofMinutes(5))));
    wechat.pay("nosuch-0001");
    List<String> before = stack.databaseState();

    APIGatewayV2HTTPResponse r = deliver(wechat.notification("nosuch-0001").build());

    assertThat(r.getStatusCode()).isEqualTo(404);
    assertThat(failMessage(r)).contains("UNKNOWN_ORDER");
    assertThat(stack.databaseState()).isEqualTo(before);
  }

  @Test
  void fifteenConcurrentDuplicatesSellExactlyOnce() throws Exception {
    stack.seedSku("sku-cup", 10);
    stack.place(
        "dup-000001", "u1", 600, "cp-1", new OrderItem("sku-tea", 2), new OrderItem("sku-cup", 1));
    stack.app().prepays().prepay(TenantIds.DEFAULT, "dup-000001", OPEN_ID, null);
    wechat.pay("dup-000001");
    List<SignedNotification> copies = new ArrayList<>();
    for (int i = 0; i < 15; i++) {
      copies.add(wechat.notification("dup-000001").id("EV-dup-000001").build()); // WeChat re-signs
    }
    ExecutorService pool = Executors.newFixedThreadPool(8);
    List<Future<APIGatewayV2HTTPResponse>> answers = new ArrayList<>();
    try {
      copies.forEach(n -> answers.add(pool.submit(() -> deliver(n))));
      for (Future<APIGatewayV2HTTPResponse> answer : answers) {
        assertThat(answer.get().getStatusCode()).isEqualTo(204);
      }
    } finally {
      pool.shutdownNow();
    }

    assertThat(
            stack.dump(
                "SELECT sku_id, COUNT(*) FROM stock_movements WHERE kind = 'SELL' GROUP BY sku_id ORDER BY sku_id"))
        .containsExactly("sku-cup|1|", "sku-tea|1|");
    assertThat(stack.app().metrics().counter("orders_paid")).isEqualTo(1);
  }

  @Test
  void aNotificationBeforeTheCloseWinsAndTheCloseMakesNoWeChatCall() {
    paidOrder("before-0001", "cp-1");
    assertThat(deliver(wechat.notification("before-0001").build()).getStatusCode()).isEqualTo(204);
    expireNow(stack, "before-0001");
    int calls = wechat.callCount(Endpoint.QUERY) + wechat.callCount(Endpoint.CLOSE);

    var result =
        stack.app().closer().close(TenantIds.DEFAULT, List.of("before-0001"), CloseReason.TIMEOUT);

    assertThat(result.alreadyFinal()).containsExactly("before-0001");
    assertThat(wechat.callCount(Endpoint.QUERY) + wechat.callCount(Endpoint.CLOSE))
        .isEqualTo(calls);
    assertThat(status("before-0001")).isEqualTo("PAID|");
  }

  @Test
  void aPaymentAfterTheCloseIsRecordedOnceRefundedAndNeverReopensStock() {
    stack.place("after-00001", "u1", 600, "cp-1", new OrderItem("sku-tea", 2));
    stack.app().closer().close(TenantIds.DEFAULT, List.of("after-00001"), CloseReason.USER_CANCEL);
    // a prepay that raced the cancel reached WeChat anyway, and the user paid it
    // (its trade bound to the order first, as every prepay binds it before calling WeChat)
    bindTrade("after-00001");
    stack
        .app()
        .gateway()
        .prepay(
            "default",
            new PrepayCommand(
                "after-00001", "x", 100, OPEN_ID, Instant.now().plus(Duration.ofMinutes(5))));
    wechat.pay("after-00001");

    APIGatewayV2HTTPResponse first = deliver(wechat.notification("after-00001").build());
    APIGatewayV2HTTPResponse retry = deliver(wechat.notification("after-00001").build());

    assertThat(first.getStatusCode()).isEqualTo(204);
    assertThat(retry.getStatusCode()).isEqualTo(204);
    assertThat(status("after-00001")).isEqualTo("CLOSED|");
    assertThat(stack.dump("SELECT available, reserved, sold FROM stock"))
        .containsExactly("10|0|0|");
    assertThat(
            stack.dump(
                "SELECT order_id, amount_fen, detected_by, out_refund_no, refund_status,"
                    + " refund_attempts FROM paid_after_close"))
        .containsExactly("after-00001|100|NOTIFY|after-00001-pac|PROCESSING|1|");
    assertThat(wechat.trade("after-00001").orElseThrow().refundedFen()).isEqualTo(100);
    assertThat(stack.app().metrics().counter("paid_after_close")).isEqualTo(1);
  }
}
