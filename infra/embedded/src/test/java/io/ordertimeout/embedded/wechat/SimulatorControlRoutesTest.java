package io.ordertimeout.embedded.wechat;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The simulator's control routes (/_sim/...) on the wire, against a started simulator and a test
 * webhook that records what arrives: the state of the trade before and after each control, what the
 * webhook received, and what WeChat's own query answers.
 */
class SimulatorControlRoutesTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient http = HttpClient.newHttpClient();
  private final List<Received> received = new CopyOnWriteArrayList<>();
  private WeChatPaySimulator wechat;
  private HttpServer webhook;

  /** One notification as the webhook got it, its signature checked and its resource decrypted. */
  record Received(boolean signatureValid, String notificationId, JsonNode transaction) {
    String outTradeNo() {
      return transaction.path("out_trade_no").asText();
    }
  }

  @BeforeEach
  void start() throws Exception {
    wechat = WeChatPaySimulator.start();
    webhook = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    webhook.createContext(
        "/notify",
        exchange -> {
          try (exchange) {
            String body =
                new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            received.add(read(exchange.getRequestHeaders()::getFirst, body));
            exchange.sendResponseHeaders(204, -1);
          }
        });
    webhook.start();
    wechat.setWebhookUrl(
        URI.create("http://127.0.0.1:" + webhook.getAddress().getPort() + "/notify"));
  }

  @AfterEach
  void stop() {
    webhook.stop(0);
    wechat.close();
  }

  // ---- pay, pay late ----

  @Test
  void payMakesTheTradeSuccessAndDeliversOneSignedNotification() throws Exception {
    prepay("ctl-pay-1");
    JsonNode before = get("/_sim/trades/ctl-pay-1");

    HttpResponse<String> paid = control("POST", "/_sim/trades/ctl-pay-1/pay", "");
    await(() -> received.size() == 1, "one notification at the webhook");
    await(() -> wechat.deliveries().size() == 1, "the simulator's record of its delivery");
    JsonNode after = get("/_sim/trades/ctl-pay-1");

    assertThat(before.path("state").asText()).isEqualTo("NOTPAY");
    assertThat(before.path("amountFen").asLong()).isEqualTo(1_000);
    assertThat(before.path("notifications").path("sent").asInt()).isZero();
    assertThat(paid.statusCode()).isEqualTo(200);
    assertThat(json(paid).path("state").asText()).isEqualTo("SUCCESS");
    assertThat(after.path("state").asText()).isEqualTo("SUCCESS");
    assertThat(after.path("transactionId").asText()).matches("42\\d{26}");
    assertThat(after.path("notifications").path("sent").asInt()).isEqualTo(1);
    assertThat(after.path("notifications").path("deliveries").get(0).path("status").asInt())
        .isEqualTo(204);
    Received notification = received.get(0);
    assertThat(notification.signatureValid()).isTrue();
    assertThat(notification.outTradeNo()).isEqualTo("ctl-pay-1");
    assertThat(notification.transaction().path("trade_state").asText()).isEqualTo("SUCCESS");
    assertThat(wechat.callCount(Endpoint.QUERY)).isZero(); // controls are not WeChat API calls
  }

  @Test
  void payWithADelayLeavesTheTradeUnpaidUntilDueThenPaysAndNotifies() throws Exception {
    prepay("ctl-late-1");

    HttpResponse<String> asked =
        control("POST", "/_sim/trades/ctl-late-1/pay", "{\"delay\":\"300ms\"}");
    JsonNode pending = json(asked);
    await(() -> received.size() == 1, "the late payment's notification");
    JsonNode after = get("/_sim/trades/ctl-late-1");

    assertThat(asked.statusCode()).isEqualTo(202);
    assertThat(pending.path("state").asText()).isEqualTo("NOTPAY");
    assertThat(pending.path("latePayments").get(0).path("outcome").asText()).isEqualTo("PENDING");
    assertThat(after.path("state").asText()).isEqualTo("SUCCESS");
    assertThat(after.path("latePayments").get(0).path("outcome").asText()).isEqualTo("PAID");
    assertThat(received.get(0).outTradeNo()).isEqualTo("ctl-late-1");
  }

  @Test
  void aLatePaymentOfATradeClosedMeanwhileIsRefusedAndNotifiesNothing() throws Exception {
    prepay("ctl-late-2");
    control("POST", "/_sim/trades/ctl-late-2/pay", "{\"delay\":\"300ms\"}");

    int closed = wechatCall("POST", "/v3/pay/transactions/out-trade-no/ctl-late-2/close", true);
    await(
        () -> wechat.latePayments("ctl-late-2").get(0).outcome() != LatePayment.Outcome.PENDING,
        "the late payment to fall due");
    JsonNode after = get("/_sim/trades/ctl-late-2");

    assertThat(closed).isEqualTo(204);
    assertThat(after.path("state").asText()).isEqualTo("CLOSED");
    JsonNode late = after.path("latePayments").get(0);
    assertThat(late.path("outcome").asText()).isEqualTo("REFUSED");
    assertThat(late.path("detail").asText()).isEqualTo("cannot pay ctl-late-2 in state CLOSED");
    assertThat(after.path("notifications").path("sent").asInt()).isZero();
  }

  // ---- forget ----

  @Test
  void forgetDropsTheTradeItsControlsAndDeliveriesAndLeavesTheOthers() throws Exception {
    prepay("ctl-forget-1");
    prepay("ctl-forget-2");
    control("POST", "/_sim/trades/ctl-forget-1/pay", "");
    control("POST", "/_sim/trades/ctl-forget-2/pay", "");
    await(() -> wechat.deliveries().size() == 2, "both trades' notifications delivered");

    int forgotten = wechat.forget(List.of("ctl-forget-1", "never-prepaid"));
    HttpResponse<String> query =
        wechatGet("/v3/pay/transactions/out-trade-no/ctl-forget-1?mchid=" + wechat.mchid());

    assertThat(forgotten).isEqualTo(1);
    assertThat(query.statusCode()).isEqualTo(404);
    assertThat(json(query).path("code").asText()).isEqualTo("ORDER_NOT_EXIST");
    assertThat(wechat.trade("ctl-forget-1")).isEmpty();
    assertThat(wechat.deliveries())
        .extracting(Delivery::outTradeNo)
        .containsExactly("ctl-forget-2");
    assertThat(wechat.trade("ctl-forget-2").orElseThrow().state()).isEqualTo(TradeState.SUCCESS);
    assertThat(get("/_sim/trades/ctl-forget-2").path("notifications").path("sent").asInt())
        .isEqualTo(1);
    assertThat(wechat.forget(List.of("ctl-forget-1"))).isZero();
  }

  // ---- lose, repeat, delay ----

  @Test
  void aLostNotificationIsNotDeliveredButWeChatsQueryShowsSuccess() throws Exception {
    prepay("ctl-lost-1");
    prepay("ctl-lost-2");

    HttpResponse<String> lose =
        control("POST", "/_sim/trades/ctl-lost-1/notifications", "{\"lose\":1}");
    control("POST", "/_sim/trades/ctl-lost-1/pay", "");
    control("POST", "/_sim/trades/ctl-lost-2/pay", "");
    // one sender thread, no delays: ctl-lost-1's would have left before ctl-lost-2's arrived
    await(() -> received.size() == 1, "the second trade's notification");
    JsonNode after = get("/_sim/trades/ctl-lost-1");
    HttpResponse<String> query =
        wechatGet("/v3/pay/transactions/out-trade-no/ctl-lost-1?mchid=" + wechat.mchid());

    assertThat(json(lose).path("notifications").path("toLose").asInt()).isEqualTo(1);
    assertThat(received).extracting(Received::outTradeNo).containsExactly("ctl-lost-2");
    assertThat(after.path("notifications").path("lost").asInt()).isEqualTo(1);
    assertThat(after.path("notifications").path("sent").asInt()).isZero();
    assertThat(after.path("notifications").path("toLose").asInt()).isZero();
    assertThat(after.path("notifications").path("deliveries")).isEmpty();
    assertThat(query.statusCode()).isEqualTo(200);
    assertThat(json(query).path("trade_state").asText()).isEqualTo("SUCCESS");
  }

  @Test
  void losingTheNextNotificationOfAnyTradeLosesExactlyOne() throws Exception {
    prepay("ctl-any-1");
    prepay("ctl-any-2");

    JsonNode settings = json(control("POST", "/_sim/notifications", "{\"lose\":1}"));
    control("POST", "/_sim/trades/ctl-any-1/pay", "");
    control("POST", "/_sim/trades/ctl-any-2/pay", "");
    await(() -> received.size() == 1, "the second trade's notification");

    assertThat(settings.path("toLose").asInt()).isEqualTo(1);
    assertThat(received).extracting(Received::outTradeNo).containsExactly("ctl-any-2");
    assertThat(get("/_sim/notifications").path("toLose").asInt()).isZero();
    assertThat(get("/_sim/trades/ctl-any-1").path("notifications").path("lost").asInt())
        .isEqualTo(1);
  }

  @Test
  void copiesArriveThatManyTimesAndAResendOfAPaidTradeArrivesAgain() throws Exception {
    prepay("ctl-copies-1");

    JsonNode set =
        json(control("POST", "/_sim/trades/ctl-copies-1/notifications", "{\"copies\":3}"));
    control("POST", "/_sim/trades/ctl-copies-1/pay", "");
    await(() -> received.size() == 3, "three copies");
    HttpResponse<String> resend =
        control("POST", "/_sim/trades/ctl-copies-1/notifications/resend", "{\"copies\":2}");
    await(() -> received.size() == 5, "two more after the resend");

    assertThat(set.path("notifications").path("copies").asInt()).isEqualTo(3);
    assertThat(resend.statusCode()).isEqualTo(202);
    assertThat(received).extracting(Received::outTradeNo).containsOnly("ctl-copies-1");
    assertThat(received).allMatch(Received::signatureValid);
    assertThat(received).extracting(Received::notificationId).doesNotHaveDuplicates();
    assertThat(get("/_sim/trades/ctl-copies-1").path("notifications").path("sent").asInt())
        .isEqualTo(5);
  }

  @Test
  void aDelayedNotificationIsHeldBackByItsDelay() throws Exception {
    prepay("ctl-delay-1");

    JsonNode set =
        json(control("POST", "/_sim/trades/ctl-delay-1/notifications", "{\"delay\":\"400ms\"}"));
    Instant paidAt = Instant.now();
    control("POST", "/_sim/trades/ctl-delay-1/pay", "");
    await(() -> received.size() == 1, "the delayed notification");
    Instant arrived = Instant.now();

    assertThat(set.path("notifications").path("delay").asText()).isEqualTo("400ms");
    assertThat(Duration.between(paidAt, arrived)).isGreaterThanOrEqualTo(Duration.ofMillis(400));
  }

  // ---- the payer at the password sheet ----

  @Test
  void aPayerWhoAbandonsTheSheetIsUserPayingThenNotPayAndTheTradeCanBeClosed() throws Exception {
    prepay("ctl-walk-1");
    String close = "/v3/pay/transactions/out-trade-no/ctl-walk-1/close";

    HttpResponse<String> paying =
        control("POST", "/_sim/trades/ctl-walk-1/user-paying", "{\"abandon\":\"300ms\"}");
    int whilePaying = wechatCall("POST", close, true);
    await(
        () -> "NOTPAY".equals(wechat.trade("ctl-walk-1").orElseThrow().state().name()),
        "walked away");
    int afterwards = wechatCall("POST", close, true);

    assertThat(paying.statusCode()).isEqualTo(200);
    assertThat(json(paying).path("state").asText()).isEqualTo("USERPAYING");
    assertThat(whilePaying).isEqualTo(202);
    assertThat(afterwards).isEqualTo(204);
    assertThat(get("/_sim/trades/ctl-walk-1").path("state").asText()).isEqualTo("CLOSED");
  }

  @Test
  void abandonEndsUserPayingNowAndIsRefusedForATradeNobodyIsPaying() throws Exception {
    prepay("ctl-walk-2");
    control("POST", "/_sim/trades/ctl-walk-2/user-paying", "{}");

    HttpResponse<String> abandoned = control("POST", "/_sim/trades/ctl-walk-2/abandon", "");
    HttpResponse<String> again = control("POST", "/_sim/trades/ctl-walk-2/abandon", "");

    assertThat(abandoned.statusCode()).isEqualTo(200);
    assertThat(json(abandoned).path("state").asText()).isEqualTo("NOTPAY");
    assertThat(again.statusCode()).isEqualTo(409);
    assertThat(json(again).path("error").path("code").asText()).isEqualTo("TRADE_STATE");
  }

  @Test
  void aPayerAtTheSheetBeforeTimeExpireCompletesAfterItAnIdleOneCannot() throws Exception {
    Instant expire = Instant.now().plusSeconds(2);
    prepay("ctl-exp-pay", expire);
    prepay("ctl-exp-idle", expire);
    control("POST", "/_sim/trades/ctl-exp-pay/user-paying", "{}");
    await(() -> Instant.now().isAfter(expire.plusSeconds(1)), "time_expire passed");

    HttpResponse<String> completes = control("POST", "/_sim/trades/ctl-exp-pay/pay", "");
    HttpResponse<String> refused = control("POST", "/_sim/trades/ctl-exp-idle/pay", "");

    assertThat(completes.statusCode()).isEqualTo(200);
    assertThat(json(completes).path("state").asText()).isEqualTo("SUCCESS");
    assertThat(refused.statusCode()).isEqualTo(409);
    assertThat(json(refused).path("error").path("message").asText()).contains("time_expire");
  }

  /** Every close-order answer of the APIv3 documentation, whatever the trade's state. */
  static Stream<Arguments> closeAnswers() {
    return Stream.of(
        Arguments.of("ORDER_CLOSED", 400, "ORDER_CLOSED"),
        Arguments.of("SYSTEM_ERROR", 500, "SYSTEM_ERROR"),
        Arguments.of("FREQUENCY_LIMITED", 429, "FREQUENCY_LIMITED"),
        Arguments.of("RULE_LIMIT", 403, "RULE_LIMIT"),
        Arguments.of("USERPAYING", 202, "USERPAYING"),
        Arguments.of("USER_PAYING", 400, "USER_PAYING"),
        Arguments.of("NO_CONTENT", 204, ""));
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @MethodSource("closeAnswers")
  void eachCloseOrderAnswerCanBeInjectedAndLeavesTheTradeAsItWas(
      String fault, int status, String code) throws Exception {
    prepay("ctl-code-1");
    control("POST", "/_sim/faults", "{\"endpoint\":\"CLOSE\",\"fault\":\"" + fault + "\"}");
    String body = "{\"mchid\":\"" + wechat.mchid() + "\"}";

    HttpResponse<String> answer =
        http.send(
            signed("POST", "/v3/pay/transactions/out-trade-no/ctl-code-1/close", body)
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());

    assertThat(answer.statusCode()).isEqualTo(status);
    if (code.isEmpty()) {
      assertThat(answer.body()).isEmpty();
    } else {
      assertThat(json(answer).path("code").asText()).isEqualTo(code);
    }
    assertThat(get("/_sim/trades/ctl-code-1").path("state").asText()).isEqualTo("NOTPAY");
  }

  // ---- faults ----

  @Test
  void anInjectedFaultAnswersItsCountThenClearsAndDeleteDropsTheRest() throws Exception {
    prepay("ctl-fault-1");
    String close = "/v3/pay/transactions/out-trade-no/ctl-fault-1/close";

    HttpResponse<String> inject =
        control(
            "POST",
            "/_sim/faults",
            "{\"endpoint\":\"close\",\"fault\":\"SYSTEM_ERROR\",\"count\":2}");
    int first = wechatCall("POST", close, true);
    int second = wechatCall("POST", close, true);
    int third = wechatCall("POST", close, true);
    control("POST", "/_sim/faults", "{\"endpoint\":\"QUERY\",\"fault\":\"FREQUENCY_LIMITED\"}");
    JsonNode cleared = json(control("DELETE", "/_sim/faults", ""));
    HttpResponse<String> query =
        wechatGet("/v3/pay/transactions/out-trade-no/ctl-fault-1?mchid=" + wechat.mchid());

    assertThat(inject.statusCode()).isEqualTo(200);
    assertThat(json(inject).path("pending").path("CLOSE").toString())
        .isEqualTo("[\"SYSTEM_ERROR\",\"SYSTEM_ERROR\"]");
    assertThat(List.of(first, second, third)).containsExactly(500, 500, 204);
    assertThat(cleared.path("cleared").asInt()).isEqualTo(1);
    assertThat(cleared.path("pending")).isEmpty();
    assertThat(query.statusCode()).isEqualTo(200);
    assertThat(json(query).path("trade_state").asText()).isEqualTo("CLOSED");
  }

  // ---- refused controls ----

  static Stream<Arguments> badInput() {
    return Stream.of(
        Arguments.of("POST", "/_sim/trades/ctl-bad-1/pay", "{\"delay\":\"soon\"}", "INVALID_FIELD"),
        Arguments.of("POST", "/_sim/trades/ctl-bad-1/pay", "{\"delay\":\"0s\"}", "INVALID_FIELD"),
        Arguments.of("POST", "/_sim/trades/ctl-bad-1/pay", "{\"delay\":30}", "INVALID_FIELD"),
        Arguments.of("POST", "/_sim/trades/ctl-bad-1/pay", "{\"dealy\":\"1s\"}", "UNKNOWN_FIELD"),
        Arguments.of("POST", "/_sim/trades/ctl-bad-1/pay", "pay it", "INVALID_JSON"),
        Arguments.of(
            "POST", "/_sim/trades/ctl-bad-1/user-paying", "{\"abandon\":\"0s\"}", "INVALID_FIELD"),
        Arguments.of(
            "POST", "/_sim/trades/ctl-bad-1/user-paying", "{\"abandn\":\"1s\"}", "UNKNOWN_FIELD"),
        Arguments.of("POST", "/_sim/trades/ctl-bad-1/pay", "[1]", "INVALID_JSON"),
        Arguments.of(
            "POST", "/_sim/trades/ctl-bad-1/notifications", "{\"copies\":0}", "INVALID_FIELD"),
        Arguments.of(
            "POST",
            "/_sim/trades/ctl-bad-1/notifications",
            "{\"copies\":3,\"delay\":\"1 minute\"}",
            "INVALID_FIELD"),
        Arguments.of("POST", "/_sim/trades/ctl-bad-1/notifications", "{}", "MISSING_FIELD"),
        Arguments.of("POST", "/_sim/notifications", "{\"lose\":-1}", "INVALID_FIELD"),
        Arguments.of(
            "POST", "/_sim/notifications", "{\"lose\":2,\"copies\":\"3\"}", "INVALID_FIELD"),
        Arguments.of("POST", "/_sim/notifications", "{\"delay\":\"25h\"}", "INVALID_FIELD"),
        Arguments.of(
            "POST",
            "/_sim/faults",
            "{\"endpoint\":\"CANCEL\",\"fault\":\"HANG\"}",
            "INVALID_FIELD"),
        Arguments.of(
            "POST",
            "/_sim/faults",
            "{\"endpoint\":\"CLOSE\",\"fault\":\"SYSTEM_ERROR\",\"count\":0}",
            "INVALID_FIELD"),
        Arguments.of("POST", "/_sim/faults", "{\"fault\":\"SYSTEM_ERROR\"}", "MISSING_FIELD"),
        Arguments.of("GET", "/_sim/trades/has%20space", "", "INVALID_FIELD"));
  }

  @ParameterizedTest(name = "{0} {1} {2} -> 400 {3}")
  @MethodSource("badInput")
  void badInputIs400WithAClearMessageAndChangesNothing(
      String method, String path, String body, String code) throws Exception {
    prepay("ctl-bad-1");
    String before = state("ctl-bad-1");

    HttpResponse<String> response = control(method, path, body);

    assertThat(response.statusCode()).isEqualTo(400);
    JsonNode error = json(response).path("error");
    assertThat(error.path("code").asText()).isEqualTo(code);
    assertThat(error.path("message").asText()).isNotBlank();
    assertThat(state("ctl-bad-1")).isEqualTo(before);
  }

  @Test
  void anUnknownTradeOrRouteIs404AndAWrongMethod405() throws Exception {
    HttpResponse<String> show = control("GET", "/_sim/trades/ctl-none-1", "");
    HttpResponse<String> pay = control("POST", "/_sim/trades/ctl-none-1/pay", "");
    HttpResponse<String> route = control("POST", "/_sim/trades/ctl-none-1/refund", "");
    HttpResponse<String> method = control("PUT", "/_sim/faults", "");

    assertThat(show.statusCode()).isEqualTo(404);
    assertThat(json(show).path("error").path("code").asText()).isEqualTo("TRADE_NOT_FOUND");
    assertThat(json(show).path("error").path("message").asText())
        .startsWith("no trade ctl-none-1 in the simulator");
    assertThat(pay.statusCode()).isEqualTo(404);
    assertThat(wechat.trade("ctl-none-1")).isEmpty();
    assertThat(route.statusCode()).isEqualTo(404);
    assertThat(json(route).path("error").path("code").asText()).isEqualTo("NO_SUCH_CONTROL");
    assertThat(method.statusCode()).isEqualTo(405);
  }

  @Test
  void aControlTheTradesStateForbidsIs409AndChangesNothing() throws Exception {
    prepay("ctl-state-1");
    control("POST", "/_sim/trades/ctl-state-1/pay", "");
    await(() -> received.size() == 1, "the payment's notification");
    // The receiver answers before the simulator records the delivery: the snapshot waits for both.
    await(() -> wechat.deliveries().size() == 1, "the simulator's record of its delivery");
    String before = state("ctl-state-1");

    HttpResponse<String> payAgain = control("POST", "/_sim/trades/ctl-state-1/pay", "");
    HttpResponse<String> lose =
        control("POST", "/_sim/trades/ctl-state-1/notifications", "{\"lose\":1}");

    assertThat(payAgain.statusCode()).isEqualTo(409);
    assertThat(json(payAgain).path("error").path("message").asText())
        .isEqualTo("cannot pay ctl-state-1 in state SUCCESS");
    assertThat(lose.statusCode()).isEqualTo(409);
    assertThat(state("ctl-state-1")).isEqualTo(before);
  }

  // ---- helpers ----

  /** Everything a control could change: the trade, the global settings, the pending faults. */
  private String state(String outTradeNo) throws Exception {
    return get("/_sim/trades/" + outTradeNo)
        + "|"
        + get("/_sim/notifications")
        + "|"
        + get("/_sim/faults")
        + "|"
        + received.size();
  }

  // ---- refunds ----

  /** A refund as the SDK sends it, naming the test webhook as its notify_url. */
  private HttpResponse<String> refund(String outTradeNo, String outRefundNo) throws Exception {
    ObjectNode request =
        JSON.createObjectNode()
            .put("out_trade_no", outTradeNo)
            .put("out_refund_no", outRefundNo)
            .put("reason", "control test")
            .put("notify_url", "http://127.0.0.1:" + webhook.getAddress().getPort() + "/notify");
    request.putObject("amount").put("refund", 1_000).put("total", 1_000).put("currency", "CNY");
    String body = request.toString();
    return http.send(
        signed("POST", "/v3/refund/domestic/refunds", body)
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private String refundStatus(String outRefundNo) throws Exception {
    HttpResponse<String> r = wechatGet("/v3/refund/domestic/refunds/" + outRefundNo);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return json(r).path("status").asText();
  }

  @Test
  void aRefundIsProcessingThenSettlesAndNotifiesItsNotifyUrl() throws Exception {
    prepay("ctl-rf-1");
    control("POST", "/_sim/trades/ctl-rf-1/pay", "");
    await(() -> received.size() == 1, "the payment's notification");
    assertThat(control("POST", "/_sim/refunds", "{\"delay\":\"1s\"}").statusCode()).isEqualTo(200);

    HttpResponse<String> created = refund("ctl-rf-1", "ctl-rf-1-r");

    assertThat(created.statusCode()).as(created.body()).isEqualTo(200);
    assertThat(json(created).path("status").asText()).isEqualTo("PROCESSING");
    assertThat(refundStatus("ctl-rf-1-r")).isEqualTo("PROCESSING");
    await(() -> received.size() == 2, "the refund's notification");
    Received n = received.get(1);
    assertThat(n.signatureValid()).isTrue();
    JsonNode plain = n.transaction();
    assertThat(plain.path("mchid").asText()).isEqualTo(wechat.mchid());
    assertThat(plain.path("out_trade_no").asText()).isEqualTo("ctl-rf-1");
    assertThat(plain.path("out_refund_no").asText()).isEqualTo("ctl-rf-1-r");
    assertThat(plain.path("refund_id").asText())
        .isEqualTo(json(created).path("refund_id").asText());
    assertThat(plain.path("transaction_id").asText()).matches("42\\d{26}");
    assertThat(plain.path("refund_status").asText()).isEqualTo("SUCCESS");
    assertThat(plain.path("success_time").asText()).isNotEmpty();
    assertThat(plain.path("user_received_account").asText()).isEqualTo("支付用户零钱");
    assertThat(plain.path("amount").path("total").asLong()).isEqualTo(1_000);
    assertThat(plain.path("amount").path("refund").asLong()).isEqualTo(1_000);
    assertThat(plain.path("amount").path("payer_total").asLong()).isEqualTo(1_000);
    assertThat(plain.path("amount").path("payer_refund").asLong()).isEqualTo(1_000);
    assertThat(refundStatus("ctl-rf-1-r")).isEqualTo("SUCCESS");
    assertThat(wechat.refundDeliveries()).extracting(Delivery::status).containsExactly(204);
    assertThat(wechat.deliveries()).hasSize(1); // the payment's only
  }

  @Test
  void controlsMakeARefundAbnormalReapplyItCloseItOrLoseItsNotification() throws Exception {
    prepay("ctl-rf-2");
    control("POST", "/_sim/trades/ctl-rf-2/pay", "");
    await(() -> received.size() == 1, "the payment's notification");

    // planned before the refund exists: it settles ABNORMAL
    HttpResponse<String> planned = control("POST", "/_sim/refunds/ctl-rf-2-r/abnormal", "");
    assertThat(planned.statusCode()).isEqualTo(200);
    assertThat(json(planned).path("planned").asText()).isEqualTo("ABNORMAL");
    assertThat(control("GET", "/_sim/refunds/ctl-rf-2-r", "").statusCode()).isEqualTo(404);
    refund("ctl-rf-2", "ctl-rf-2-r");
    await(() -> received.size() == 2, "REFUND.ABNORMAL");
    assertThat(received.get(1).transaction().path("refund_status").asText()).isEqualTo("ABNORMAL");
    assertThat(refundStatus("ctl-rf-2-r")).isEqualTo("ABNORMAL");

    // a settled refund cannot be closed; the exception refund goes on to SUCCESS, unnotified
    assertThat(control("POST", "/_sim/refunds/ctl-rf-2-r/close", "").statusCode()).isEqualTo(409);
    assertThat(control("POST", "/_sim/refunds/ctl-rf-2-r/lose-notification", "").statusCode())
        .isEqualTo(200);
    HttpResponse<String> reapplied = control("POST", "/_sim/refunds/ctl-rf-2-r/reapply", "");
    assertThat(reapplied.statusCode()).isEqualTo(200);
    assertThat(json(reapplied).path("status").asText()).isEqualTo("PROCESSING");
    await(
        () -> {
          try {
            return refundStatus("ctl-rf-2-r").equals("SUCCESS");
          } catch (Exception e) {
            return false;
          }
        },
        "the exception refund paid");
    assertThat(received).hasSize(2);
    assertThat(control("POST", "/_sim/refunds/ctl-rf-2-r/reapply", "").statusCode()).isEqualTo(409);

    // refused input changes nothing
    assertThat(control("POST", "/_sim/refunds/bad%20no/abnormal", "").statusCode()).isEqualTo(400);
    assertThat(control("POST", "/_sim/refunds/ctl-rf-2-r/abnormal", "{\"x\":1}").statusCode())
        .isEqualTo(400);
    assertThat(control("POST", "/_sim/refunds", "{}").statusCode()).isEqualTo(400);
    assertThat(control("DELETE", "/_sim/refunds/ctl-rf-2-r", "").statusCode()).isEqualTo(405);
    assertThat(refundStatus("ctl-rf-2-r")).isEqualTo("SUCCESS");
  }

  private void prepay(String outTradeNo) throws Exception {
    prepay(outTradeNo, null);
  }

  /** A prepay as the SDK sends it; with {@code timeExpire} when not null. */
  private void prepay(String outTradeNo, Instant timeExpire) throws Exception {
    ObjectNode request =
        JSON.createObjectNode()
            .put("appid", wechat.appid())
            .put("mchid", wechat.mchid())
            .put("description", "control test")
            .put("out_trade_no", outTradeNo)
            .put("notify_url", "http://127.0.0.1/notify");
    request.putObject("amount").put("total", 1_000).put("currency", "CNY");
    request.putObject("payer").put("openid", "oCtlPayer");
    if (timeExpire != null) {
      request.put("time_expire", TradeBook.rfc3339(timeExpire));
    }
    String body = request.toString();
    HttpResponse<String> response =
        http.send(
            signed("POST", "/v3/pay/transactions/jsapi", body)
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
  }

  private HttpResponse<String> control(String method, String path, String body) throws Exception {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(wechat.baseUrl() + path))
            .method(method, HttpRequest.BodyPublishers.ofString(body))
            .build();
    return http.send(request, HttpResponse.BodyHandlers.ofString());
  }

  private JsonNode get(String path) throws Exception {
    HttpResponse<String> response = control("GET", path, "");
    assertThat(response.statusCode()).as(path + " " + response.body()).isEqualTo(200);
    return json(response);
  }

  private int wechatCall(String method, String url, boolean withMchid) throws Exception {
    String body = withMchid ? "{\"mchid\":\"" + wechat.mchid() + "\"}" : "";
    HttpRequest request =
        signed(method, url, body).method(method, HttpRequest.BodyPublishers.ofString(body)).build();
    return http.send(request, HttpResponse.BodyHandlers.ofString()).statusCode();
  }

  private HttpResponse<String> wechatGet(String url) throws Exception {
    return http.send(signed("GET", url, "").GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  /** A request signed with the merchant key, as the SDK signs it. */
  private HttpRequest.Builder signed(String method, String url, String body) {
    String ts = String.valueOf(Instant.now().getEpochSecond());
    String nonce = WeChatCrypto.nonce(32);
    String signature =
        WeChatCrypto.sign(
            wechat.merchantPrivateKey(),
            method + "\n" + url + "\n" + ts + "\n" + nonce + "\n" + body + "\n");
    String authorization =
        String.format(
            "%s mchid=\"%s\",nonce_str=\"%s\",timestamp=\"%s\",serial_no=\"%s\",signature=\"%s\"",
            NotificationBuilder.SIGNATURE_TYPE,
            wechat.mchid(),
            nonce,
            ts,
            wechat.merchantSerialNumber(),
            signature);
    return HttpRequest.newBuilder(URI.create(wechat.baseUrl() + url))
        .header("Authorization", authorization)
        .header("Content-Type", "application/json");
  }

  /** Checks the Wechatpay-* signature with the platform key and decrypts the resource. */
  private Received read(java.util.function.UnaryOperator<String> header, String body)
      throws java.io.IOException {
    String message =
        header.apply("Wechatpay-Timestamp")
            + "\n"
            + header.apply("Wechatpay-Nonce")
            + "\n"
            + body
            + "\n";
    boolean valid =
        WeChatCrypto.verify(
            wechat.platformPublicKey(), message, header.apply("Wechatpay-Signature"));
    JsonNode root = JSON.readTree(body);
    JsonNode resource = root.path("resource");
    try {
      Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
      cipher.init(
          Cipher.DECRYPT_MODE,
          new SecretKeySpec(wechat.apiV3Key().getBytes(StandardCharsets.UTF_8), "AES"),
          new GCMParameterSpec(
              128, resource.path("nonce").asText().getBytes(StandardCharsets.UTF_8)));
      cipher.updateAAD(resource.path("associated_data").asText().getBytes(StandardCharsets.UTF_8));
      byte[] plain =
          cipher.doFinal(Base64.getDecoder().decode(resource.path("ciphertext").asText()));
      return new Received(valid, root.path("id").asText(), JSON.readTree(plain));
    } catch (java.security.GeneralSecurityException e) {
      throw new IllegalStateException("could not decrypt notification " + root.path("id"), e);
    }
  }

  private static JsonNode json(HttpResponse<String> response) throws Exception {
    return JSON.readTree(response.body());
  }

  /**
   * Polls every 10 ms for up to 10 s; fails naming what it waited for. Awaitility directly: this
   * module is below shared, whose io.ordertimeout.testing.Await wraps the same calls.
   */
  private static void await(BooleanSupplier condition, String what) {
    Awaitility.await(what)
        .pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(10))
        .atMost(Duration.ofSeconds(10))
        .until(condition::getAsBoolean);
  }
}
