package io.ordertimeout.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.payment.PaidTrade;
import io.ordertimeout.testing.TestStack;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.services.eventbridge.EventBridgeClient;

/**
 * The relay to EventBridge through the real SDK, against an endpoint that throttles and refuses.
 */
class EventBridgeRelayTest {
  private TestStack stack;
  private EventBridgeEndpoint bus;
  private EventBridgeClient client;

  @AfterEach
  void tearDown() {
    if (client != null) {
      client.close();
    }
    if (bus != null) {
      bus.close();
    }
    if (stack != null) {
      stack.close();
    }
  }

  private OutboxRelay relay() {
    bus = EventBridgeEndpoint.start();
    client =
        EventBridgeClients.create(
            "us-east-1",
            bus.uri(),
            StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")));
    return stack.app().newRelay(RelaySettings.defaults().withBus("orders-bus"), client);
  }

  /** 20 orders: all created, 7 paid, 7 cancelled and closed: 41 events. */
  private List<String> changes() {
    stack.seedSku("sku-1", 100);
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      String id = String.format("eb-ord-%04d", i);
      ids.add(id);
      stack.place(id, "u" + i, 900, null, new OrderItem("sku-1", 1));
    }
    for (int i = 0; i < 7; i++) {
      stack
          .app()
          .payments()
          .apply(
              new PaidTrade("default", ids.get(i), "tx-" + i, 100, null, PaidTrade.Source.NOTIFY));
      stack.app().cancels().request(TenantIds.DEFAULT, ids.get(19 - i));
    }
    stack.app().closer().close(TenantIds.DEFAULT, ids.subList(13, 20), CloseReason.USER_CANCEL);
    return ids;
  }

  @Tag("integration")
  @Test
  void throttledCallsAndRefusedEntriesAreRetriedAndEachEventReachesTheSubscriberOnceInOrder() {
    stack = TestStack.create("outbox-eventbridge");
    List<String> ids = changes();
    OutboxRelay relay = relay();
    bus.throttleNextCalls(2); // the SDK's own retries absorb these
    bus.refuseFirstTry(d -> d.get("seq").asLong() % 3 == 0); // a third refused once each

    for (int pass = 0;
        pass < 20 && stack.count("SELECT COUNT(*) FROM outbox WHERE bridged_at IS NULL") > 0;
        pass++) {
      relay.relayOnce();
    }

    assertThat(stack.count("SELECT COUNT(*) FROM outbox WHERE bridged_at IS NULL")).isZero();
    List<EventBridgeEndpoint.Delivered> got = bus.delivered();
    // A deduplicating subscriber: by event id, first delivery wins.
    Set<String> seen = new HashSet<>();
    Map<String, List<Long>> firstPerOrder = new LinkedHashMap<>();
    for (EventBridgeEndpoint.Delivered d : got) {
      assertThat(d.bus()).isEqualTo("orders-bus");
      assertThat(d.source()).isEqualTo("order-timeout.orders");
      assertThat(d.detailType()).isEqualTo(d.detail().get("type").asText());
      if (seen.add(d.detail().get("id").asText())) {
        firstPerOrder
            .computeIfAbsent(d.detail().get("orderId").asText(), k -> new ArrayList<>())
            .add(d.detail().get("seq").asLong());
      }
    }
    assertThat(seen)
        .containsExactlyInAnyOrderElementsOf(
            stack.dump("SELECT event_id FROM outbox").stream()
                .map(s -> s.replace("|", ""))
                .toList());
    assertThat(seen).hasSize(41);
    assertThat(got).hasSize(41); // refused entries were not delivered: once per id
    for (String id : ids) {
      List<Long> expected =
          stack.dump("SELECT seq FROM outbox WHERE order_id = '" + id + "' ORDER BY seq").stream()
              .map(s -> Long.parseLong(s.replace("|", "")))
              .toList();
      assertThat(firstPerOrder.get(id)).as(id).containsExactlyElementsOf(expected);
    }
    assertThat(bus.maxEntriesPerCall()).isLessThanOrEqualTo(10);
    assertThat(stack.app().metrics().counter("outbox_bridge_entry_failures"))
        .isEqualTo(13); // seq 3, 6, .., 39
    // the stream got everything too, independently
    assertThat(stack.count("SELECT COUNT(*) FROM outbox WHERE streamed_at IS NULL")).isZero();
  }

  @Test
  void aBusThatRefusesEveryCallHoldsBackOnlyEventBridgeAndCatchesUpLater() {
    stack = TestStack.create("outbox-eventbridge-down");
    changes();
    OutboxRelay relay = relay();
    bus.throttleNextCalls(1_000);

    relay.relayOnce();

    assertThat(stack.count("SELECT COUNT(*) FROM outbox WHERE streamed_at IS NULL")).isZero();
    assertThat(stack.count("SELECT COUNT(*) FROM outbox WHERE bridged_at IS NULL")).isEqualTo(41);
    assertThat(bus.delivered()).isEmpty();

    bus.throttleNextCalls(0);
    for (int pass = 0; pass < 5; pass++) {
      relay.relayOnce();
    }
    assertThat(stack.count("SELECT COUNT(*) FROM outbox WHERE bridged_at IS NULL")).isZero();
    assertThat(bus.delivered()).hasSize(41);
  }
}
