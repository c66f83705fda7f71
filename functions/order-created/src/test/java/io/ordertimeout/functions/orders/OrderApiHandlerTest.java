package io.ordertimeout.functions.orders;

import static org.assertj.core.api.Assertions.assertThat;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.amazonaws.services.lambda.runtime.tests.EventLoader;
import com.fasterxml.jackson.databind.JsonNode;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.testing.LambdaTestContext;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.util.Json;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class OrderApiHandlerTest {
  static final String POST_EVENT = "../../events/order-created-post-orders.json";
  static final String GET_EVENT = "../../events/order-created-get-order.json";

  private TestStack stack;
  private OrderApiHandler handler;

  @BeforeEach
  void setUp() {
    stack = TestStack.create("order-api");
    stack.seedSku("sku-tea-500g", 10);
    stack.seedSku("sku-cup", 10);
    stack.seedCoupon("cp-welcome-10", "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o");
    stack.seedCoupon("cp-used", "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o");
    stack.update("UPDATE coupons SET status = 'USED' WHERE coupon_id = 'cp-used'");
    stack.seedCoupon("cp-other", "someone-else");
    handler = new OrderApiHandler(stack.app().orderApi());
  }

  @AfterEach
  void tearDown() {
    stack.assertInvariants();
    stack.close();
  }

  private APIGatewayV2HTTPResponse post(String body) {
    APIGatewayV2HTTPEvent event = EventLoader.loadApiGatewayHttpEvent(POST_EVENT);
    event.setBody(body);
    return handler.handleRequest(event, new LambdaTestContext("order-created", 10_000));
  }

  private static JsonNode json(APIGatewayV2HTTPResponse response) throws Exception {
    return Json.MAPPER.readTree(response.getBody());
  }

  @Test
  void theSampleEventPlacesAnOrderAndGetReturnsIt() throws Exception {
    APIGatewayV2HTTPEvent event = EventLoader.loadApiGatewayHttpEvent(POST_EVENT);

    APIGatewayV2HTTPResponse created =
        handler.handleRequest(event, new LambdaTestContext("order-created", 10_000));
    APIGatewayV2HTTPResponse got =
        handler.handleRequest(
            EventLoader.loadApiGatewayHttpEvent(GET_EVENT),
            new LambdaTestContext("order-created", 10_000));

    assertThat(created.getStatusCode()).isEqualTo(201);
    JsonNode body = json(created);
    assertThat(body.get("orderId").asText()).isEqualTo("wx20261130000001");
    assertThat(body.get("status").asText()).isEqualTo("UNPAID");
    assertThat(body.get("expireAt").asText()).endsWith("Z");
    assertThat(got.getStatusCode()).isEqualTo(200);
    assertThat(json(got).get("items")).hasSize(2);
    assertThat(stack.dump("SELECT sku_id, available, reserved FROM stock ORDER BY sku_id"))
        .containsExactly("sku-cup|9|1|", "sku-tea-500g|8|2|");
    assertThat(
            stack.dump(
                "SELECT status, locked_by_order FROM coupons WHERE coupon_id = 'cp-welcome-10'"))
        .containsExactly("LOCKED|wx20261130000001|");
    assertThat(stack.count("SELECT COUNT(*) FROM stock_movements WHERE kind = 'RESERVE'"))
        .isEqualTo(2);
    assertThat(stack.count("SELECT COUNT(*) FROM order_snapshots")).isEqualTo(1);
    // the default timeout is 15 minutes, and the timer holds the deadline the order has
    long expireAt = java.time.Instant.parse(body.get("expireAt").asText()).toEpochMilli();
    assertThat(stack.app().timers().deadlineOf(TenantIds.DEFAULT, "wx20261130000001"))
        .hasValue(expireAt);
  }

  @Test
  void anIdenticalRetryIsAnsweredWithTheExistingOrderAndReservesNothingMore() throws Exception {
    String body = order("retry-0001", "sku-cup", 2, null);
    APIGatewayV2HTTPResponse first = post(body);
    APIGatewayV2HTTPResponse retry = post(body);

    assertThat(first.getStatusCode()).isEqualTo(201);
    assertThat(retry.getStatusCode()).isEqualTo(200);
    assertThat(json(retry).get("expireAt")).isEqualTo(json(first).get("expireAt"));
    assertThat(stack.dump("SELECT reserved FROM stock WHERE sku_id = 'sku-cup'"))
        .containsExactly("2|");
  }

  private APIGatewayV2HTTPResponse cancel(String orderId) {
    APIGatewayV2HTTPEvent event = ApiEvents.route(OrderApiHandler.CANCEL).id(orderId).build();
    return handler.handleRequest(event, new LambdaTestContext("order-created", 10_000));
  }

  private long cancelEvents() {
    // a cancel request is a MySQL row first; the outbox relay puts it on the stream
    stack.relayOutboxToStream();
    var redis = stack.app().redis().sync();
    return redis.xrange(stack.app().stream().key(), io.lettuce.core.Range.create("-", "+")).stream()
        .filter(m -> m.getBody().get("e").contains("\"cancel_requested\""))
        .count();
  }

  @Test
  void cancellingAnUnpaidOrderIsAcceptedAndAppendsOneCancelRequest() throws Exception {
    post(order("cancel-0001", "sku-cup", 1, null));

    APIGatewayV2HTTPResponse accepted = cancel("cancel-0001");

    assertThat(accepted.getStatusCode()).isEqualTo(202);
    assertThat(json(accepted).get("status").asText()).isEqualTo("UNPAID");
    assertThat(cancelEvents()).isEqualTo(1);
  }

  @Test
  void cancellingAPaidOrderIsAConflictAndAppendsNothing() throws Exception {
    post(order("paid-000001", "sku-cup", 1, null));
    // paid the way the payment path does it: status, SELL ledger row, reserved -> sold
    stack.update(
        "UPDATE orders SET status = 'PAID', paid_at = NOW(3) WHERE order_id = 'paid-000001'");
    stack.update(
        "INSERT INTO stock_movements (tenant_id, order_id, sku_id, kind, quantity) VALUES ('default', 'paid-000001', 'sku-cup', 'SELL', 1)");
    stack.update(
        "UPDATE stock SET reserved = reserved - 1, sold = sold + 1 WHERE sku_id = 'sku-cup'");
    List<String> before = stack.databaseState();

    APIGatewayV2HTTPResponse refused = cancel("paid-000001");

    assertThat(refused.getStatusCode()).isEqualTo(409);
    assertThat(json(refused).at("/error/code").asText()).isEqualTo("ORDER_PAID");
    assertThat(stack.databaseState()).isEqualTo(before);
    assertThat(cancelEvents()).isZero();
  }

  @Test
  void cancellingAClosedOrderAnswers200AndAnUnknownOne404() throws Exception {
    post(order("closed-0001", "sku-cup", 1, null));
    stack
        .app()
        .closer()
        .close(
            TenantIds.DEFAULT,
            List.of("closed-0001"),
            io.ordertimeout.domain.CloseReason.USER_CANCEL);

    APIGatewayV2HTTPResponse closed = cancel("closed-0001");
    APIGatewayV2HTTPResponse unknown = cancel("nobody-0001");

    assertThat(closed.getStatusCode()).isEqualTo(200);
    assertThat(json(closed).get("status").asText()).isEqualTo("CLOSED");
    assertThat(unknown.getStatusCode()).isEqualTo(404);
    assertThat(cancelEvents()).isZero();
  }

  @Test
  void theSameOrderIdWithOtherContentIsAConflict() throws Exception {
    post(order("conflict-01", "sku-cup", 1, null));

    APIGatewayV2HTTPResponse other = post(order("conflict-01", "sku-cup", 2, null));

    assertThat(other.getStatusCode()).isEqualTo(409);
    assertThat(json(other).at("/error/code").asText()).isEqualTo("ORDER_CONFLICT");
    assertThat(stack.dump("SELECT reserved FROM stock WHERE sku_id = 'sku-cup'"))
        .containsExactly("1|");
  }

  @Test
  void aBase64BodyIsDecodedAsApiGatewaySendsIt() {
    APIGatewayV2HTTPEvent event = EventLoader.loadApiGatewayHttpEvent(POST_EVENT);
    event.setBody(
        Base64.getEncoder()
            .encodeToString(
                order("b64-order-1", "sku-cup", 1, null).getBytes(StandardCharsets.UTF_8)));
    event.setIsBase64Encoded(true);

    APIGatewayV2HTTPResponse response =
        handler.handleRequest(event, new LambdaTestContext("order-created", 10_000));

    assertThat(response.getStatusCode()).isEqualTo(201);
  }

  private APIGatewayV2HTTPResponse events(String orderId) {
    APIGatewayV2HTTPEvent event = EventLoader.loadApiGatewayHttpEvent(GET_EVENT);
    event.setRouteKey("GET /orders/{id}/events");
    event.getRequestContext().setRouteKey("GET /orders/{id}/events");
    event.setRawPath("/orders/" + orderId + "/events");
    event.getRequestContext().getHttp().setPath("/orders/" + orderId + "/events");
    event.setPathParameters(java.util.Map.of("id", orderId));
    return handler.handleRequest(event, new LambdaTestContext("order-created", 10_000));
  }

  @Test
  void theEventsRouteAnswersTheOrdersTimelineFromTheOutboxAnd404ForAnUnknownOrder()
      throws Exception {
    post(order("timeline-01", "sku-cup", 1, null));
    cancel("timeline-01");

    APIGatewayV2HTTPResponse timeline = events("timeline-01");
    APIGatewayV2HTTPResponse unknown = events("nope-000000");

    assertThat(timeline.getStatusCode()).isEqualTo(200);
    JsonNode body = json(timeline);
    assertThat(body.get("orderId").asText()).isEqualTo("timeline-01");
    assertThat(body.get("events")).hasSize(2);
    assertThat(body.at("/events/0/type").asText()).isEqualTo("created");
    assertThat(body.at("/events/1/type").asText()).isEqualTo("cancel_requested");
    assertThat(body.at("/events/1/seq").asLong()).isGreaterThan(body.at("/events/0/seq").asLong());
    assertThat(body.at("/events/0/id").asText())
        .isEqualTo(
            stack
                .dump("SELECT event_id FROM outbox WHERE order_id = 'timeline-01' ORDER BY seq")
                .get(0)
                .replace("|", ""));
    assertThat(unknown.getStatusCode()).isEqualTo(404);
    assertThat(json(unknown).at("/error/code").asText()).isEqualTo("NOT_FOUND");
  }

  @Test
  void anUnknownOrderIs404() throws Exception {
    APIGatewayV2HTTPEvent event = ApiEvents.route(OrderApiHandler.GET).id("nope-000000").build();

    APIGatewayV2HTTPResponse response =
        handler.handleRequest(event, new LambdaTestContext("order-created", 10_000));

    assertThat(response.getStatusCode()).isEqualTo(404);
    assertThat(json(response).at("/error/code").asText()).isEqualTo("NOT_FOUND");
  }

  static Stream<Arguments> badInputs() {
    String big =
        "{\"orderId\":\"big-000001\",\"userId\":\"u\",\"amountFen\":1,\"items\":[{\"skuId\":\"sku-cup\","
            + "\"quantity\":1}],\"couponId\":\""
            + "x".repeat(70 * 1024)
            + "\"}";
    return Stream.of(
        Arguments.of("not JSON", "{orderId:", 400, "INVALID_JSON"),
        Arguments.of("a JSON array", "[]", 400, "INVALID_JSON"),
        Arguments.of("empty body", "", 400, "EMPTY_BODY"),
        Arguments.of(
            "trailing garbage", order("trail-0001", "sku-cup", 1, null) + "x", 400, "INVALID_JSON"),
        Arguments.of(
            "duplicate key",
            "{\"orderId\":\"dupkey-001\",\"orderId\":\"dupkey-002\"}",
            400,
            "INVALID_JSON"),
        Arguments.of(
            "missing orderId",
            "{\"userId\":\"u\",\"amountFen\":1,\"items\":[{\"skuId\":\"sku-cup\",\"quantity\":1}]}",
            400,
            "MISSING_FIELD"),
        Arguments.of("orderId too short", order("abc", "sku-cup", 1, null), 400, "INVALID_FIELD"),
        Arguments.of(
            "orderId with SQL", order("x' OR '1'='1", "sku-cup", 1, null), 400, "INVALID_FIELD"),
        Arguments.of(
            "orderId unicode", order("订单-000001", "sku-cup", 1, null), 400, "INVALID_FIELD"),
        Arguments.of(
            "orderId a number",
            "{\"orderId\":123456,\"userId\":\"u\",\"amountFen\":1,\"items\":[{\"skuId\":\"sku-cup\",\"quantity\":1}]}",
            400,
            "INVALID_FIELD"),
        Arguments.of(
            "quantity zero", order("qty-000000", "sku-cup", 0, null), 400, "INVALID_FIELD"),
        Arguments.of(
            "quantity negative", order("qty-000001", "sku-cup", -3, null), 400, "INVALID_FIELD"),
        Arguments.of(
            "quantity over limit",
            order("qty-000002", "sku-cup", 1000, null),
            400,
            "INVALID_FIELD"),
        Arguments.of(
            "quantity huge",
            order("qty-000003", "sku-cup", 1, null)
                .replace("\"quantity\":1", "\"quantity\":99999999999999999999999"),
            400,
            "INVALID_FIELD"),
        Arguments.of(
            "quantity a string",
            order("qty-000004", "sku-cup", 1, null).replace("\"quantity\":1", "\"quantity\":\"1\""),
            400,
            "INVALID_FIELD"),
        Arguments.of(
            "quantity fractional",
            order("qty-000005", "sku-cup", 1, null).replace("\"quantity\":1", "\"quantity\":1.5"),
            400,
            "INVALID_FIELD"),
        Arguments.of(
            "no items",
            "{\"orderId\":\"noitem-001\",\"userId\":\"u\",\"amountFen\":1,\"items\":[]}",
            400,
            "INVALID_FIELD"),
        Arguments.of("too many items", tooManyItems(), 400, "INVALID_FIELD"),
        Arguments.of(
            "duplicate SKU",
            "{\"orderId\":\"dupsku-001\",\"userId\":\"u\",\"amountFen\":1,\"items\":[{\"skuId\":\"sku-cup\",\"quantity\":1},{\"skuId\":\"sku-cup\",\"quantity\":1}]}",
            400,
            "DUPLICATE_SKU"),
        Arguments.of(
            "amount zero",
            order("amt-000000", "sku-cup", 1, null).replace("\"amountFen\":100", "\"amountFen\":0"),
            400,
            "INVALID_FIELD"),
        Arguments.of(
            "amount over int32",
            order("amt-000001", "sku-cup", 1, null)
                .replace("\"amountFen\":100", "\"amountFen\":2147483648"),
            400,
            "INVALID_FIELD"),
        Arguments.of(
            "timeout zero",
            order("tmo-000000", "sku-cup", 1, null)
                .replace("\"amountFen\"", "\"timeoutSeconds\":0,\"amountFen\""),
            400,
            "INVALID_FIELD"),
        Arguments.of(
            "unknown field",
            order("unk-000000", "sku-cup", 1, null)
                .replace("\"amountFen\"", "\"price\":1,\"amountFen\""),
            400,
            "UNKNOWN_FIELD"),
        Arguments.of("body over 64 KiB", big, 400, "BODY_TOO_LARGE"),
        Arguments.of("unknown SKU", order("unsku-0001", "sku-nope", 1, null), 400, "UNKNOWN_SKU"),
        Arguments.of(
            "unknown coupon", order("uncp-00001", "sku-cup", 1, "cp-nope"), 400, "UNKNOWN_COUPON"),
        Arguments.of(
            "someone else's coupon",
            order("owncp-0001", "sku-cup", 1, "cp-other"),
            400,
            "COUPON_NOT_OWNED"),
        Arguments.of(
            "a used coupon",
            order("usedcp-001", "sku-cup", 1, "cp-used"),
            400,
            "COUPON_NOT_AVAILABLE"),
        Arguments.of(
            "not enough stock", order("oos-000001", "sku-cup", 11, null), 409, "OUT_OF_STOCK"),
        Arguments.of(
            "second SKU out of stock",
            "{\"orderId\":\"oos-000002\",\"userId\":\"oUpF8uMuAJO_M2pxb1Q9zNjWeS6o\",\"amountFen\":1,\"couponId\":\"cp-welcome-10\",\"items\":[{\"skuId\":\"sku-cup\",\"quantity\":1},{\"skuId\":\"sku-tea-500g\",\"quantity\":11}]}",
            409,
            "OUT_OF_STOCK"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badInputs")
  void badInputGetsItsDocumentedErrorAndChangesNothing(
      String name, String body, int status, String code) throws Exception {
    List<String> dbBefore = stack.databaseState();
    List<String> redisBefore = stack.redisState();

    APIGatewayV2HTTPResponse response = post(body);

    assertThat(response.getStatusCode()).isEqualTo(status);
    JsonNode error = json(response).get("error");
    assertThat(error.get("code").asText()).isEqualTo(code);
    assertThat(error.get("message").asText()).isNotBlank();
    assertThat(stack.databaseState()).isEqualTo(dbBefore);
    assertThat(stack.redisState()).isEqualTo(redisBefore);
  }

  @Test
  void wrongMethodsAndRoutesAreRefused() throws Exception {
    // route keys API Gateway itself would refuse, should a $default route or a misrouted call bring
    // them: a path of ours under another method, a path of no route
    assertThat(invoke(ApiEvents.route("GET /orders").build()).getStatusCode()).isEqualTo(405);
    assertThat(invoke(ApiEvents.route("GET /nothing/here/at/all").build()).getStatusCode())
        .isEqualTo(404);
    assertThat(
            json(invoke(ApiEvents.route(OrderApiHandler.GET).id("bad'id").build()))
                .at("/error/code")
                .asText())
        .isEqualTo("INVALID_ORDER_ID");
  }

  @Test
  void aRouteKeyNotInTheRouteTableAnswers404AndChangesNothing() throws Exception {
    post(order("route-0001", "sku-cup", 1, null));
    List<String> dbBefore = stack.databaseState();
    List<String> redisBefore = stack.redisState();

    // a route the template lacks, though its path looks like ours; and API Gateway's catch-all
    APIGatewayV2HTTPResponse refund =
        invoke(ApiEvents.route("POST /orders/{id}/refund").id("route-0001").build());
    APIGatewayV2HTTPEvent catchAll =
        ApiEvents.route(OrderApiHandler.CANCEL).id("route-0001").build();
    catchAll.setRouteKey("$default");
    APIGatewayV2HTTPResponse byDefault = invoke(catchAll);

    assertThat(refund.getStatusCode()).isEqualTo(404);
    assertThat(json(refund).at("/error/code").asText()).isEqualTo("ROUTE_NOT_FOUND");
    assertThat(json(refund).at("/error/message").asText())
        .isEqualTo("no route POST /orders/route-0001/refund");
    assertThat(byDefault.getStatusCode()).isEqualTo(404);
    assertThat(json(byDefault).at("/error/message").asText())
        .isEqualTo("no route POST /orders/route-0001/cancel");
    assertThat(stack.databaseState()).isEqualTo(dbBefore);
    assertThat(stack.redisState()).isEqualTo(redisBefore);
    assertThat(stack.dump("SELECT status FROM orders WHERE order_id = 'route-0001'"))
        .containsExactly("UNPAID|");
  }

  /**
   * OTC_TENANT_PRINCIPALS unset (this stack): every caller, with or without an IAM context, acts
   * for the tenant default only, as before tenants were scoped; naming another tenant is 403.
   */
  @Test
  void withoutTheMappingEveryCallerActsForTheDefaultTenantOnly() throws Exception {
    String caller = "arn:aws:sts::123456789012:assumed-role/mall-a/s";
    APIGatewayV2HTTPResponse placed =
        invoke(
            ApiEvents.route(OrderApiHandler.PLACE)
                .caller(caller)
                .body(order("dflt-00001", "sku-cup", 1, null))
                .build());
    APIGatewayV2HTTPResponse named =
        invoke(
            ApiEvents.route(OrderApiHandler.GET)
                .id("dflt-00001")
                .caller(caller)
                .tenant("default")
                .build());
    APIGatewayV2HTTPResponse other =
        invoke(
            ApiEvents.route(OrderApiHandler.PLACE)
                .body(
                    order("dflt-00002", "sku-cup", 1, null)
                        .replace("{", "{\"tenantId\":\"shop-b\","))
                .build());
    APIGatewayV2HTTPResponse otherHeader =
        invoke(ApiEvents.route(OrderApiHandler.GET).id("dflt-00001").tenant("shop-b").build());

    assertThat(placed.getStatusCode()).as(placed.getBody()).isEqualTo(201);
    assertThat(json(placed).get("tenantId").asText()).isEqualTo("default");
    assertThat(named.getStatusCode()).isEqualTo(200);
    assertThat(other.getStatusCode()).isEqualTo(403);
    assertThat(json(other).at("/error/code").asText()).isEqualTo("TENANT_NOT_ALLOWED");
    assertThat(otherHeader.getStatusCode()).isEqualTo(403);
    assertThat(stack.dump("SELECT order_id, tenant_id FROM orders"))
        .containsExactly("dflt-00001|default|");
  }

  private APIGatewayV2HTTPResponse invoke(APIGatewayV2HTTPEvent event) {
    return handler.handleRequest(event, new LambdaTestContext("order-created", 1_000));
  }

  static String order(String id, String sku, long quantity, String coupon) {
    return "{\"orderId\":"
        + Json.write(id)
        + ",\"userId\":\"oUpF8uMuAJO_M2pxb1Q9zNjWeS6o\",\"items\":[{\"skuId\":"
        + Json.write(sku)
        + ",\"quantity\":"
        + quantity
        + "}],"
        + (coupon == null ? "" : "\"couponId\":\"" + coupon + "\",")
        + "\"amountFen\":100}";
  }

  private static String tooManyItems() {
    StringBuilder items = new StringBuilder();
    for (int i = 0; i < 51; i++) {
      items
          .append(i == 0 ? "" : ",")
          .append("{\"skuId\":\"s")
          .append(i)
          .append("\",\"quantity\":1}");
    }
    return "{\"orderId\":\"many-00001\",\"userId\":\"u\",\"amountFen\":1,\"items\":["
        + items
        + "]}";
  }
}
