package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.embedded.wechat.Delivery;
import io.ordertimeout.embedded.wechat.SignedNotification;
import io.ordertimeout.redis.TimerIndex;
import io.ordertimeout.testing.Await;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./local tenant} end to end: the local stack as {@code ./local up} starts it, with
 * OTC_TENANT_PRINCIPALS mapping its caller to {@code default} and {@code shop-a}; the command run
 * through the same code as from the shell; the tenants and stock rows read back from MariaDB, and
 * the onboarded tenant's orders placed, read, prepaid and paid over the HTTP API (the simulator
 * posting the payment's notification to the tenant's own notify URL).
 */
class TenantCommandTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String PRINCIPALS =
      "{\"" + PayloadV2.LOCAL_CALLER + "\":[\"default\",\"shop-a\"]}";

  @TempDir static Path dir;
  static LocalStack stack;
  static Path endpoints;

  private final HttpClient http = HttpClient.newHttpClient();

  record Run(int exit, String out, String err) {
    JsonNode json() throws Exception {
      return JSON.readTree(out);
    }
  }

  @BeforeAll
  static void start() {
    Map<String, String> env = new HashMap<>(System.getenv());
    env.put("OTC_TENANT_PRINCIPALS", PRINCIPALS);
    stack = LocalStack.start(new LocalStack.Options(Main.templatePath(), "127.0.0.1", 0, 1.0), env);
    endpoints = dir.resolve("local-up.json");
    stack.endpoints().write(endpoints);
  }

  @AfterAll
  static void stop() {
    stack.close();
  }

  @Test
  void addOnboardsATenantWhoseOrdersArePlacedReadPrepaidAndPaidAndASecondRunChangesNothing()
      throws Exception {
    // mapped to the caller but not onboarded: no row in tenants, so no order
    HttpResponse<String> early = place("shop-a", "onb-a-000000", "tea-500g", 1);
    assertThat(early.statusCode()).as(early.body()).isEqualTo(400);
    assertThat(early.body()).contains("UNKNOWN_TENANT");

    Run first = tenant("add", "shop-a", "--sku", "tea-500g=100", "--sku", "cup=7");

    assertThat(first.exit()).as(first.err()).isZero();
    assertThat(first.out())
        .contains("tenant    shop-a: added (tenants row)")
        .contains("stock     tea-500g: added, available 100, reserved 0, sold 0")
        .contains("stock     cup: added, available 7, reserved 0, sold 0")
        .contains("notify    " + stack.apiUrl() + "/wechatpay/notify/shop-a")
        .contains("may act for shop-a: send X-Tenant-Id: shop-a")
        .contains(
            "mapping   OTC_TENANT_PRINCIPALS='{\""
                + PayloadV2.LOCAL_CALLER
                + "\":[\"default\",\"shop-a\"]}'")
        .endsWith("done: shop-a onboarded\n");
    assertThat(tenantRow("shop-a")).isTrue();
    assertThat(stock("shop-a")).containsExactly("cup 7 0 0 7", "tea-500g 100 0 0 100");

    // the tenant's order: placed, read back, refused to the default tenant, its stock reserved
    HttpResponse<String> placed = place("shop-a", "onb-a-000001", "tea-500g", 2);
    assertThat(placed.statusCode()).as(placed.body()).isEqualTo(201);
    HttpResponse<String> read = call("GET", "/orders/onb-a-000001", "shop-a", null);
    assertThat(read.statusCode()).as(read.body()).isEqualTo(200);
    assertThat(JSON.readTree(read.body()).path("tenantId").asText()).isEqualTo("shop-a");
    assertThat(JSON.readTree(read.body()).path("status").asText()).isEqualTo("UNPAID");
    assertThat(call("GET", "/orders/onb-a-000001", "default", null).statusCode()).isEqualTo(404);
    // its timer: in the tenant's own key of the order's shard, scored with its deadline
    TimerIndex timers = stack.app().timers();
    String key =
        timers.timersKey("shop-a", timers.shardOf("onb-a-000001"), DeadlineKind.PAYMENT_TIMEOUT);
    assertThat(key).endsWith("}:timers@shop-a");
    assertThat(stack.app().redis().sync().zscore(key, "onb-a-000001"))
        .isEqualTo(
            (double)
                Instant.parse(JSON.readTree(read.body()).path("expireAt").asText()).toEpochMilli());
    assertThat(timers.deadlineOf("default", "onb-a-000001")).isEmpty();
    assertThat(stock("shop-a")).containsExactly("cup 7 0 0 7", "tea-500g 98 2 0 100");

    // its merchant account: prepay sends WeChat the tenant's own notify URL, the payer pays, and
    // the simulator's notification, posted there as WeChat posts it, is verified with the
    // account's keys and pays the order at the first attempt
    HttpResponse<String> prepaid =
        call("POST", "/orders/onb-a-000001/prepay", "shop-a", "{\"openId\":\"oUpF8uMuAJO_onb\"}");
    assertThat(prepaid.statusCode()).as(prepaid.body()).isEqualTo(200);
    assertThat(stack.simulator().notifyUrl("onb-a-000001"))
        .contains(stack.apiUrl() + "/wechatpay/notify/shop-a");
    stack.simulator().pay("onb-a-000001");
    Await.until(
        "order onb-a-000001 of shop-a PAID",
        () -> orderStatus("shop-a", "onb-a-000001"),
        "PAID"::equals);
    // the simulator records an attempt once the webhook's answer is back, after the commit
    List<Integer> answers =
        Await.until(
            "the simulator's record of its notification of onb-a-000001",
            () ->
                stack.simulator().deliveries().stream()
                    .filter(d -> d.outTradeNo().equals("onb-a-000001"))
                    .map(Delivery::status)
                    .toList(),
            list -> !list.isEmpty());
    assertThat(answers).containsExactly(204);
    // a tenant that was not onboarded has no merchant here: its URL answers as a bad signature
    SignedNotification copy = stack.simulator().notification("onb-a-000001").build();
    assertThat(notify("/wechatpay/notify/shop-zz", copy)).isEqualTo(401);

    List<String> tenantsBefore = tenants();
    List<String> stockBefore = stock("shop-a");
    Run second = tenant("add", "shop-a", "--sku", "tea-500g=100", "--sku", "cup=50");

    assertThat(second.exit()).as(second.err()).isZero();
    assertThat(second.out())
        .contains("tenant    shop-a: already there, unchanged")
        .contains("stock     tea-500g: already there, unchanged: available 98, reserved 0, sold 2")
        .contains(
            "stock     cup: already there, unchanged: available 7, reserved 0, sold 0 (asked 50;")
        .contains("merchant  shop-a: mchid 1900000109, already there, unchanged")
        .endsWith("nothing changed: shop-a was onboarded already\n");
    assertThat(tenants()).isEqualTo(tenantsBefore);
    assertThat(stock("shop-a")).isEqualTo(stockBefore);
  }

  @Test
  void aTenantTheCallerIsNotMappedToIsOnboardedAndTheLinePrintedIsTheMappingItNeeds()
      throws Exception {
    Run run = tenant("add", "shop-b", "--sku", "tea-500g=5");

    assertThat(run.exit()).as(run.err()).isZero();
    assertThat(run.out())
        .contains("may NOT act for shop-b")
        .contains(
            "mapping   OTC_TENANT_PRINCIPALS='{\""
                + PayloadV2.LOCAL_CALLER
                + "\":[\"default\",\"shop-a\",\"shop-b\"]}'");
    assertThat(tenantRow("shop-b")).isTrue();
    assertThat(stock("shop-b")).containsExactly("tea-500g 5 0 0 5");
    // OTC_TENANT_PRINCIPALS is read at start: this stack's caller still may not act for shop-b
    HttpResponse<String> placed = place("shop-b", "onb-b-000001", "tea-500g", 1);
    assertThat(placed.statusCode()).isEqualTo(403);
    assertThat(placed.body()).contains("TENANT_NOT_ALLOWED");
    assertThat(stock("shop-b")).containsExactly("tea-500g 5 0 0 5");
  }

  @Test
  void badInputIsRefusedWithItsReasonAndChangesNothing() throws Exception {
    List<String> tenantsBefore = tenants();
    Map<List<String>, String> cases = new java.util.LinkedHashMap<>();
    cases.put(List.of("add", "Shop-C"), "invalid tenant id 'Shop-C': 1 to 32 of [a-z0-9_-]");
    cases.put(List.of("add", "shop/c"), "invalid tenant id 'shop/c'");
    cases.put(List.of("add", "a".repeat(33)), "invalid tenant id '" + "a".repeat(33) + "'");
    cases.put(List.of("add"), "tenant add needs a tenant id");
    cases.put(List.of("add", "shop-c", "shop-d"), "one tenant per command");
    cases.put(List.of("add", "shop-c", "--sku", "cup"), "--sku cup: expected SKU=QTY");
    cases.put(List.of("add", "shop-c", "--sku"), "--sku needs a value SKU=QTY");
    cases.put(
        List.of("add", "shop-c", "--sku", "cup=ten"),
        "--sku cup=ten: the quantity must be a whole number");
    cases.put(List.of("add", "shop-c", "--sku", "cup=-1"), "stock of SKU cup must be 0..");
    cases.put(List.of("add", "shop-c", "--sku", "c up=1"), "invalid SKU id 'c up'");
    cases.put(
        List.of("add", "shop-c", "--sku", "cup=1", "--sku", "cup=2"), "SKU cup is given twice");
    cases.put(List.of("add", "shop-c", "--stock", "cup=1"), "unknown flag --stock");
    cases.put(List.of("list", "shop-c"), "list takes no arguments");
    cases.put(List.of("remove", "shop-c"), "unknown operation 'remove'");

    cases.forEach(
        (words, reason) -> {
          Run run = tenant(words.toArray(String[]::new));
          assertThat(run.exit()).as("%s", words).isEqualTo(2);
          assertThat(run.err()).as("%s", words).startsWith("./local tenant: ").contains(reason);
          assertThat(run.out()).as("%s", words).isEmpty();
        });
    // the stack checks what it is sent as well, whoever sends it
    HttpResponse<String> raw =
        call(
            "POST",
            LocalTenants.PATH,
            null,
            "{\"tenantId\":\"shop-c\",\"stock\":{\"cup\":1,\"bad sku\":2}}");
    assertThat(raw.statusCode()).isEqualTo(400);
    assertThat(raw.body()).contains("INVALID_REQUEST").contains("invalid SKU id 'bad sku'");

    assertThat(tenants()).isEqualTo(tenantsBefore).doesNotContain("shop-c", "shop-d");
    assertThat(stock("shop-c")).isEmpty();
  }

  @Test
  void listShowsEveryTenantWithItsStockMerchantAndWhetherTheCallerMayActForIt() throws Exception {
    assertThat(tenant("add", "shop-l", "--sku", "a=3", "--sku", "b=4").exit()).isZero();

    Run json = tenant("list", "--json");
    Run table = tenant("list");

    assertThat(json.exit()).as(json.err()).isZero();
    JsonNode shop = null;
    List<String> ids = new ArrayList<>();
    for (JsonNode t : json.json().path("tenants")) {
      ids.add(t.path("tenantId").asText());
      if (t.path("tenantId").asText().equals("shop-l")) {
        shop = t;
      }
    }
    assertThat(ids).contains("default", "shop-l").isSorted();
    assertThat(shop).isNotNull();
    assertThat(shop.path("skus").asLong()).isEqualTo(2);
    assertThat(shop.path("available").asLong()).isEqualTo(7);
    assertThat(shop.path("mchid").asText()).isEqualTo(stack.simulator().mchid());
    assertThat(shop.path("callerMayAct").asBoolean()).isFalse();
    assertThat(shop.path("notifyUrl").asText())
        .isEqualTo(stack.apiUrl() + "/wechatpay/notify/shop-l");
    assertThat(table.exit()).isZero();
    assertThat(table.out())
        .containsPattern(
            "(?m)^default +\\d+ +\\d+ 1900000109 +yes +" + stack.apiUrl() + "/wechatpay/notify$")
        .containsPattern(
            "(?m)^shop-l +2 +7 1900000109 +no +" + stack.apiUrl() + "/wechatpay/notify/shop-l$");
  }

  @Test
  void withoutARunningStackItSaysHowToStartOne() {
    Run run = new TenantRunner(dir.resolve("absent.json")).run("list");

    assertThat(run.exit()).isEqualTo(1);
    assertThat(run.err()).contains("no running ./local up found").contains("start ./local up");
  }

  // ---- helpers ----

  private static Run tenant(String... words) {
    return new TenantRunner(endpoints).run(words);
  }

  private record TenantRunner(Path file) {
    Run run(String... words) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      int exit =
          new TenantCommand(file)
              .run(
                  List.of(words),
                  new PrintStream(out, true, StandardCharsets.UTF_8),
                  new PrintStream(err, true, StandardCharsets.UTF_8));
      return new Run(
          exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }
  }

  private HttpResponse<String> place(String tenant, String orderId, String sku, int quantity)
      throws Exception {
    String order =
        "{\"orderId\":\""
            + orderId
            + "\",\"userId\":\"user-onb\",\"items\":[{\"skuId\":\""
            + sku
            + "\",\"quantity\":"
            + quantity
            + "}],\"amountFen\":1000,\"timeoutSeconds\":600}";
    return call("POST", "/orders", tenant, order);
  }

  private HttpResponse<String> call(String method, String path, String tenant, String body)
      throws Exception {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(stack.apiUrl() + path))
            .header("content-type", "application/json")
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body));
    if (tenant != null) {
      request.header("X-Tenant-Id", tenant);
    }
    HttpRequest sent = request.build();
    HttpResponse<String> response = http.send(sent, HttpResponse.BodyHandlers.ofString());
    // every exchange is as docs/reference/openapi.yaml says
    assertThat(ContractTest.conformance(sent, body, response))
        .as(method + " " + path + " -> " + response.statusCode() + " " + response.body())
        .isEmpty();
    return response;
  }

  private int notify(String path, SignedNotification notification) throws Exception {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(stack.apiUrl() + path))
            .header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(notification.body()));
    notification.headers().forEach(request::header);
    HttpRequest sent = request.build();
    HttpResponse<String> response = http.send(sent, HttpResponse.BodyHandlers.ofString());
    assertThat(ContractTest.conformance(sent, notification.body(), response))
        .as("POST " + path + " -> " + response.statusCode() + " " + response.body())
        .isEmpty();
    return response.statusCode();
  }

  private static boolean tenantRow(String tenantId) throws Exception {
    return !rows("SELECT tenant_id FROM tenants WHERE tenant_id = ?", tenantId).isEmpty();
  }

  private static List<String> tenants() throws Exception {
    return rows("SELECT tenant_id FROM tenants WHERE ? = ? ORDER BY tenant_id", "x", "x");
  }

  /** "sku available reserved sold total" of each of the tenant's SKUs, in SKU order. */
  private static List<String> stock(String tenantId) throws Exception {
    return rows(
        "SELECT CONCAT_WS(' ', sku_id, available, reserved, sold, total) FROM stock"
            + " WHERE tenant_id = ? ORDER BY sku_id",
        tenantId);
  }

  private static String orderStatus(String tenantId, String orderId) throws Exception {
    List<String> status =
        rows("SELECT status FROM orders WHERE tenant_id = ? AND order_id = ?", tenantId, orderId);
    assertThat(status).hasSize(1);
    return status.get(0);
  }

  private static List<String> rows(String sql, String... args) throws Exception {
    List<String> out = new ArrayList<>();
    try (Connection c = stack.app().dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setString(i + 1, args[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(rs.getString(1));
        }
      }
    }
    return out;
  }
}
