package io.ordertimeout.local;

import static io.ordertimeout.local.IsolationStack.TENANTS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import io.ordertimeout.local.TenantFingerprints.Snapshot;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The order API across twelve tenants with overlapping ids: every route, asked for an id another
 * tenant also has, acts on the caller's tenant's order and no other; an id only another tenant has
 * answers exactly what a missing one answers; a caller naming a tenant it is not mapped to is
 * refused. After each step every other tenant's rows and Redis keys are unchanged.
 */
@Tag("integration")
class TenantIsolationTest extends IsolationFixture {

  /** Every order route as "METHOD /path", the body it needs. */
  static final Map<String, String> ORDER_ROUTES =
      Map.of(
          "GET /orders/{id}", "",
          "GET /orders/{id}/events", "",
          "POST /orders/{id}/cancel", "",
          "POST /orders/{id}/prepay", "{\"openId\":\"" + IsolationStack.OPEN_ID + "\"}",
          "POST /orders/{id}/ship", SHIPMENT,
          "POST /orders/{id}/receipt", "",
          "POST /orders/{id}/receipt/extend", "",
          "POST /orders/{id}/after-sale", "",
          "POST /orders/{id}/after-sale/resolve", "");

  private APIGatewayV2HTTPResponse route(String caller, String tenant, String routeKey, String id) {
    String[] parts = routeKey.split(" ", 2);
    String body = ORDER_ROUTES.get(routeKey);
    return iso.http(
        IsolationStack.caller(caller),
        tenant,
        parts[0],
        parts[1].replace("{id}", id),
        body == null || body.isEmpty() ? null : body);
  }

  /**
   * The suite's own control: a step that writes the acting tenant's row or timer and a bystander's
   * fails on the bystander.
   */
  @Test
  void theFingerprintsCatchAWriteToAnotherTenantsRowOrTimer() {
    Snapshot before = snapshot();
    iso.stack.update(
        "UPDATE orders SET amount_fen = amount_fen + 1"
            + " WHERE tenant_id IN ('t01', 't02') AND order_id = ?",
        ORDER_1);

    assertThatThrownBy(() -> assertOnly("a row of t02's", before, "t01"))
        .hasMessageContaining("bystander t02's rows");

    Snapshot rowWritten = snapshot();
    String prefix = iso.stack.app().config().keyPrefix();
    for (String t : List.of("t01", "t03")) {
      iso.stack.app().redis().sync().zadd(prefix + ":{t0}:timers@" + t + ":receipt", 1.0, "r:x");
    }

    assertThatThrownBy(() -> assertOnly("a timer of t03's", rowWritten, "t01"))
        .hasMessageContaining("bystander t03's Redis");
  }

  @Test
  void getAnswersEachTenantItsOwnOrderUnderTheSharedIdAndChangesNothing() throws Exception {
    Snapshot before = snapshot();

    for (int n = 1; n <= TENANTS.size(); n++) {
      String t = TENANTS.get(n - 1);
      APIGatewayV2HTTPResponse r = as(t, "GET", "/orders/" + ORDER_1, null);
      assertStatus(r, 200);
      assertThat(json(r).get("tenantId").asText()).isEqualTo(t);
      assertThat(json(r).get("amountFen").asLong()).isEqualTo(n * 100 + 1);
      assertThat(json(r).get("userId").asText()).isEqualTo("u-" + t);
      // the timeline: the tenant's own outbox rows of the id, every one naming the tenant
      APIGatewayV2HTTPResponse events = as(t, "GET", "/orders/" + ORDER_1 + "/events", null);
      assertStatus(events, 200);
      assertThat(json(events).get("events"))
          .hasSize(
              (int)
                  iso.stack.count(
                      "SELECT COUNT(*) FROM outbox WHERE tenant_id = ? AND order_id = ?",
                      t,
                      ORDER_1))
          .allSatisfy(e -> assertThat(e.get("tenantId").asText()).isEqualTo(t));
      APIGatewayV2HTTPResponse coupon = as(t, "GET", "/coupons/cp-1", null);
      assertStatus(coupon, 200);
      assertThat(json(coupon).get("tenantId").asText()).isEqualTo(t);
      assertThat(json(coupon).get("userId").asText()).isEqualTo("u-" + t);
      TenantFingerprints.CHECKS.addAndGet(3);
    }

    TenantFingerprints.assertNone("GET", before, snapshot(), fingerprints.buckets());
  }

  @Test
  void anotherTenantsOnlyOrderAnswersEveryRouteLikeAMissingOneAndChangesNothing() throws Exception {
    Snapshot before = snapshot();

    for (String t : TENANTS.subList(1, TENANTS.size())) {
      for (String routeKey : ORDER_ROUTES.keySet()) {
        APIGatewayV2HTTPResponse foreign = route(t, t, routeKey, T01_ONLY);
        APIGatewayV2HTTPResponse missing = route(t, t, routeKey, NOWHERE);
        assertStatus(foreign, 404);
        assertThat(foreign.getBody().replace(T01_ONLY, NOWHERE))
            .as("%s %s", t, routeKey)
            .isEqualTo(missing.getBody());
        assertThat(foreign.getHeaders()).isEqualTo(missing.getHeaders());
        TenantFingerprints.CHECKS.incrementAndGet();
      }
    }

    TenantFingerprints.assertNone("foreign ids", before, snapshot(), fingerprints.buckets());
    assertStatus(as("t01", "GET", "/orders/" + T01_ONLY, null), 200);
  }

  @Test
  void aCallerMappedToOneTenantNamingAnotherIs403OnEveryRoute() throws Exception {
    Snapshot before = snapshot();

    for (String caller : TENANTS) {
      for (String other : TENANTS) {
        if (other.equals(caller)) {
          continue;
        }
        for (String routeKey : ORDER_ROUTES.keySet()) {
          APIGatewayV2HTTPResponse r = route(caller, other, routeKey, ORDER_1);
          assertStatus(r, 403);
          assertThat(json(r).at("/error/code").asText()).isEqualTo("TENANT_NOT_ALLOWED");
          TenantFingerprints.CHECKS.incrementAndGet();
        }
        String order =
            "{\"orderId\":\"wx20261201000042\",\"userId\":\"u-x\",\"items\":["
                + item("sku-1", 1)
                + "],\"amountFen\":100}";
        String coupon =
            "{\"couponId\":\"cp-42\",\"userId\":\"u-x\",\"validUntil\":\""
                + Instant.now().plusSeconds(3_600)
                + "\"}";
        String who = IsolationStack.caller(caller);
        for (APIGatewayV2HTTPResponse r :
            List.of(
                iso.http(who, other, "GET", "/coupons/cp-1", null),
                iso.http(who, other, "POST", "/orders", order),
                iso.http(who, other, "POST", "/coupons", coupon))) {
          assertStatus(r, 403);
          assertThat(json(r).at("/error/code").asText()).isEqualTo("TENANT_NOT_ALLOWED");
          TenantFingerprints.CHECKS.incrementAndGet();
        }
      }
    }

    TenantFingerprints.assertNone("403", before, snapshot(), fingerprints.buckets());
  }

  @Test
  void prepayOpensATradeAtTheTenantsOwnMerchantOnly() throws Exception {
    Snapshot before = snapshot();

    APIGatewayV2HTTPResponse r = route("t04", "t04", "POST /orders/{id}/prepay", ORDER_1);

    assertStatus(r, 200);
    Snapshot after = assertOnly("prepay t04", before, "t04");
    assertThat(row("t04", "prepay_id IS NOT NULL, status", "orders", ORDER_1))
        .isEqualTo("1|UNPAID|");
    assertThat(merchant("t04").trade(ORDER_1).orElseThrow().amountFen()).isEqualTo(401);
    for (String t : TENANTS) {
      if (!t.equals("t04")) {
        assertThat(merchant(t).trade(ORDER_1)).as("trade at %s's merchant", t).isEmpty();
        TenantFingerprints.CHECKS.incrementAndGet();
      }
    }

    // the same id at t05: its own trade with its own amount; t04's stays as it was
    assertStatus(route("t05", "t05", "POST /orders/{id}/prepay", ORDER_1), 200);
    assertOnly("prepay t05", after, "t05");
    assertThat(merchant("t05").trade(ORDER_1).orElseThrow().amountFen()).isEqualTo(501);
    assertThat(merchant("t04").trade(ORDER_1).orElseThrow().amountFen()).isEqualTo(401);
  }

  @Test
  void theLifeAfterPaymentMovesOnlyTheCallersOrder() throws Exception {
    for (String t : List.of("t05", "t06")) {
      assertStatus(route(t, t, "POST /orders/{id}/prepay", ORDER_2), 200);
      merchant(t).pay(ORDER_2);
      assertStatus(iso.notify(t, merchant(t).notification(ORDER_2).build()), 204);
    }
    Snapshot state = snapshot();
    String sixBefore = row("t06", "*", "orders", ORDER_2);

    for (String routeKey :
        List.of(
            "POST /orders/{id}/ship",
            "POST /orders/{id}/receipt/extend",
            "POST /orders/{id}/receipt",
            "POST /orders/{id}/after-sale",
            "POST /orders/{id}/after-sale/resolve")) {
      assertStatus(route("t05", "t05", routeKey, ORDER_2), 200);
      state = assertOnly(routeKey + " t05", state, "t05");
    }

    assertThat(row("t05", "status", "orders", ORDER_2)).isEqualTo("RECEIVED|");
    assertThat(hasTimer(state, "t05", "complete", "c:" + ORDER_2)).isTrue();
    assertThat(hasTimer(state, "t06", "complete", "c:" + ORDER_2)).isFalse();
    assertThat(row("t06", "*", "orders", ORDER_2)).isEqualTo(sixBefore).contains("|PAID|");
  }

  @Test
  void cancelRequestsOnlyTheCallersOrderClose() throws Exception {
    Snapshot before = snapshot();

    APIGatewayV2HTTPResponse r = route("t03", "t03", "POST /orders/{id}/cancel", ORDER_1);

    assertStatus(r, 202);
    assertOnly("cancel t03", before, "t03");
    assertThat(row("t03", "cancel_requested_at IS NOT NULL", "orders", ORDER_1)).isEqualTo("1|");
    assertThat(iso.stack.count("SELECT COUNT(*) FROM orders WHERE cancel_requested_at IS NOT NULL"))
        .isOne();
  }

  @Test
  void theAdminRoutesActOnTheTenantTheyNameOnly() throws Exception {
    String oncall = "arn:aws:iam::" + IsolationStack.ACCOUNT + ":user/oncall";
    Snapshot before = snapshot();

    APIGatewayV2HTTPResponse closed =
        iso.http(
            oncall,
            null,
            "POST",
            "/admin/orders/" + ORDER_2 + "/force-close?tenantId=t04",
            "{\"reason\":\"isolation suite\"}");

    assertStatus(closed, 200);
    Snapshot after = assertOnly("force-close t04", before, "t04");
    assertThat(row("t04", "status", "orders", ORDER_2)).isEqualTo("CLOSED|");
    APIGatewayV2HTTPResponse story =
        iso.http(oncall, null, "GET", "/admin/orders/" + ORDER_1 + "?tenantId=t05", null);
    assertStatus(story, 200);
    assertThat(story.getBody()).contains("u-t05").doesNotContain("u-t04").doesNotContain("u-t06");
    APIGatewayV2HTTPResponse foreign =
        iso.http(oncall, null, "GET", "/admin/orders/" + T01_ONLY + "?tenantId=t02", null);
    assertStatus(foreign, 404);
    TenantFingerprints.CHECKS.addAndGet(2);
    TenantFingerprints.assertNone("admin reads", after, snapshot(), fingerprints.buckets());
  }

  @Test
  void aCouponIssuedToOneTenantIsThatTenantsOnly() throws Exception {
    Snapshot before = snapshot();

    APIGatewayV2HTTPResponse issued =
        as(
            "t07",
            "POST",
            "/coupons",
            "{\"couponId\":\"cp-7\",\"userId\":\"u-t07\",\"validUntil\":\""
                + Instant.now().plusSeconds(3_600)
                + "\"}");

    assertStatus(issued, 201);
    assertOnly("issue cp-7 t07", before, "t07");
    Snapshot after = snapshot();
    for (String t : TENANTS) {
      if (t.equals("t07")) {
        continue;
      }
      APIGatewayV2HTTPResponse foreign = as(t, "GET", "/coupons/cp-7", null);
      APIGatewayV2HTTPResponse missing = as(t, "GET", "/coupons/cp-none", null);
      assertStatus(foreign, 404);
      assertThat(foreign.getBody().replace("cp-7", "cp-none")).isEqualTo(missing.getBody());
      TenantFingerprints.CHECKS.incrementAndGet();
    }
    TenantFingerprints.assertNone("GET cp-7", after, snapshot(), fingerprints.buckets());
  }
}
