package io.ordertimeout.functions.sweep;

import static org.assertj.core.api.Assertions.assertThat;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.amazonaws.services.lambda.runtime.tests.EventLoader;
import com.fasterxml.jackson.databind.JsonNode;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.functions.orders.OrderApiHandler;
import io.ordertimeout.testing.LambdaTestContext;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.util.Json;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The happy path through both handlers with the sample events: placed, then closed at its deadline.
 */
class TimeoutSweepHandlerTest {
  private TestStack stack;

  @BeforeEach
  void setUp() {
    stack = TestStack.create("sweep-e2e");
    stack.seedSku("sku-tea-500g", 10);
    stack.seedSku("sku-cup", 10);
    stack.seedCoupon("cp-welcome-10", "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o");
  }

  @AfterEach
  void tearDown() {
    stack.assertInvariants();
    stack.close();
  }

  @Test
  @SuppressWarnings("unchecked")
  void anOrderPlacedThroughTheApiIsClosedByTheSweepAtItsDeadline() throws Exception {
    APIGatewayV2HTTPEvent post =
        EventLoader.loadApiGatewayHttpEvent("../../events/order-created-post-orders.json");
    JsonNode body = Json.MAPPER.readTree(post.getBody());
    ((com.fasterxml.jackson.databind.node.ObjectNode) body).put("timeoutSeconds", 1);
    post.setBody(Json.write(body));
    APIGatewayV2HTTPResponse placed =
        new OrderApiHandler(stack.app().orderApi())
            .handleRequest(post, new LambdaTestContext("order-created", 5_000));
    assertThat(placed.getStatusCode()).isEqualTo(201);
    Map<String, Object> schedule =
        Json.MAPPER.readValue(
            new java.io.File("../../events/timeout-sweep-schedule.json"), Map.class);

    String summary =
        new TimeoutSweepHandler(stack.app().sweepJob())
            .handleRequest(schedule, new LambdaTestContext("timeout-sweep", 2_500));

    assertThat(Json.MAPPER.readTree(summary).get("closed").asLong()).isEqualTo(1);
    assertThat(stack.dump("SELECT status, close_reason FROM orders"))
        .containsExactly("CLOSED|TIMEOUT|");
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE closed_at >= expire_at"))
        .isEqualTo(1);
    assertThat(stack.dump("SELECT sku_id, available, reserved, sold FROM stock ORDER BY sku_id"))
        .containsExactly("sku-cup|10|0|0|", "sku-tea-500g|10|0|0|");
    assertThat(stack.dump("SELECT status, locked_by_order FROM coupons"))
        .containsExactly("AVAILABLE|null|");
    assertThat(stack.count("SELECT COUNT(*) FROM stock_movements WHERE kind = 'RELEASE'"))
        .isEqualTo(2);
    assertThat(stack.app().timers().size(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT)).isZero();
  }
}
