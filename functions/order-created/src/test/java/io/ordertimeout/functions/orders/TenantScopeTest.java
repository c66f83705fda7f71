package io.ordertimeout.functions.orders;

import static org.assertj.core.api.Assertions.assertThat;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.fasterxml.jackson.databind.JsonNode;
import io.ordertimeout.config.TenantSettings;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.payment.PaidTrade;
import io.ordertimeout.testing.LambdaTestContext;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.util.Json;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The order API acts for the IAM caller's tenants (OTC_TENANT_PRINCIPALS): two mall principals and
 * three tenants (mall-a: shop-a; mall-bc: shop-b and shop-c), a platform principal with "*". Every
 * order and coupon route tried across tenants answers the 404 of a missing one and changes no row
 * (orders, items, stock, coupons, outbox) and no Redis key or timer.
 */
class TenantScopeTest {
  static final String ACCOUNT = "123456789012";

  /** mall-a calls as a session of its role: the role's entry must match it. */
  static final String MALL_A = "arn:aws:sts::" + ACCOUNT + ":assumed-role/mall-a/order-sync";

  static final String MALL_BC = "arn:aws:iam::" + ACCOUNT + ":user/mall-bc";
  static final String PLATFORM = "arn:aws:sts::" + ACCOUNT + ":assumed-role/platform/ops";
  static final String STRANGER = "arn:aws:sts::" + ACCOUNT + ":assumed-role/stranger/x";
  static final String PRINCIPALS =
      "{\"arn:aws:iam::"
          + ACCOUNT
          + ":role/mall-a\":[\"shop-a\"],"
          + "\"arn:aws:iam::"
          + ACCOUNT
          + ":user/mall-bc\":[\"shop-b\",\"shop-c\"],"
          + "\"arn:aws:iam::"
          + ACCOUNT
          + ":role/ops/platform\":[\"*\"]}";
  static final String SHIPMENT = "{\"carrier\":\"SF\",\"trackingNo\":\"SF1234567890\"}";

  /** Each order route, with shop-b's order on which the route would succeed for shop-b. */
  static final Map<String, String> ROUTE_TARGETS =
      Map.of(
          OrderApiHandler.GET, "ord-b-unpaid",
          OrderApiHandler.EVENTS, "ord-b-unpaid",
          OrderApiHandler.CANCEL, "ord-b-unpaid",
          OrderApiHandler.PREPAY, "ord-b-unpaid",
          OrderApiHandler.SHIP, "ord-b-paid",
          OrderApiHandler.RECEIPT, "ord-b-shipped",
          OrderApiHandler.EXTEND_RECEIPT, "ord-b-shipped",
          OrderApiHandler.OPEN_AFTER_SALE, "ord-b-received",
          OrderApiHandler.RESOLVE_AFTER_SALE, "ord-b-aftersale");

  private TestStack stack;
  private OrderApiHandler handler;

  @BeforeEach
  void setUp() {
    stack =
        TestStack.create(
            "tenant-api",
            c -> c.toBuilder().tenants(TenantSettings.parse(PRINCIPALS)).build(),
            null);
    for (String t : List.of("a", "b", "c")) {
      stack.app().tenants().onboard("shop-" + t);
      stack.update(
          "INSERT INTO stock (sku_id, tenant_id, available, total) VALUES (?, ?, 20, 20)",
          "sku-" + t,
          "shop-" + t);
    }
    handler = new OrderApiHandler(stack.app().orderApi());
  }

  @AfterEach
  void tearDown() {
    stack.assertInvariants();
    stack.close();
  }

  private APIGatewayV2HTTPResponse call(
      String caller, String tenant, String routeKey, String id, String body) {
    return handler.handleRequest(
        ApiEvents.route(routeKey).id(id).body(body).caller(caller).tenant(tenant).build(),
        new LambdaTestContext("order-created", 10_000));
  }

  private static String order(String orderId, String sku, String tenantField) {
    return "{\"orderId\":\""
        + orderId
        + "\","
        + (tenantField == null ? "" : "\"tenantId\":\"" + tenantField + "\",")
        + "\"userId\":\"u1\",\"items\":[{\"skuId\":\""
        + sku
        + "\",\"quantity\":1}],\"amountFen\":100}";
  }

  private static String coupon(String couponId, String tenantField) {
    return "{\"couponId\":\""
        + couponId
        + "\","
        + (tenantField == null ? "" : "\"tenantId\":\"" + tenantField + "\",")
        + "\"userId\":\"u1\",\"validUntil\":\""
        + Instant.now().plusSeconds(86_400)
        + "\"}";
  }

  private static JsonNode json(APIGatewayV2HTTPResponse r) throws Exception {
    return Json.MAPPER.readTree(r.getBody());
  }

  private static void assertStatus(APIGatewayV2HTTPResponse r, int status) {
    assertThat(r.getStatusCode()).as(r.getBody()).isEqualTo(status);
  }

  private static void assertError(APIGatewayV2HTTPResponse r, int status, String code)
      throws Exception {
    assertStatus(r, status);
    assertThat(json(r).at("/error/code").asText()).as(r.getBody()).isEqualTo(code);
  }

  /** shop-b's orders in every state a route acts on, placed and moved by mall-bc itself. */
  private void seedShopB() {
    for (String id :
        List.of(
            "ord-b-unpaid", "ord-b-paid", "ord-b-shipped", "ord-b-received", "ord-b-aftersale")) {
      assertStatus(
          call(MALL_BC, "shop-b", OrderApiHandler.PLACE, null, order(id, "sku-b", null)), 201);
      if (!id.equals("ord-b-unpaid")) {
        stack
            .app()
            .payments()
            .apply(new PaidTrade("shop-b", id, "tx-" + id, 100, null, PaidTrade.Source.NOTIFY));
      }
    }
    for (String id : List.of("ord-b-shipped", "ord-b-received", "ord-b-aftersale")) {
      assertStatus(call(MALL_BC, "shop-b", OrderApiHandler.SHIP, id, SHIPMENT), 200);
    }
    for (String id : List.of("ord-b-received", "ord-b-aftersale")) {
      assertStatus(call(MALL_BC, "shop-b", OrderApiHandler.RECEIPT, id, null), 200);
    }
    assertStatus(
        call(MALL_BC, "shop-b", OrderApiHandler.OPEN_AFTER_SALE, "ord-b-aftersale", null), 200);
    assertStatus(
        call(MALL_BC, "shop-b", OrderApiHandler.ISSUE_COUPON, null, coupon("cp-b", null)), 201);
  }

  /** Every table a route could touch, the outbox and every Redis key and timer. */
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

  @Test
  void everyOrderRouteAnswersAnotherTenantsOrderLikeAMissingOneAndChangesNothing()
      throws Exception {
    seedShopB();
    assertStatus(
        call(MALL_A, null, OrderApiHandler.PLACE, null, order("ord-a-1", "sku-a", null)), 201);
    List<String> before = everything();

    for (Map.Entry<String, String> route : ROUTE_TARGETS.entrySet()) {
      String body = route.getKey().equals(OrderApiHandler.SHIP) ? SHIPMENT : null;
      if (route.getKey().equals(OrderApiHandler.PREPAY)) {
        body = "{\"openId\":\"oUpF8uMuAJO_M2pxb1Q9zNjWeS6o\"}";
      }
      APIGatewayV2HTTPResponse foreign = call(MALL_A, null, route.getKey(), route.getValue(), body);
      APIGatewayV2HTTPResponse missing = call(MALL_A, null, route.getKey(), "ord-missing", body);

      assertError(foreign, 404, "NOT_FOUND");
      assertThat(foreign.getBody().replace(route.getValue(), "ord-missing"))
          .as(route.getKey())
          .isEqualTo(missing.getBody());
      // naming shop-a explicitly scopes the same way
      assertError(call(MALL_A, "shop-a", route.getKey(), route.getValue(), body), 404, "NOT_FOUND");
      // mall-bc acting for its other tenant shop-c does not see shop-b's order either
      assertError(
          call(MALL_BC, "shop-c", route.getKey(), route.getValue(), body), 404, "NOT_FOUND");
    }
    APIGatewayV2HTTPResponse foreignCoupon =
        call(MALL_A, null, OrderApiHandler.GET_COUPON, "cp-b", null);
    assertError(foreignCoupon, 404, "NOT_FOUND");
    assertThat(foreignCoupon.getBody().replace("cp-b", "cp-none"))
        .isEqualTo(call(MALL_A, null, OrderApiHandler.GET_COUPON, "cp-none", null).getBody());

    assertThat(everything()).isEqualTo(before);
    // and the owners still see theirs
    assertStatus(call(MALL_BC, "shop-b", OrderApiHandler.GET, "ord-b-unpaid", null), 200);
    assertStatus(call(MALL_BC, "shop-b", OrderApiHandler.GET_COUPON, "cp-b", null), 200);
    assertStatus(call(MALL_A, null, OrderApiHandler.EVENTS, "ord-a-1", null), 200);
  }

  @Test
  void aCallerActsForTheTenantItNamesInTheHeaderOrTheBodyAndOnlyItsOwn() throws Exception {
    APIGatewayV2HTTPResponse inB =
        call(MALL_BC, "shop-b", OrderApiHandler.PLACE, null, order("ord-b-1", "sku-b", null));
    APIGatewayV2HTTPResponse inC =
        call(MALL_BC, null, OrderApiHandler.PLACE, null, order("ord-c-1", "sku-c", "shop-c"));
    APIGatewayV2HTTPResponse inA =
        call(MALL_A, null, OrderApiHandler.PLACE, null, order("ord-a-1", "sku-a", null));

    assertStatus(inB, 201);
    assertThat(json(inB).get("tenantId").asText()).isEqualTo("shop-b");
    assertStatus(inC, 201);
    assertThat(json(inC).get("tenantId").asText()).isEqualTo("shop-c");
    assertStatus(inA, 201);
    assertThat(json(inA).get("tenantId").asText()).isEqualTo("shop-a");
    List<String> placed = stack.dump("SELECT order_id, tenant_id FROM orders ORDER BY order_id");
    assertThat(placed).containsExactly("ord-a-1|shop-a|", "ord-b-1|shop-b|", "ord-c-1|shop-c|");

    // a tenant the caller may not act for: 403, whether named in the header or the body
    assertError(
        call(MALL_A, "shop-b", OrderApiHandler.PLACE, null, order("ord-x-1", "sku-b", null)),
        403,
        "TENANT_NOT_ALLOWED");
    assertError(
        call(MALL_A, null, OrderApiHandler.PLACE, null, order("ord-x-2", "sku-b", "shop-b")),
        403,
        "TENANT_NOT_ALLOWED");
    assertError(
        call(MALL_BC, "shop-a", OrderApiHandler.GET, "ord-a-1", null), 403, "TENANT_NOT_ALLOWED");
    assertError(
        call(MALL_A, null, OrderApiHandler.ISSUE_COUPON, null, coupon("cp-x", "shop-b")),
        403,
        "TENANT_NOT_ALLOWED");
    // two tenants and none named: the caller must say which
    assertError(call(MALL_BC, null, OrderApiHandler.GET, "ord-b-1", null), 400, "TENANT_REQUIRED");
    // a malformed header is refused before any lookup
    assertError(
        call(MALL_BC, "shop b", OrderApiHandler.GET, "ord-b-1", null), 400, "INVALID_TENANT_ID");
    // header and body disagree
    assertError(
        call(MALL_BC, "shop-b", OrderApiHandler.PLACE, null, order("ord-x-3", "sku-c", "shop-c")),
        400,
        "TENANT_MISMATCH");
    assertThat(stack.dump("SELECT order_id, tenant_id FROM orders ORDER BY order_id"))
        .isEqualTo(placed);
    assertThat(stack.dump("SELECT coupon_id FROM coupons")).isEmpty();
  }

  @Test
  void aPlatformRoleWithStarActsForEveryTenantItNames() throws Exception {
    assertStatus(
        call(MALL_A, null, OrderApiHandler.PLACE, null, order("ord-a-1", "sku-a", null)), 201);
    assertStatus(
        call(MALL_BC, "shop-c", OrderApiHandler.PLACE, null, order("ord-c-1", "sku-c", null)), 201);

    APIGatewayV2HTTPResponse a = call(PLATFORM, "shop-a", OrderApiHandler.GET, "ord-a-1", null);
    APIGatewayV2HTTPResponse c = call(PLATFORM, "shop-c", OrderApiHandler.CANCEL, "ord-c-1", null);

    assertStatus(a, 200);
    assertThat(json(a).get("tenantId").asText()).isEqualTo("shop-a");
    assertStatus(c, 202);
    assertThat(
            stack.dump(
                "SELECT cancel_requested_at IS NOT NULL FROM orders WHERE order_id = 'ord-c-1'"))
        .containsExactly("1|");
    // "*" still scopes each request to the tenant it names
    assertError(call(PLATFORM, "shop-b", OrderApiHandler.GET, "ord-a-1", null), 404, "NOT_FOUND");
    assertError(call(PLATFORM, null, OrderApiHandler.GET, "ord-a-1", null), 400, "TENANT_REQUIRED");
  }

  @Test
  void anUnmappedCallerIsRefusedOnEveryRouteBeforeItsBody() throws Exception {
    assertStatus(
        call(MALL_A, null, OrderApiHandler.PLACE, null, order("ord-a-1", "sku-a", null)), 201);
    List<String> before = everything();
    String otherAccount = "arn:aws:sts::999999999999:assumed-role/mall-a/order-sync";

    for (String caller : new String[] {STRANGER, otherAccount, null}) {
      assertError(
          call(caller, null, OrderApiHandler.PLACE, null, order("ord-s-1", "sku-a", "shop-a")),
          403,
          "PRINCIPAL_NOT_MAPPED");
      // even a malformed body: the caller is refused first
      assertError(
          call(caller, "shop-a", OrderApiHandler.PLACE, null, "{"), 403, "PRINCIPAL_NOT_MAPPED");
      for (String route : ROUTE_TARGETS.keySet()) {
        assertError(call(caller, "shop-a", route, "ord-a-1", null), 403, "PRINCIPAL_NOT_MAPPED");
      }
      assertError(
          call(caller, null, OrderApiHandler.ISSUE_COUPON, null, coupon("cp-s", "shop-a")),
          403,
          "PRINCIPAL_NOT_MAPPED");
    }
    assertThat(everything()).isEqualTo(before);
  }
}
