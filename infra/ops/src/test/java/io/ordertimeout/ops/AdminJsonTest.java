package io.ordertimeout.ops;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code ./ops admin --json}: camelCase keys throughout, stored documents nested. */
class AdminJsonTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void rowsInSnakeCaseAndPayloadsInStringsBecomeCamelCaseAndNestedObjects() throws IOException {
    JsonNode answer =
        JSON.readTree(
            """
            {"order":{"order_id":"o-1","close_reason":null,"amountFen":1},
             "events":[{"seq":1,"event_type":"created",
                        "payload":"{\\"amountFen\\":1000,\\"user_id\\":\\"u-1\\"}"}],
             "adminActions":[{"reason":"[P1] {see ticket}","outcome":{"outcome":"CLOSED"}}],
             "timer":{"key":"t1:{t3}:timers","sweeper_lease_ttl_ms":-2}}
            """);

    assertThat(JSON.writeValueAsString(AdminJson.machine(answer)))
        .isEqualTo(
            "{\"order\":{\"orderId\":\"o-1\",\"closeReason\":null,\"amountFen\":1},"
                + "\"events\":[{\"seq\":1,\"eventType\":\"created\","
                + "\"payload\":{\"amountFen\":1000,\"userId\":\"u-1\"}}],"
                + "\"adminActions\":[{\"reason\":\"[P1] {see ticket}\","
                + "\"outcome\":{\"outcome\":\"CLOSED\"}}],"
                + "\"timer\":{\"key\":\"t1:{t3}:timers\",\"sweeperLeaseTtlMs\":-2}}");
  }

  @Test
  void aRealStoryHasNoSnakeCaseKeyAndNoPayloadLeftAsText() throws IOException {
    JsonNode story = StoryTimelineTest.story("shipped");

    assertThat(keys(story)).isNotEmpty().noneMatch(k -> k.contains("_"));
    assertThat(story.at("/order/orderId").asText()).isEqualTo("ops-demo-1");
    assertThat(story.at("/order/receiveDueAt").asText()).isEqualTo("2026-12-14T01:57:23.205Z");
    assertThat(story.at("/events/0/payload").isObject()).isTrue();
    assertThat(story.at("/events/0/payload/amountFen").asLong()).isEqualTo(1000);
    assertThat(story.at("/events/2/payload/receiveDueAt").asLong()).isEqualTo(1797213443205L);
    assertThat(story.at("/snapshot/0/snapshot/items/0/skuId").asText()).isEqualTo("sku-0003");
    assertThat(story.at("/timer/sweeperLeaseKey").asText()).isEqualTo("t529acfbf:{t6}:sweeper");
  }

  @Test
  void camelCaseKeepsNamesWithoutUnderscores() {
    assertThat(AdminJson.camelCase("order_id")).isEqualTo("orderId");
    assertThat(AdminJson.camelCase("sweeper_lease_ttl_ms")).isEqualTo("sweeperLeaseTtlMs");
    assertThat(AdminJson.camelCase("orderId")).isEqualTo("orderId");
    assertThat(AdminJson.camelCase("_private")).isEqualTo("private");
  }

  private static List<String> keys(JsonNode node) {
    List<String> out = new ArrayList<>();
    if (node.isObject()) {
      node.fields()
          .forEachRemaining(
              e -> {
                out.add(e.getKey());
                out.addAll(keys(e.getValue()));
              });
    } else if (node.isArray()) {
      node.forEach(n -> out.addAll(keys(n)));
    }
    return out;
  }
}
