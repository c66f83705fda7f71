package io.ordertimeout.functions.orders;

import static org.assertj.core.api.Assertions.assertThat;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.fasterxml.jackson.databind.JsonNode;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.payment.PaidTrade;
import io.ordertimeout.testing.LambdaTestContext;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.util.Json;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The order's life after payment and coupons through the real handler on real MariaDB and Redis:
 * every answer's status and body, and the rows (orders, outbox, coupons) and timers behind it. The
 * periods are the defaults: receipt 10 days, extension 3 days, after-sale window 7 days.
 */
class LifecycleRoutesTest {
  private static final String SHIPMENT = "{\"carrier\":\"SF\",\"trackingNo\":\"SF1234567890\"}";
  private static final long DAY_MS = Duration.ofDays(1).toMillis();

  /**
   * How far the timer clock runs ahead of this host's: a test moves it past a coupon's validity.
   */
  private final AtomicLong skewMillis = new AtomicLong();

  private TestStack stack;
  private OrderApiHandler handler;

  @BeforeEach
  void setUp() {
    stack =
        TestStack.create("life-api", c -> c, () -> System.currentTimeMillis() + skewMillis.get());
    stack.seedSku("sku-cup", 20);
    handler = new OrderApiHandler(stack.app().orderApi());
  }

  @AfterEach
  void tearDown() {
    stack.assertInvariants();
    stack.close();
  }

  private APIGatewayV2HTTPResponse call(String routeKey, String id, String body) {
    return handler.handleRequest(
        ApiEvents.route(routeKey).id(id).body(body).build(),
        new LambdaTestContext("order-created", 10_000));
  }

  private static JsonNode json(APIGatewayV2HTTPResponse response) throws Exception {
    return Json.MAPPER.readTree(response.getBody());
  }

  private void placeAndPay(String orderId) {
    stack.place(orderId, "u1", 600, null, new OrderItem("sku-cup", 1));
    stack
        .app()
        .payments()
        .apply(
            new PaidTrade("default", orderId, "tx-" + orderId, 100, null, PaidTrade.Source.NOTIFY));
  }

  private void shipped(String orderId) {
    placeAndPay(orderId);
    assertThat(call(OrderApiHandler.SHIP, orderId, SHIPMENT).getStatusCode()).isEqualTo(200);
  }

  private void received(String orderId) {
    shipped(orderId);
    assertThat(call(OrderApiHandler.RECEIPT, orderId, null).getStatusCode()).isEqualTo(200);
  }

  /** Every table a route could touch, the outbox and every Redis key: a refusal changes none. */
  private List<String> everything() {
    List<String> state = new ArrayList<>(stack.databaseState());
    state.add("## outbox");
    state.addAll(stack.dump("SELECT seq, order_id, event_type, payload FROM outbox ORDER BY seq"));
    state.add("## redis");
    state.addAll(stack.redisState());
    for (DeadlineKind kind : DeadlineKind.values()) {
      state.add(kind + " " + stack.app().timers().size(TenantIds.DEFAULT, kind));
    }
    return state;
  }

  private static void assertError(APIGatewayV2HTTPResponse r, int status, String code)
      throws Exception {
    assertThat(r.getStatusCode()).as(r.getBody()).isEqualTo(status);
    assertThat(json(r).at("/error/code").asText()).as(r.getBody()).isEqualTo(code);
  }

  private static Instant at(JsonNode body, String field) {
    return Instant.parse(body.get(field).asText());
  }

  // ---- ship ----

  @Test
  void shippingAPaidOrderStartsTheReceiptDeadlineAndARetryChangesNothing() throws Exception {
    placeAndPay("ord-ship-1");

    APIGatewayV2HTTPResponse shipped = call(OrderApiHandler.SHIP, "ord-ship-1", SHIPMENT);

    assertThat(shipped.getStatusCode()).isEqualTo(200);
    JsonNode body = json(shipped);
    assertThat(body.get("status").asText()).isEqualTo("SHIPPED");
    assertThat(body.get("changed").asBoolean()).isTrue();
    assertThat(body.get("carrier").asText()).isEqualTo("SF");
    assertThat(body.get("trackingNo").asText()).isEqualTo("SF1234567890");
    assertThat(at(body, "receiveDueAt").toEpochMilli() - at(body, "shippedAt").toEpochMilli())
        .isEqualTo(10 * DAY_MS);
    assertThat(body.get("receivedAt").isNull()).isTrue();
    assertThat(body.get("afterSales").asInt()).isZero();
    assertThat(
            stack.dump(
                "SELECT status, carrier, tracking_no, TIMESTAMPDIFF(DAY, shipped_at,"
                    + " receive_due_at) FROM orders WHERE order_id = 'ord-ship-1'"))
        .containsExactly("SHIPPED|SF|SF1234567890|10|");
    assertThat(
            stack.dump("SELECT event_type FROM outbox WHERE order_id = 'ord-ship-1' ORDER BY seq"))
        .containsExactly("created|", "paid|", "shipped|");
    JsonNode payload =
        Json.MAPPER.readTree(
            stack
                .dump("SELECT payload FROM outbox WHERE event_type = 'shipped'")
                .get(0)
                .replaceAll("\\|$", ""));
    assertThat(payload.get("carrier").asText()).isEqualTo("SF");
    assertThat(payload.get("receiveDueAt").asLong())
        .isEqualTo(at(body, "receiveDueAt").toEpochMilli());
    assertThat(
            stack
                .app()
                .timers()
                .deadlineOf(TenantIds.DEFAULT, DeadlineKind.AUTO_RECEIPT, "ord-ship-1"))
        .hasValue(at(body, "receiveDueAt").toEpochMilli());

    List<String> before = everything();
    APIGatewayV2HTTPResponse retry = call(OrderApiHandler.SHIP, "ord-ship-1", SHIPMENT);

    assertThat(retry.getStatusCode()).isEqualTo(200);
    assertThat(json(retry).get("changed").asBoolean()).isFalse();
    assertThat(json(retry).get("receiveDueAt")).isEqualTo(body.get("receiveDueAt"));
    assertThat(everything()).isEqualTo(before);
  }

  @Test
  void shippingAgainWithAnotherTrackingNumberIsAConflictNamingTheState() throws Exception {
    shipped("ord-ship-2");
    List<String> before = everything();

    APIGatewayV2HTTPResponse other =
        call(OrderApiHandler.SHIP, "ord-ship-2", "{\"carrier\":\"SF\",\"trackingNo\":\"SF999\"}");

    assertError(other, 409, "ILLEGAL_TRANSITION");
    assertThat(json(other).at("/error/status").asText()).isEqualTo("SHIPPED");
    assertThat(everything()).isEqualTo(before);
  }

  @Test
  void shippingAnUnpaidOrderIs409WithItsStateAndAnUnknownOne404() throws Exception {
    stack.place("ord-unpaid", "u1", 600, null, new OrderItem("sku-cup", 1));
    List<String> before = everything();

    APIGatewayV2HTTPResponse unpaid = call(OrderApiHandler.SHIP, "ord-unpaid", SHIPMENT);
    APIGatewayV2HTTPResponse unknown = call(OrderApiHandler.SHIP, "ord-nothere", SHIPMENT);
    APIGatewayV2HTTPResponse badId = call(OrderApiHandler.SHIP, "a b", SHIPMENT);

    assertError(unpaid, 409, "ILLEGAL_TRANSITION");
    assertThat(json(unpaid).at("/error/status").asText()).isEqualTo("UNPAID");
    assertThat(json(unpaid).at("/error/message").asText()).contains("ord-unpaid", "UNPAID");
    assertError(unknown, 404, "NOT_FOUND");
    assertError(badId, 400, "INVALID_ORDER_ID");
    assertThat(everything()).isEqualTo(before);
  }

  @Test
  void theLongestCarrierAndTrackingNumberTheColumnsHoldAreStoredWhole() throws Exception {
    placeAndPay("ord-ship-3");
    String carrier = "顺".repeat(32);
    String tracking = "T".repeat(64);

    APIGatewayV2HTTPResponse shipped =
        call(
            OrderApiHandler.SHIP,
            "ord-ship-3",
            "{\"carrier\":\"" + carrier + "\",\"trackingNo\":\"" + tracking + "\"}");

    assertThat(shipped.getStatusCode()).as(shipped.getBody()).isEqualTo(200);
    assertThat(stack.dump("SELECT carrier, tracking_no FROM orders WHERE order_id = 'ord-ship-3'"))
        .containsExactly(carrier + "|" + tracking + "|");
  }

  static Stream<Arguments> badShipments() {
    return Stream.of(
        Arguments.of("{\"trackingNo\":\"SF1\"}", "MISSING_FIELD"),
        Arguments.of("{\"carrier\":\"SF\"}", "MISSING_FIELD"),
        Arguments.of("{\"carrier\":null,\"trackingNo\":\"SF1\"}", "MISSING_FIELD"),
        Arguments.of(
            "{\"carrier\":\"" + "顺".repeat(33) + "\",\"trackingNo\":\"SF1\"}", "INVALID_CARRIER"),
        Arguments.of("{\"carrier\":\"   \",\"trackingNo\":\"SF1\"}", "INVALID_CARRIER"),
        Arguments.of("{\"carrier\":\"S\\u0000F\",\"trackingNo\":\"SF1\"}", "INVALID_CARRIER"),
        Arguments.of("{\"carrier\":7,\"trackingNo\":\"SF1\"}", "INVALID_CARRIER"),
        Arguments.of(
            "{\"carrier\":\"SF\",\"trackingNo\":\"" + "1".repeat(65) + "\"}",
            "INVALID_TRACKING_NO"),
        Arguments.of("{\"carrier\":\"SF\",\"trackingNo\":\"SF 1\"}", "INVALID_TRACKING_NO"),
        Arguments.of("{\"carrier\":\"SF\",\"trackingNo\":\"\"}", "INVALID_TRACKING_NO"),
        Arguments.of("{\"carrier\":\"SF\",\"trackingNo\":\"SF1\",\"x\":1}", "UNKNOWN_FIELD"),
        Arguments.of("{\"carrier\":\"SF\",", "INVALID_JSON"),
        Arguments.of("[]", "INVALID_JSON"),
        Arguments.of(null, "EMPTY_BODY"));
  }

  @ParameterizedTest
  @MethodSource("badShipments")
  void aBadShipmentIs400AndChangesNothing(String body, String code) throws Exception {
    placeAndPay("ord-ship-4");
    List<String> before = everything();

    APIGatewayV2HTTPResponse refused = call(OrderApiHandler.SHIP, "ord-ship-4", body);

    assertError(refused, 400, code);
    assertThat(everything()).isEqualTo(before);
  }

  // ---- receipt ----

  @Test
  void confirmingReceiptStartsTheAfterSaleWindowAndARetryChangesNothing() throws Exception {
    shipped("ord-recv-1");

    APIGatewayV2HTTPResponse received = call(OrderApiHandler.RECEIPT, "ord-recv-1", "{}");

    assertThat(received.getStatusCode()).isEqualTo(200);
    JsonNode body = json(received);
    assertThat(body.get("status").asText()).isEqualTo("RECEIVED");
    assertThat(body.get("changed").asBoolean()).isTrue();
    assertThat(body.get("receivedBy").asText()).isEqualTo("USER");
    assertThat(at(body, "completeDueAt").toEpochMilli() - at(body, "receivedAt").toEpochMilli())
        .isEqualTo(7 * DAY_MS);
    assertThat(
            stack.dump(
                "SELECT status, received_by, TIMESTAMPDIFF(DAY, received_at, complete_due_at)"
                    + " FROM orders WHERE order_id = 'ord-recv-1'"))
        .containsExactly("RECEIVED|USER|7|");
    assertThat(stack.count("SELECT COUNT(*) FROM outbox WHERE event_type = 'received'"))
        .isEqualTo(1);
    assertThat(
            stack
                .app()
                .timers()
                .deadlineOf(TenantIds.DEFAULT, DeadlineKind.AUTO_RECEIPT, "ord-recv-1"))
        .isEmpty();
    assertThat(
            stack
                .app()
                .timers()
                .deadlineOf(TenantIds.DEFAULT, DeadlineKind.AUTO_COMPLETE, "ord-recv-1"))
        .hasValue(at(body, "completeDueAt").toEpochMilli());

    List<String> before = everything();
    APIGatewayV2HTTPResponse retry = call(OrderApiHandler.RECEIPT, "ord-recv-1", null);

    assertThat(retry.getStatusCode()).isEqualTo(200);
    assertThat(json(retry).get("changed").asBoolean()).isFalse();
    assertThat(everything()).isEqualTo(before);
  }

  @Test
  void confirmingReceiptOfAPaidOrderIs409AndABodyWithFieldsIs400() throws Exception {
    placeAndPay("ord-recv-2");
    shipped("ord-recv-3");
    List<String> before = everything();

    APIGatewayV2HTTPResponse notShipped = call(OrderApiHandler.RECEIPT, "ord-recv-2", null);
    APIGatewayV2HTTPResponse withField =
        call(OrderApiHandler.RECEIPT, "ord-recv-3", "{\"userId\":\"u1\"}");
    APIGatewayV2HTTPResponse malformed = call(OrderApiHandler.RECEIPT, "ord-recv-3", "{");
    APIGatewayV2HTTPResponse unknown = call(OrderApiHandler.RECEIPT, "ord-nothere", null);

    assertError(notShipped, 409, "ILLEGAL_TRANSITION");
    assertThat(json(notShipped).at("/error/status").asText()).isEqualTo("PAID");
    assertError(withField, 400, "UNKNOWN_FIELD");
    assertError(malformed, 400, "INVALID_JSON");
    assertError(unknown, 404, "NOT_FOUND");
    assertThat(everything()).isEqualTo(before);
  }

  // ---- extend ----

  @Test
  void extendingMovesTheReceiptDeadlineLaterOnceAndASecondExtensionIs409() throws Exception {
    shipped("ord-ext-1");
    long dueBefore =
        stack
            .app()
            .timers()
            .deadlineOf(TenantIds.DEFAULT, DeadlineKind.AUTO_RECEIPT, "ord-ext-1")
            .orElseThrow();

    APIGatewayV2HTTPResponse extended = call(OrderApiHandler.EXTEND_RECEIPT, "ord-ext-1", null);

    assertThat(extended.getStatusCode()).isEqualTo(200);
    JsonNode body = json(extended);
    assertThat(body.get("status").asText()).isEqualTo("SHIPPED");
    assertThat(body.get("changed").asBoolean()).isTrue();
    assertThat(at(body, "receiveDueAt").toEpochMilli()).isEqualTo(dueBefore + 3 * DAY_MS);
    assertThat(body.get("receiptExtendedAt").isNull()).isFalse();
    assertThat(
            stack
                .app()
                .timers()
                .deadlineOf(TenantIds.DEFAULT, DeadlineKind.AUTO_RECEIPT, "ord-ext-1"))
        .hasValue(dueBefore + 3 * DAY_MS);
    assertThat(stack.count("SELECT COUNT(*) FROM outbox WHERE event_type = 'receipt_extended'"))
        .isEqualTo(1);

    List<String> before = everything();
    APIGatewayV2HTTPResponse again = call(OrderApiHandler.EXTEND_RECEIPT, "ord-ext-1", null);

    assertError(again, 409, "RECEIPT_ALREADY_EXTENDED");
    assertThat(everything()).isEqualTo(before);
  }

  @Test
  void extendingAnOrderThatIsNotShippedIsAnIllegalTransitionNotAnExtensionAlreadyMade()
      throws Exception {
    placeAndPay("ord-ext-2");
    received("ord-ext-3");
    List<String> before = everything();

    APIGatewayV2HTTPResponse paid = call(OrderApiHandler.EXTEND_RECEIPT, "ord-ext-2", null);
    APIGatewayV2HTTPResponse afterReceipt = call(OrderApiHandler.EXTEND_RECEIPT, "ord-ext-3", "{}");
    APIGatewayV2HTTPResponse unknown = call(OrderApiHandler.EXTEND_RECEIPT, "ord-nothere", null);

    assertError(paid, 409, "ILLEGAL_TRANSITION");
    assertThat(json(paid).at("/error/status").asText()).isEqualTo("PAID");
    assertError(afterReceipt, 409, "ILLEGAL_TRANSITION");
    assertThat(json(afterReceipt).at("/error/status").asText()).isEqualTo("RECEIVED");
    assertError(unknown, 404, "NOT_FOUND");
    assertThat(everything()).isEqualTo(before);
  }

  /**
   * The receipt deadline passed by NOW(3), not applied yet (the timer still waits in Redis): the
   * extension and the confirmation are 409 DEADLINE_PASSED and change nothing (they were 200).
   */
  @Test
  void extendingOrConfirmingAfterTheReceiptDeadlineIs409DeadlinePassed() throws Exception {
    shipped("ord-late-1");
    stack.update(
        "UPDATE orders SET receive_due_at = NOW(3) - INTERVAL 1 SECOND"
            + " WHERE order_id = 'ord-late-1'");
    List<String> before = everything();

    APIGatewayV2HTTPResponse extend = call(OrderApiHandler.EXTEND_RECEIPT, "ord-late-1", null);
    APIGatewayV2HTTPResponse confirm = call(OrderApiHandler.RECEIPT, "ord-late-1", null);

    assertError(extend, 409, "DEADLINE_PASSED");
    assertThat(json(extend).at("/error/message").asText()).contains("receipt deadline");
    assertError(confirm, 409, "DEADLINE_PASSED");
    assertThat(everything()).isEqualTo(before);
  }

  /** The completion deadline passed by NOW(3): opening an after-sale is 409 DEADLINE_PASSED. */
  @Test
  void openingAnAfterSaleAfterTheCompletionDeadlineIs409DeadlinePassed() throws Exception {
    received("ord-late-2");
    stack.update(
        "UPDATE orders SET complete_due_at = NOW(3) - INTERVAL 1 SECOND"
            + " WHERE order_id = 'ord-late-2'");
    List<String> before = everything();

    APIGatewayV2HTTPResponse open = call(OrderApiHandler.OPEN_AFTER_SALE, "ord-late-2", null);

    assertError(open, 409, "DEADLINE_PASSED");
    assertThat(everything()).isEqualTo(before);
  }

  // ---- after-sale ----

  @Test
  void anAfterSaleRequestSuspendsCompletionAndResolvingItResumesIt() throws Exception {
    received("ord-as-1");

    APIGatewayV2HTTPResponse opened = call(OrderApiHandler.OPEN_AFTER_SALE, "ord-as-1", null);

    assertThat(opened.getStatusCode()).isEqualTo(200);
    JsonNode open = json(opened);
    assertThat(open.get("status").asText()).isEqualTo("AFTER_SALE");
    assertThat(open.get("changed").asBoolean()).isTrue();
    assertThat(open.get("afterSales").asInt()).isEqualTo(1);
    assertThat(open.get("afterSaleOpenedAt").isNull()).isFalse();
    assertThat(
            stack
                .app()
                .timers()
                .deadlineOf(TenantIds.DEFAULT, DeadlineKind.AUTO_COMPLETE, "ord-as-1"))
        .isEmpty();

    List<String> whileOpen = everything();
    APIGatewayV2HTTPResponse openAgain = call(OrderApiHandler.OPEN_AFTER_SALE, "ord-as-1", "{}");
    assertThat(openAgain.getStatusCode()).isEqualTo(200);
    assertThat(json(openAgain).get("changed").asBoolean()).isFalse();
    assertThat(everything()).isEqualTo(whileOpen);

    APIGatewayV2HTTPResponse resolved = call(OrderApiHandler.RESOLVE_AFTER_SALE, "ord-as-1", null);

    assertThat(resolved.getStatusCode()).isEqualTo(200);
    JsonNode body = json(resolved);
    assertThat(body.get("status").asText()).isEqualTo("RECEIVED");
    assertThat(body.get("changed").asBoolean()).isTrue();
    assertThat(body.get("afterSaleOpenedAt").isNull()).isTrue();
    // completion moved later by the time the request stayed open, never earlier
    assertThat(at(body, "completeDueAt")).isAfterOrEqualTo(at(open, "completeDueAt"));
    assertThat(
            stack
                .app()
                .timers()
                .deadlineOf(TenantIds.DEFAULT, DeadlineKind.AUTO_COMPLETE, "ord-as-1"))
        .hasValue(at(body, "completeDueAt").toEpochMilli());
    assertThat(
            stack.dump(
                "SELECT event_type FROM outbox WHERE order_id = 'ord-as-1' AND event_type NOT IN"
                    + " ('created', 'paid', 'shipped') ORDER BY seq"))
        .containsExactly("received|", "after_sale_opened|", "after_sale_resolved|");

    List<String> afterResolve = everything();
    APIGatewayV2HTTPResponse resolveAgain =
        call(OrderApiHandler.RESOLVE_AFTER_SALE, "ord-as-1", null);
    assertThat(resolveAgain.getStatusCode()).isEqualTo(200);
    assertThat(json(resolveAgain).get("changed").asBoolean()).isFalse();
    assertThat(everything()).isEqualTo(afterResolve);
  }

  @Test
  void afterSaleRoutesInTheWrongStateAre409WithTheStateAndChangeNothing() throws Exception {
    shipped("ord-as-2");
    received("ord-as-3");
    List<String> before = everything();

    APIGatewayV2HTTPResponse openShipped = call(OrderApiHandler.OPEN_AFTER_SALE, "ord-as-2", null);
    APIGatewayV2HTTPResponse resolveNeverOpened =
        call(OrderApiHandler.RESOLVE_AFTER_SALE, "ord-as-3", null);
    APIGatewayV2HTTPResponse withReason =
        call(OrderApiHandler.OPEN_AFTER_SALE, "ord-as-3", "{\"reason\":\"broken\"}");
    APIGatewayV2HTTPResponse unknown = call(OrderApiHandler.OPEN_AFTER_SALE, "ord-nothere", null);

    assertError(openShipped, 409, "ILLEGAL_TRANSITION");
    assertThat(json(openShipped).at("/error/status").asText()).isEqualTo("SHIPPED");
    assertError(resolveNeverOpened, 409, "ILLEGAL_TRANSITION");
    assertThat(json(resolveNeverOpened).at("/error/status").asText()).isEqualTo("RECEIVED");
    assertError(withReason, 400, "UNKNOWN_FIELD");
    assertError(unknown, 404, "NOT_FOUND");
    assertThat(everything()).isEqualTo(before);
  }

  // ---- GET /orders/{id} ----

  @Test
  void getShowsTheLifecycleFieldsOfAShippedOrderAndKeepsItsOtherFields() throws Exception {
    shipped("ord-get-1");
    placeAndPay("ord-get-2");

    JsonNode shipped = json(call(OrderApiHandler.GET, "ord-get-1", null));
    JsonNode paid = json(call(OrderApiHandler.GET, "ord-get-2", null));

    assertThat(shipped.get("status").asText()).isEqualTo("SHIPPED");
    assertThat(shipped.get("carrier").asText()).isEqualTo("SF");
    assertThat(shipped.get("trackingNo").asText()).isEqualTo("SF1234567890");
    assertThat(shipped.get("receiveDueAt").asText())
        .isEqualTo(
            Instant.ofEpochMilli(
                    stack
                        .app()
                        .timers()
                        .deadlineOf(TenantIds.DEFAULT, DeadlineKind.AUTO_RECEIPT, "ord-get-1")
                        .orElseThrow())
                .toString());
    assertThat(shipped.get("items")).hasSize(1);
    assertThat(shipped.get("paidAt").isNull()).isFalse();
    assertThat(shipped.get("amountFen").asLong()).isEqualTo(100);
    // a PAID order's answer carries no shipping fields
    assertThat(paid.has("carrier")).isFalse();
    assertThat(paid.get("status").asText()).isEqualTo("PAID");
  }

  // ---- coupons ----

  private String coupon(String id, String user, Instant validUntil) {
    return "{\"couponId\":\""
        + id
        + "\",\"userId\":\""
        + user
        + "\",\"validUntil\":\""
        + validUntil
        + "\"}";
  }

  private Instant timerNow() {
    return Instant.ofEpochMilli(stack.app().time().nowMillis());
  }

  @Test
  void aCouponIsIssuedWithItsValidityAndItsExpiryTimerAndAnIdenticalRetryIs200() throws Exception {
    Instant until = Instant.parse("2030-06-30T16:00:00Z");

    APIGatewayV2HTTPResponse issued =
        call(OrderApiHandler.ISSUE_COUPON, null, coupon("cp-summer-30", "u1", until));

    assertThat(issued.getStatusCode()).as(issued.getBody()).isEqualTo(201);
    JsonNode body = json(issued);
    assertThat(body.get("created").asBoolean()).isTrue();
    assertThat(body.get("status").asText()).isEqualTo("AVAILABLE");
    assertThat(body.get("validUntil").asText()).isEqualTo("2030-06-30T16:00:00Z");
    assertThat(
            stack.dump(
                "SELECT tenant_id, owner_user_id, status, DATE_FORMAT(valid_until, '%Y-%m-%d %T.%f')"
                    + " FROM coupons"
                    + " WHERE coupon_id = 'cp-summer-30'"))
        .containsExactly("default|u1|AVAILABLE|2030-06-30 16:00:00.000000|");
    assertThat(
            stack
                .app()
                .timers()
                .deadlineOf(TenantIds.DEFAULT, DeadlineKind.COUPON_EXPIRY, "cp-summer-30"))
        .hasValue(until.toEpochMilli());

    List<String> before = everything();
    // the same instant in the mall's zone is the same coupon
    APIGatewayV2HTTPResponse retry =
        call(
            OrderApiHandler.ISSUE_COUPON,
            null,
            "{\"couponId\":\"cp-summer-30\",\"tenantId\":\"default\",\"userId\":\"u1\","
                + "\"validUntil\":\"2030-07-01T00:00:00+08:00\"}");
    assertThat(retry.getStatusCode()).isEqualTo(200);
    assertThat(json(retry).get("created").asBoolean()).isFalse();
    assertThat(everything()).isEqualTo(before);

    APIGatewayV2HTTPResponse otherOwner =
        call(OrderApiHandler.ISSUE_COUPON, null, coupon("cp-summer-30", "u2", until));
    APIGatewayV2HTTPResponse otherValidity =
        call(
            OrderApiHandler.ISSUE_COUPON, null, coupon("cp-summer-30", "u1", until.plusSeconds(1)));
    assertError(otherOwner, 409, "COUPON_CONFLICT");
    assertError(otherValidity, 409, "COUPON_CONFLICT");
    assertThat(everything()).isEqualTo(before);

    APIGatewayV2HTTPResponse got = call(OrderApiHandler.GET_COUPON, "cp-summer-30", null);
    assertThat(got.getStatusCode()).isEqualTo(200);
    assertThat(json(got).get("userId").asText()).isEqualTo("u1");
    assertThat(json(got).get("validUntil").asText()).isEqualTo("2030-06-30T16:00:00Z");
    assertError(call(OrderApiHandler.GET_COUPON, "cp-nothere", null), 404, "NOT_FOUND");
    assertError(call(OrderApiHandler.GET_COUPON, "bad id!", null), 400, "INVALID_COUPON_ID");
  }

  @Test
  void aRetryOfACouponWhoseValidityHasPassedIsStill200() throws Exception {
    Instant until = timerNow().plus(Duration.ofHours(1));
    String request = coupon("cp-short", "u1", until);
    assertThat(call(OrderApiHandler.ISSUE_COUPON, null, request).getStatusCode()).isEqualTo(201);
    skewMillis.set(Duration.ofHours(2).toMillis());
    assertThat(timerNow()).isAfter(until);

    APIGatewayV2HTTPResponse retry = call(OrderApiHandler.ISSUE_COUPON, null, request);
    APIGatewayV2HTTPResponse otherPast =
        call(OrderApiHandler.ISSUE_COUPON, null, coupon("cp-short", "u2", until));

    assertThat(retry.getStatusCode()).as(retry.getBody()).isEqualTo(200);
    assertThat(json(retry).get("created").asBoolean()).isFalse();
    assertError(otherPast, 400, "VALID_UNTIL_PASSED");
  }

  static Stream<Arguments> badCoupons() {
    String future = "2030-01-01T00:00:00Z";
    return Stream.of(
        Arguments.of(
            "{\"couponId\":\"cp-1\",\"userId\":\"u1\",\"validUntil\":\"2020-01-01T00:00:00Z\"}",
            "VALID_UNTIL_PASSED"),
        Arguments.of(
            "{\"couponId\":\"cp-1\",\"userId\":\"u1\",\"validUntil\":\"2030-01-01T00:00:00\"}",
            "INVALID_VALID_UNTIL"),
        Arguments.of(
            "{\"couponId\":\"cp-1\",\"userId\":\"u1\",\"validUntil\":\"tomorrow\"}",
            "INVALID_VALID_UNTIL"),
        Arguments.of(
            "{\"couponId\":\"cp-1\",\"userId\":\"u1\",\"validUntil\":1893456000000}",
            "INVALID_VALID_UNTIL"),
        Arguments.of(
            "{\"couponId\":\"cp-1\",\"userId\":\"u1\",\"validUntil\":\"+10000-01-01T00:00:00Z\"}",
            "INVALID_VALID_UNTIL"),
        Arguments.of("{\"couponId\":\"cp-1\",\"userId\":\"u1\"}", "MISSING_FIELD"),
        Arguments.of(
            "{\"couponId\":\"bad id!\",\"userId\":\"u1\",\"validUntil\":\"" + future + "\"}",
            "INVALID_COUPON_ID"),
        Arguments.of(
            "{\"couponId\":\""
                + "c".repeat(65)
                + "\",\"userId\":\"u1\",\"validUntil\":\""
                + future
                + "\"}",
            "INVALID_COUPON_ID"),
        Arguments.of(
            "{\"couponId\":\"cp-1\",\"userId\":\"u 1\",\"validUntil\":\"" + future + "\"}",
            "INVALID_USER_ID"),
        Arguments.of("{\"couponId\":\"cp-1\",\"validUntil\":\"" + future + "\"}", "MISSING_FIELD"),
        Arguments.of(
            "{\"couponId\":\"cp-1\",\"userId\":\"u1\",\"validUntil\":\""
                + future
                + "\",\"tenantId\":\"a b\"}",
            "INVALID_TENANT_ID"),
        Arguments.of(
            "{\"couponId\":\"cp-1\",\"userId\":\"u1\",\"validUntil\":\""
                + future
                + "\",\"amountFen\":100}",
            "UNKNOWN_FIELD"),
        Arguments.of("{\"couponId\":", "INVALID_JSON"),
        Arguments.of(null, "EMPTY_BODY"));
  }

  @ParameterizedTest
  @MethodSource("badCoupons")
  void aBadCouponRequestIs400AndIssuesNothing(String body, String code) throws Exception {
    List<String> before = everything();

    APIGatewayV2HTTPResponse refused = call(OrderApiHandler.ISSUE_COUPON, null, body);

    assertError(refused, 400, code);
    assertThat(stack.count("SELECT COUNT(*) FROM coupons")).isZero();
    assertThat(everything()).isEqualTo(before);
  }
}
