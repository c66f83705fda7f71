package io.ordertimeout.local;

import static io.ordertimeout.local.IsolationStack.TENANTS;
import static org.assertj.core.api.Assertions.assertThat;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.fasterxml.jackson.databind.JsonNode;
import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import io.ordertimeout.local.TenantFingerprints.Snapshot;
import io.ordertimeout.util.Json;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * The isolation suite's common ground: twelve tenants onboarded with the SAME ids, sku-1 and sku-2,
 * coupon cp-1, orders wx20261201000001..3, each tenant's with its own amounts (tenant n's order k
 * is n * 100 + k fen) and user, so a row read or written for the wrong tenant shows. Order 1 holds
 * cp-1 and one of each SKU; order 2 two sku-1; order 3 three sku-2. Only t01 has {@link #T01_ONLY}.
 */
abstract class IsolationFixture {
  static final String ORDER_1 = "wx20261201000001";
  static final String ORDER_2 = "wx20261201000002";
  static final String ORDER_3 = "wx20261201000003";
  static final String T01_ONLY = "wx20261201000099";
  static final String NOWHERE = "wx20261201000098";
  static final String SHIPMENT = "{\"carrier\":\"SF\",\"trackingNo\":\"SF1234567890\"}";

  /**
   * Lives as long as the class: a (tenant, order id) pair is prepaid by one test of a class at
   * most, since a simulator keeps its trades.
   */
  static IsolationStack.Merchants merchants;

  private static long checksAtStart;

  /** Exchanges checked against openapi.yaml in this JVM. */
  private static final java.util.concurrent.atomic.AtomicLong CONTRACT_CHECKS =
      new java.util.concurrent.atomic.AtomicLong();

  private static long contractChecksAtStart;
  IsolationStack iso;
  TenantFingerprints fingerprints;

  @BeforeAll
  static void startMerchants() {
    merchants = new IsolationStack.Merchants();
    checksAtStart = TenantFingerprints.CHECKS.get();
    contractChecksAtStart = CONTRACT_CHECKS.get();
  }

  @AfterAll
  static void stopMerchants(org.junit.jupiter.api.TestInfo info) {
    merchants.close();
    long total = TenantFingerprints.CHECKS.get();
    System.out.printf(
        "%s: %d cross-tenant checks (%d in this JVM so far), %d exchanges as openapi.yaml says%n",
        info.getDisplayName(),
        total - checksAtStart,
        total,
        CONTRACT_CHECKS.get() - contractChecksAtStart);
  }

  @BeforeEach
  void seedTwelveTenants() throws Exception {
    iso = new IsolationStack("isolation", merchants);
    fingerprints = new TenantFingerprints(iso.stack, tenantsAndDefault());
    for (int n = 1; n <= TENANTS.size(); n++) {
      String t = TENANTS.get(n - 1);
      assertThat(iso.stack.app().tenants().onboard(t)).isTrue();
      for (String sku : List.of("sku-1", "sku-2")) {
        iso.stack.update(
            "INSERT INTO stock (tenant_id, sku_id, available, total) VALUES (?, ?, ?, ?)",
            t,
            sku,
            100 + n,
            100 + n);
      }
      assertStatus(
          as(
              t,
              "POST",
              "/coupons",
              "{\"couponId\":\"cp-1\",\"userId\":\"u-"
                  + t
                  + "\",\"validUntil\":\""
                  + Instant.now().plusSeconds(86_400)
                  + "\"}"),
          201);
      place(t, ORDER_1, n * 100 + 1, "cp-1", "[" + item("sku-1", 1) + "," + item("sku-2", 1) + "]");
      place(t, ORDER_2, n * 100 + 2, null, "[" + item("sku-1", 2) + "]");
      place(t, ORDER_3, n * 100 + 3, null, "[" + item("sku-2", 3) + "]");
    }
    place("t01", T01_ONLY, 199, null, "[" + item("sku-1", 1) + "]");
    iso.relay();
    iso.consume(); // the placements' events, so a later consumer step reads only its own
    assertSeededApart(snapshot());
  }

  /**
   * Each tenant holds its own rows and timers only: 3 orders, 2 SKUs, 1 coupon (t01 one order
   * more), 3 payment timers and 1 coupon timer under its own keys; nothing is the default tenant's
   * or no known tenant's.
   */
  private static void assertSeededApart(Snapshot seeded) {
    for (String t : TENANTS) {
      int orders = t.equals("t01") ? 4 : 3;
      assertThat(seeded.db(t).stream().filter(l -> l.startsWith("orders: ")).count())
          .as("%s's orders", t)
          .isEqualTo(orders);
      assertThat(seeded.db(t).stream().filter(l -> l.startsWith("stock: ")).count()).isEqualTo(2);
      assertThat(seeded.db(t).stream().filter(l -> l.startsWith("coupons: ")).count()).isOne();
      assertThat(seeded.redis(t).stream().filter(l -> l.contains(":timers@" + t)).count())
          .as("%s's timers under its own keys: %s", t, seeded.redis(t))
          .isEqualTo(orders + 1);
      TenantFingerprints.CHECKS.addAndGet(4);
    }
    for (String bystander : List.of("default", TenantFingerprints.UNATTRIBUTED)) {
      assertThat(seeded.db(bystander)).as("%s's rows", bystander).isEmpty();
      assertThat(seeded.redis(bystander)).as("%s's Redis", bystander).isEmpty();
      TenantFingerprints.CHECKS.addAndGet(2);
    }
  }

  @AfterEach
  void checkInvariantsAndClose() {
    try {
      iso.stack.assertInvariants();
      // every request the test sent and every answer is as docs/reference/openapi.yaml says
      assertThat(iso.exchanged()).isPositive();
      assertThat(iso.conformance()).as("exchanges that differ from openapi.yaml").isEmpty();
      CONTRACT_CHECKS.addAndGet(iso.exchanged());
    } finally {
      iso.close();
    }
  }

  static List<String> tenantsAndDefault() {
    List<String> all = new java.util.ArrayList<>(TENANTS);
    all.add("default");
    return all;
  }

  static String item(String sku, int quantity) {
    return "{\"skuId\":\"" + sku + "\",\"quantity\":" + quantity + "}";
  }

  void place(String tenant, String orderId, long amountFen, String coupon, String items) {
    place(tenant, orderId, amountFen, coupon, items, 900);
  }

  void place(
      String tenant, String orderId, long amountFen, String coupon, String items, int timeout) {
    APIGatewayV2HTTPResponse r =
        as(
            tenant,
            "POST",
            "/orders",
            "{\"orderId\":\""
                + orderId
                + "\",\"userId\":\"u-"
                + tenant
                + "\",\"items\":"
                + items
                + (coupon == null ? "" : ",\"couponId\":\"" + coupon + "\"")
                + ",\"amountFen\":"
                + amountFen
                + ",\"timeoutSeconds\":"
                + timeout
                + "}");
    assertStatus(r, 201);
  }

  /** A request by tenant's own caller, naming it in X-Tenant-Id. */
  APIGatewayV2HTTPResponse as(String tenant, String method, String path, String body) {
    return iso.http(IsolationStack.caller(tenant), tenant, method, path, body);
  }

  WeChatPaySimulator merchant(String tenant) {
    return merchants.of(tenant);
  }

  static void assertStatus(APIGatewayV2HTTPResponse r, int status) {
    assertThat(r.getStatusCode()).as(r.getBody()).isEqualTo(status);
  }

  static JsonNode json(APIGatewayV2HTTPResponse r) throws Exception {
    return Json.MAPPER.readTree(r.getBody());
  }

  /** Relays the outbox (so events of earlier steps are on the stream), then fingerprints. */
  Snapshot snapshot() {
    iso.relay();
    return fingerprints.take();
  }

  /** The step changed exactly {@code actors}' rows or keys, and no other tenant's. */
  Snapshot assertOnly(String step, Snapshot before, String... actors) {
    Snapshot after = snapshot();
    TenantFingerprints.assertOnly(step, before, after, fingerprints.buckets(), Set.of(actors));
    return after;
  }

  /**
   * Whether {@code snapshot} holds a timer of {@code tenant}'s under its own key: {@code label} is
   * the kind's ("receipt", "coupon"; null for the payment timeout), {@code member} e.g. "r:id".
   */
  static boolean hasTimer(Snapshot snapshot, String tenant, String label, String member) {
    String key = ":timers@" + tenant + (label == null ? "" : ":" + label);
    return snapshot.redis(tenant).stream()
        .map(l -> l.split(" "))
        .anyMatch(f -> f.length == 3 && f[0].endsWith(key) && f[1].equals(member));
  }

  /** One row of a tenant's, as text (columns joined with '|'). */
  String row(String tenant, String columns, String table, String orderId) {
    List<String> rows =
        iso.stack.dump(
            "SELECT "
                + columns
                + " FROM "
                + table
                + " WHERE tenant_id = '"
                + tenant
                + "' AND order_id = '"
                + orderId
                + "'");
    assertThat(rows).as("%s's %s %s", tenant, table, orderId).hasSize(1);
    return rows.get(0);
  }

  /** A tenant's SKU as available|reserved|sold|. */
  String stock(String tenant, String sku) {
    return iso.stack
        .dump(
            "SELECT available, reserved, sold FROM stock WHERE tenant_id = '"
                + tenant
                + "' AND sku_id = '"
                + sku
                + "'")
        .get(0);
  }
}
