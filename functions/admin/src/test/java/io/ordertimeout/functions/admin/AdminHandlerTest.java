package io.ordertimeout.functions.admin;

import static org.assertj.core.api.Assertions.assertThat;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.amazonaws.services.lambda.runtime.tests.EventLoader;
import com.fasterxml.jackson.databind.JsonNode;
import io.ordertimeout.admin.AdminOps;
import io.ordertimeout.compensation.CompensationSettings;
import io.ordertimeout.config.AdminSettings;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.PlaceOrderCommand;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.http.AdminAccess;
import io.ordertimeout.http.AdminRoutes;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.stream.DeadLetters.DeadLetter;
import io.ordertimeout.stream.EventType;
import io.ordertimeout.stream.OrderEvent;
import io.ordertimeout.testing.LambdaTestContext;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.util.Json;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The admin routes through the handler with the sample events, on the real servers. */
class AdminHandlerTest {
  static final String ORDER = "wx20261130000001";

  /** The sample events' caller, mapped to every tenant. */
  static final String ONCALL = "arn:aws:iam::123456789012:user/oncall";

  static final String SHOP_A_SUPPORT = "arn:aws:iam::123456789012:role/shop-a-support";

  /** The on-call engineer for everything, shop-a's support role (and its sessions) for shop-a. */
  static final AdminSettings OPERATORS =
      AdminSettings.parse("{\"" + ONCALL + "\":[\"*\"],\"" + SHOP_A_SUPPORT + "\":[\"shop-a\"]}");

  private TestStack stack;
  private AdminHandler handler;

  @BeforeEach
  void setUp() {
    stack = TestStack.create("admin-fn", c -> c.toBuilder().admins(OPERATORS).build(), null);
    stack.seedSku("sku-tea-500g", 10);
    handler = new AdminHandler(stack.app().adminRoutes(CompensationSettings.defaults()));
  }

  @AfterEach
  void tearDown() {
    stack.assertInvariants();
    stack.close();
  }

  @Test
  void forceCloseAndStoryAnswerJsonAndTheCloseIsInTheRows() throws Exception {
    stack.place(ORDER, "u1", 900, null, new OrderItem("sku-tea-500g", 2));

    APIGatewayV2HTTPResponse closed = call(event("admin-force-close.json"));
    APIGatewayV2HTTPEvent story = event("admin-order-story.json");
    APIGatewayV2HTTPResponse told = call(story);

    assertThat(closed.getStatusCode()).isEqualTo(200);
    assertThat(body(closed).path("outcome").asText()).isEqualTo("CLOSED");
    assertThat(stack.dump("SELECT status, close_reason FROM orders"))
        .containsExactly("CLOSED|OPERATOR|");
    assertThat(told.getStatusCode()).isEqualTo(200);
    JsonNode json = body(told);
    assertThat(json.at("/order/status").asText()).isEqualTo("CLOSED");
    assertThat(json.at("/ledger/1/kind").asText()).isEqualTo("RELEASE");
    assertThat(json.at("/adminActions/0/operator").asText())
        .isEqualTo("arn:aws:iam::123456789012:user/oncall");
    assertThat(json.at("/adminActions/0/reason").asText()).contains("CS-4711");
    assertThat(json.at("/timer/state").asText()).isEqualTo("ABSENT");
    assertThat(json.at("/wechat/error").asText()).contains("not configured");
  }

  @Test
  void refusedRequestsAnswer4xxWithACodeAndChangeNothing() throws Exception {
    stack.place(ORDER, "u1", 900, null, new OrderItem("sku-tea-500g", 1));
    List<String> before = stack.databaseState();

    APIGatewayV2HTTPEvent noReason = event("admin-force-close.json");
    noReason.setBody("{}");
    APIGatewayV2HTTPEvent notJson = event("admin-force-close.json");
    notJson.setBody("reason=because");
    APIGatewayV2HTTPEvent unknown = event("admin-force-close.json");
    unknown.setPathParameters(Map.of("id", "nosuch-00001"));
    APIGatewayV2HTTPEvent unsigned = event("admin-force-close.json");
    unsigned.getRequestContext().setAuthorizer(null);
    APIGatewayV2HTTPEvent route = event("admin-order-story.json");
    route.setRouteKey("DELETE /admin/orders/{id}");
    APIGatewayV2HTTPEvent badRedrive = event("admin-redrive-dead-letters.json");
    badRedrive.setBody("{\"ids\":[1],\"all\":true}");
    APIGatewayV2HTTPEvent badJob = event("admin-pause.json");
    badJob.setBody("{\"job\":\"everything\",\"reason\":\"x\"}");

    assertRefused(noReason, 400, "MISSING_REASON");
    assertRefused(notJson, 400, "INVALID_JSON");
    assertRefused(unknown, 404, "NOT_FOUND");
    assertRefused(unsigned, 400, "NO_IAM_CALLER");
    assertRefused(route, 404, "ROUTE_NOT_FOUND");
    assertRefused(badRedrive, 400, "INVALID_REDRIVE");
    assertRefused(badJob, 400, "INVALID_JOB");
    assertThat(stack.databaseState()).isEqualTo(before);
    assertThat(stack.count("SELECT COUNT(*) FROM admin_actions")).isZero();
    assertThat(stack.count("SELECT COUNT(*) FROM job_pauses")).isZero();
  }

  @Test
  void redriveByFilterAndPauseRoutesWriteTheirRows() throws Exception {
    stack
        .app()
        .deadLetters()
        .store(
            new DeadLetter(
                "1-0",
                "close_due",
                TenantIds.DEFAULT,
                ORDER,
                Map.of("e", OrderEvent.of(EventType.CLOSE_DUE, ORDER, "default", 1L).toJson()),
                5,
                List.of("boom")));

    APIGatewayV2HTTPResponse redriven = call(event("admin-redrive-dead-letters.json"));
    APIGatewayV2HTTPResponse paused = call(event("admin-pause.json"));

    assertThat(redriven.getStatusCode()).isEqualTo(200);
    assertThat(body(redriven).findValue("outcome").asText()).isEqualTo("REDRIVEN");
    assertThat(stack.dump("SELECT resolution FROM dead_letters")).containsExactly("REDRIVEN|");
    assertThat(paused.getStatusCode()).isEqualTo(200);
    assertThat(body(paused).at("/sweep/reason").asText()).contains("INC-42");
    assertThat(body(paused).at("/consumer").asText()).isEqualTo("running");
    assertThat(stack.dump("SELECT job FROM job_pauses")).containsExactly("sweep|");
  }

  @Test
  void compensationNowAnswersItsReport() throws Exception {
    APIGatewayV2HTTPEvent run = event("admin-pause.json");
    run.setRouteKey("POST /admin/compensation");
    run.setBody(null);

    APIGatewayV2HTTPResponse report = call(run);

    assertThat(report.getStatusCode()).isEqualTo(200);
    assertThat(body(report).path("failures").isArray()).isTrue();
    assertThat(body(report).has("counts")).isTrue();
    assertThat(stack.dump("SELECT action, subject FROM admin_actions"))
        .containsExactly("compensate|compensation|");
  }

  @Test
  void aDatabaseOutageAnswers503AndAnUnexpectedFailure500WithTheRequestId() throws Exception {
    TestStack down =
        TestStack.create("admin-fn-down", c -> c.toBuilder().admins(OPERATORS).build(), null);
    AdminHandler onClosedPool =
        new AdminHandler(down.app().adminRoutes(CompensationSettings.defaults()));
    down.close(); // the pool is closed: every query fails as the database being away would
    AdminHandler broken =
        new AdminHandler(
            new AdminRoutes(
                new AdminOps(null, null, null, null, null, null, new Metrics()),
                new AdminAccess(OPERATORS)));

    APIGatewayV2HTTPResponse unavailable =
        onClosedPool.handleRequest(
            event("admin-order-story.json"), new LambdaTestContext("admin", 29_000));
    APIGatewayV2HTTPResponse internal =
        broken.handleRequest(
            event("admin-order-story.json"), new LambdaTestContext("admin", 29_000));

    assertThat(unavailable.getStatusCode()).isEqualTo(503);
    assertThat(body(unavailable).at("/error/code").asText()).isEqualTo("UNAVAILABLE");
    assertThat(internal.getStatusCode()).isEqualTo(500);
    assertThat(body(internal).at("/error/message").asText()).startsWith("internal error; request ");
  }

  @Test
  void anOperatorOfShopAForceClosingShopBsOrderIs403AndNothingChanges() throws Exception {
    for (String t : List.of("shop-a", "shop-b")) {
      stack.app().tenants().onboard(t);
      stack.update(
          "INSERT INTO stock (tenant_id, sku_id, available, total) VALUES (?, 'sku-1', 5, 5)", t);
      stack
          .app()
          .placeOrders()
          .place(
              new PlaceOrderCommand(
                  ORDER, t, "u1", List.of(new OrderItem("sku-1", 1)), null, 100, 900));
    }
    List<String> rows = stack.databaseState();
    List<String> keys = stack.redisState();

    APIGatewayV2HTTPResponse foreign = call(asShopA(forceClose("shop-b")));
    APIGatewayV2HTTPResponse foreignStory = call(asShopA(story("shop-b")));
    APIGatewayV2HTTPResponse defaultTenant = call(asShopA(event("admin-force-close.json")));
    // disowning a trade decides between two tenants' orders: "*" only, even for its own tenant
    APIGatewayV2HTTPEvent disown = asShopA(forceClose("shop-a"));
    disown.setBody("{\"reason\":\"the trade is shop-b's\",\"disownTrade\":true}");
    APIGatewayV2HTTPEvent badDisown = forceClose("shop-a");
    badDisown.setBody("{\"reason\":\"r\",\"disownTrade\":\"yes\"}");

    assertRefused(foreign, 403, "ADMIN_NOT_ALLOWED");
    assertRefused(foreignStory, 403, "ADMIN_NOT_ALLOWED");
    assertRefused(defaultTenant, 403, "ADMIN_NOT_ALLOWED");
    assertRefused(call(disown), 403, "ADMIN_NOT_ALLOWED");
    assertRefused(call(badDisown), 400, "INVALID_DISOWN");
    assertThat(stack.databaseState()).isEqualTo(rows);
    assertThat(stack.redisState()).isEqualTo(keys);
    assertThat(stack.count("SELECT COUNT(*) FROM admin_actions")).isZero();

    // its own tenant: closed, by the session's ARN; shop-b's order of the same id stays UNPAID
    APIGatewayV2HTTPResponse own = call(asShopA(forceClose("shop-a")));
    assertThat(own.getStatusCode()).as(own.getBody()).isEqualTo(200);
    assertThat(stack.dump("SELECT tenant_id, status FROM orders ORDER BY tenant_id"))
        .containsExactly("shop-a|CLOSED|", "shop-b|UNPAID|");
  }

  @Test
  void anUnmappedCallerIsRefusedEveryRouteBeforeItsBody() throws Exception {
    List<String> before = stack.databaseState();
    for (String file :
        List.of(
            "admin-force-close.json",
            "admin-order-story.json",
            "admin-pause.json",
            "admin-redrive-dead-letters.json")) {
      APIGatewayV2HTTPEvent stranger = event(file);
      stranger
          .getRequestContext()
          .getAuthorizer()
          .getIam()
          .setUserArn("arn:aws:sts::123456789012:assumed-role/PowerUser/alice");
      // not JSON: the refusal comes before the body is read
      stranger.setBody("not json");
      assertRefused(call(stranger), 403, "ADMIN_NOT_MAPPED");
    }
    assertThat(stack.databaseState()).isEqualTo(before);
    assertThat(stack.count("SELECT COUNT(*) FROM admin_actions")).isZero();
  }

  @Test
  void globalOperationsNeedTheStarAndTheStarMayPause() throws Exception {
    APIGatewayV2HTTPEvent compensate = asShopA(event("admin-pause.json"));
    compensate.setRouteKey("POST /admin/compensation");
    APIGatewayV2HTTPEvent redriveAll = asShopA(event("admin-redrive-dead-letters.json"));
    redriveAll.setBody("{\"all\":true}");
    APIGatewayV2HTTPEvent listAll = asShopA(event("admin-order-story.json"));
    listAll.setRouteKey("GET /admin/dead-letters");
    listAll.setQueryStringParameters(null);
    APIGatewayV2HTTPEvent listOwn = asShopA(event("admin-order-story.json"));
    listOwn.setRouteKey("GET /admin/dead-letters");
    listOwn.setQueryStringParameters(Map.of("tenantId", "shop-a"));
    APIGatewayV2HTTPEvent redriveOwn = asShopA(event("admin-redrive-dead-letters.json"));
    redriveOwn.setBody("{\"filter\":{\"tenantId\":\"shop-a\"}}");
    APIGatewayV2HTTPEvent redriveFilterAll = asShopA(event("admin-redrive-dead-letters.json"));
    redriveFilterAll.setBody("{\"filter\":{\"orderId\":\"x\"}}");

    assertRefused(call(asShopA(event("admin-pause.json"))), 403, "ADMIN_NOT_ALLOWED");
    assertRefused(call(compensate), 403, "ADMIN_NOT_ALLOWED");
    assertRefused(call(redriveAll), 403, "ADMIN_NOT_ALLOWED");
    assertRefused(call(listAll), 403, "ADMIN_NOT_ALLOWED");
    assertRefused(call(redriveFilterAll), 403, "ADMIN_NOT_ALLOWED");
    assertThat(stack.count("SELECT COUNT(*) FROM job_pauses")).isZero();
    assertThat(stack.count("SELECT COUNT(*) FROM admin_actions")).isZero();
    assertThat(call(listOwn).getStatusCode()).isEqualTo(200);
    assertThat(call(redriveOwn).getStatusCode()).isEqualTo(200);

    APIGatewayV2HTTPResponse paused = call(event("admin-pause.json"));
    assertThat(paused.getStatusCode()).as(paused.getBody()).isEqualTo(200);
    assertThat(stack.dump("SELECT job FROM job_pauses")).containsExactly("sweep|");
  }

  @Test
  void withoutAMappingNobodyMayCallTheAdminApi() throws Exception {
    TestStack plain = TestStack.create("admin-fn-nobody");
    try {
      AdminHandler nobody =
          new AdminHandler(plain.app().adminRoutes(CompensationSettings.defaults()));

      APIGatewayV2HTTPResponse pause =
          nobody.handleRequest(event("admin-pause.json"), new LambdaTestContext("admin", 29_000));

      assertRefused(pause, 403, "ADMIN_NOT_MAPPED");
      assertThat(plain.count("SELECT COUNT(*) FROM job_pauses")).isZero();
    } finally {
      plain.close();
    }
  }

  /** The sample event as sent by a session of shop-a's support role. */
  private static APIGatewayV2HTTPEvent asShopA(APIGatewayV2HTTPEvent event) {
    event
        .getRequestContext()
        .getAuthorizer()
        .getIam()
        .setUserArn("arn:aws:sts::123456789012:assumed-role/shop-a-support/bob");
    return event;
  }

  private static APIGatewayV2HTTPEvent forceClose(String tenant) {
    APIGatewayV2HTTPEvent e = event("admin-force-close.json");
    e.setQueryStringParameters(Map.of("tenantId", tenant));
    return e;
  }

  private static APIGatewayV2HTTPEvent story(String tenant) {
    APIGatewayV2HTTPEvent e = event("admin-order-story.json");
    e.setQueryStringParameters(Map.of("tenantId", tenant));
    return e;
  }

  private static void assertRefused(APIGatewayV2HTTPResponse response, int status, String code)
      throws Exception {
    assertThat(response.getStatusCode()).as(response.getBody()).isEqualTo(status);
    assertThat(body(response).at("/error/code").asText()).isEqualTo(code);
  }

  private void assertRefused(APIGatewayV2HTTPEvent event, int status, String code)
      throws Exception {
    APIGatewayV2HTTPResponse response = call(event);
    assertThat(response.getStatusCode()).as(response.getBody()).isEqualTo(status);
    assertThat(body(response).at("/error/code").asText()).isEqualTo(code);
    assertThat(body(response).at("/error/message").asText()).isNotBlank();
  }

  private APIGatewayV2HTTPResponse call(APIGatewayV2HTTPEvent event) {
    return handler.handleRequest(event, new LambdaTestContext("admin", 29_000));
  }

  private static APIGatewayV2HTTPEvent event(String file) {
    return EventLoader.loadApiGatewayHttpEvent("../../events/" + file);
  }

  private static JsonNode body(APIGatewayV2HTTPResponse response) throws Exception {
    return Json.MAPPER.readTree(response.getBody());
  }
}
