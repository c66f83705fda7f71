package io.ordertimeout.aws;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.outbox.EventBridgeClients;
import io.ordertimeout.outbox.OutboxRelay;
import io.ordertimeout.outbox.RelaySettings;
import io.ordertimeout.testing.TestStack;
import java.util.List;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.eventbridge.EventBridgeClient;

/**
 * The outbox relay's PutEvents against an AWS emulator (LocalStack or moto_server, see {@link
 * AwsEmulator}; skipped with the reason when neither is there): the bus is created through the real
 * API and the relay's calls are accepted by EventBridge's own request validation.
 */
class EventBridgeEmulatorTest {
  @Test
  void theRelayPutsEveryOutboxRowOnABusTheEmulatorAccepts() throws Exception {
    try (AwsEmulator emulator = AwsEmulator.start();
        EventBridgeClient client =
            EventBridgeClients.create(
                AwsEmulator.REGION, emulator.endpoint(), AwsEmulator.CREDENTIALS);
        TestStack stack = TestStack.create("outbox-emulator")) {
      client.createEventBus(b -> b.name("otc-orders"));
      stack.seedSku("sku-1", 100);
      for (int i = 0; i < 12; i++) {
        stack.place(String.format("emu-ord-%03d", i), "u1", 900, null, new OrderItem("sku-1", 1));
      }
      stack
          .app()
          .closer()
          .close(TenantIds.DEFAULT, List.of("emu-ord-000", "emu-ord-001"), CloseReason.USER_CANCEL);
      OutboxRelay relay =
          stack.app().newRelay(RelaySettings.defaults().withBus("otc-orders"), client);

      relay.relayOnce();

      assertThat(stack.count("SELECT COUNT(*) FROM outbox")).isEqualTo(14);
      assertThat(stack.count("SELECT COUNT(*) FROM outbox WHERE bridged_at IS NULL"))
          .as("rows %s refused by %s", stack.dump("SELECT seq FROM outbox"), emulator.name())
          .isZero();
      assertThat(stack.app().metrics().counter("outbox_bridge_entry_failures")).isZero();
    }
  }
}
