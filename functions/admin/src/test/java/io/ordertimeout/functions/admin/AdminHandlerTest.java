package io.ordertimeout.functions.admin;

import static org.assertj.core.api.Assertions.assertThat;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.amazonaws.services.lambda.runtime.tests.EventLoader;
import com.fasterxml.jackson.databind.JsonNode;
import io.ordertimeout.admin.AdminOps;
import io.ordertimeout.compensation.CompensationSettings;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
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
  private TestStack stack;
  private AdminHandler handler;

  @BeforeEach
  void setUp() {
    stack = TestStack.create("admin-fn");
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
    TestStack down = TestStack.create("admin-fn-down");
    AdminHandler onClosedPool =
        new AdminHandler(down.app().adminRoutes(CompensationSettings.defaults()));
    down.close(); // the pool is closed: every query fails as the database being away would
    AdminHandler broken =
        new AdminHandler(
            new AdminRoutes(new AdminOps(null, null, null, null, null, null, new Metrics())));

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
