package io.ordertimeout.functions.consumer;

import static org.assertj.core.api.Assertions.assertThat;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.amazonaws.services.lambda.runtime.tests.EventLoader;
import com.fasterxml.jackson.databind.JsonNode;
import io.ordertimeout.aws.Invocation;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.functions.orders.OrderApiHandler;
import io.ordertimeout.stream.EventStream;
import io.ordertimeout.testing.LambdaTestContext;
import io.ordertimeout.testing.LogLines;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.util.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

// alone in its JVM while it runs (the fast tier runs classes in parallel): it captures the root
// logger's lines
@Isolated
class StreamConsumerHandlerTest {
  static final String POST_EVENT = "../../events/order-created-post-orders.json";
  static final String CANCEL_EVENT = "../../events/order-created-cancel-order.json";
  static final String SCHEDULE_EVENT = "../../events/stream-consumer-schedule.json";
  static final String STREAM_CANCEL = "../../events/stream-cancel_requested.json";

  private TestStack stack;
  private OrderApiHandler api;
  private StreamConsumerHandler consumer;

  @BeforeEach
  void setUp() {
    // A failing entry is dead-lettered at its first failure, so one invocation shows it.
    stack =
        TestStack.create(
            "consumer-handler",
            c -> c.toBuilder().stream(c.stream().withMaxDeliveries(1)).build(),
            null);
    stack.seedSku("sku-tea-500g", 10);
    stack.seedSku("sku-cup", 10);
    stack.seedCoupon("cp-welcome-10", "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o");
    api = new OrderApiHandler(stack.app().orderApi());
    consumer = new StreamConsumerHandler(stack.app().relayingConsumer());
  }

  @AfterEach
  void tearDown() {
    stack.close();
  }

  @SuppressWarnings("unchecked")
  private Map<String, Object> scheduleEvent() throws Exception {
    return Json.MAPPER.readValue(Files.readString(Path.of(SCHEDULE_EVENT)), Map.class);
  }

  @Test
  void anInvocationFlushesItsMetricsAsEmfAndLogsUnderItsRequestId() throws Exception {
    List<String> emf = new ArrayList<>();
    Invocation.publishTo(stack.app().metrics(), emf::add);
    api.handleRequest(
        EventLoader.loadApiGatewayHttpEvent(POST_EVENT),
        new LambdaTestContext("order-created", 10_000));
    emf.clear(); // the order API's own flush
    // The sample stream entry of a cancel, and one no consumer can read (dead-lettered).
    var redis = stack.app().redis().sync();
    String key = stack.app().stream().key();
    redis.xadd(key, EventStream.FIELD, Files.readString(Path.of(STREAM_CANCEL)).strip());
    redis.xadd(key, EventStream.FIELD, "{\"v\":1,\"type\":\"cancel_requested\",");
    LambdaTestContext context = new LambdaTestContext("stream-consumer", 1_500);

    String summary;
    List<JsonNode> logs;
    try (LogLines lines = LogLines.capture()) {
      summary = consumer.handleRequest(scheduleEvent(), context);
      logs = lines.json();
    }

    assertThat(Json.MAPPER.readTree(summary).get("deadLettered").asLong()).isOne();
    assertThat(
            stack.dump(
                "SELECT status, close_reason FROM orders WHERE order_id = 'wx20261130000001'"))
        .containsExactly("CLOSED|USER_CANCEL|");
    assertThat(logs)
        .filteredOn(l -> l.get("message").asText().startsWith("stream consumer finished"))
        .singleElement()
        .satisfies(
            l -> {
              assertThat(l.path("requestId").asText()).isEqualTo(context.getAwsRequestId());
              assertThat(l.path("function").asText()).isEqualTo("stream-consumer");
            });
    assertThat(logs)
        .filteredOn(l -> l.get("message").asText().contains("dead-lettered"))
        .singleElement()
        .satisfies(
            l -> assertThat(l.path("requestId").asText()).isEqualTo(context.getAwsRequestId()));
    assertThat(emf).as("EMF documents flushed by the invocation").isNotEmpty();
    JsonNode counts = Json.MAPPER.readTree(emf.get(0));
    assertThat(counts.get("FunctionName").asText()).isEqualTo("stream-consumer");
    assertThat(counts.get("dead_letters").asLong()).isOne();
    assertThat(counts.get("orders_closed_cancel").asLong()).isOne();
    assertThat(counts.get("_aws").get("CloudWatchMetrics").get(0).get("Metrics").toString())
        .contains("\"dead_letters\"");
    stack.assertInvariants();
  }

  @Test
  void aUserCancellationFlowsFromTheApiThroughTheStreamToAClosedOrder() throws Exception {
    APIGatewayV2HTTPResponse placed =
        api.handleRequest(
            EventLoader.loadApiGatewayHttpEvent(POST_EVENT),
            new LambdaTestContext("order-created", 10_000));
    APIGatewayV2HTTPEvent cancelEvent = EventLoader.loadApiGatewayHttpEvent(CANCEL_EVENT);

    APIGatewayV2HTTPResponse cancel =
        api.handleRequest(cancelEvent, new LambdaTestContext("order-created", 10_000));
    String summary =
        consumer.handleRequest(scheduleEvent(), new LambdaTestContext("stream-consumer", 1_500));
    APIGatewayV2HTTPResponse again =
        api.handleRequest(
            EventLoader.loadApiGatewayHttpEvent(CANCEL_EVENT),
            new LambdaTestContext("order-created", 10_000));

    assertThat(placed.getStatusCode()).isEqualTo(201);
    assertThat(cancel.getStatusCode()).isEqualTo(202);
    assertThat(Json.MAPPER.readTree(cancel.getBody()).get("cancel").asText())
        .isEqualTo("REQUESTED");
    JsonNode stats = Json.MAPPER.readTree(summary);
    assertThat(stats.get("closed").asLong()).isEqualTo(1);
    assertThat(stats.get("consumer").asText()).startsWith("c");
    assertThat(
            stack.dump(
                "SELECT status, close_reason FROM orders WHERE order_id = 'wx20261130000001'"))
        .containsExactly("CLOSED|USER_CANCEL|");
    assertThat(stack.dump("SELECT sku_id, available, reserved FROM stock ORDER BY sku_id"))
        .containsExactly("sku-cup|10|0|", "sku-tea-500g|10|0|");
    assertThat(stack.dump("SELECT status, locked_by_order FROM coupons"))
        .containsExactly("AVAILABLE|null|");
    assertThat(again.getStatusCode()).isEqualTo(200);
    assertThat(Json.MAPPER.readTree(again.getBody()).get("status").asText()).isEqualTo("CLOSED");
    assertThat(stack.app().timers().deadlineOf(TenantIds.DEFAULT, "wx20261130000001")).isEmpty();
    var redis = stack.app().redis().sync();
    String key = stack.app().stream().key();
    // created, cancel_requested, closed; all acknowledged by the group
    assertThat(redis.xlen(key)).isEqualTo(3);
    assertThat(redis.xpending(key, EventStream.GROUP).getCount()).isZero();
    stack.assertInvariants();
  }
}
