package io.ordertimeout.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.testing.TestStack;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.services.eventbridge.EventBridgeClient;

/**
 * An EventBridge brownout (every PutEvents hangs 5 s, then fails) while a user cancels: the cancel
 * still reaches the stream at the relay's poll pace and the consumer closes the order, the run ends
 * within its budget, and no relay thread is left running after it.
 */
@Tag("integration")
class SlowBusRelayTest {
  /** The invocation's remaining time at its start. */
  private static final long BUDGET_MILLIS = 10_000;

  /**
   * The invocation margin, as on Lambda (19 s there): the consumer stops with 3 s left, and the
   * relay's loops end within it.
   */
  private static final Duration MARGIN = Duration.ofSeconds(3);

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

  @Test
  void aHungBusDelaysNeitherTheCancelOnTheStreamNorTheEndOfTheRun() throws Exception {
    stack =
        TestStack.create(
            "outbox-hung-bus", c -> c.toBuilder().invocationMargin(MARGIN).build(), null);
    stack.seedSku("sku-1", 100);
    for (int i = 0; i < 50; i++) {
      stack.place(String.format("hb-%04d", i), "u" + i, 900, null, new OrderItem("sku-1", 1));
    }
    bus = EventBridgeEndpoint.start();
    bus.hangAndFail(5_000);
    client =
        EventBridgeClients.create(
            "us-east-1",
            bus.uri(),
            StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")));
    RelayJob job = stack.app().relayJob(RelaySettings.defaults().withBus("orders-bus"), client);
    long start = System.nanoTime();
    long end = start + TimeUnit.MILLISECONDS.toNanos(BUDGET_MILLIS);
    LongSupplier remaining = () -> TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime());

    AtomicLong returnedAt = new AtomicLong();
    CompletableFuture<Object> run =
        CompletableFuture.supplyAsync(
            () -> {
              Object stats =
                  job.alongside(remaining, () -> stack.app().consumerJob().run(remaining));
              returnedAt.set(System.nanoTime());
              return stats;
            });
    OutboxTest.await(() -> stack.app().stream().length() >= 50); // the 50 `created` events
    OutboxTest.await(() -> bus.calls() >= 1); // the bus's loop is inside a hung PutEvents
    long cancelled = System.nanoTime();
    stack.app().cancels().request(TenantIds.DEFAULT, "hb-0007");
    OutboxTest.await(() -> stack.app().stream().length() >= 51);
    long streamedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - cancelled);
    run.get(BUDGET_MILLIS + 60_000, TimeUnit.MILLISECONDS);
    long ranMillis = TimeUnit.NANOSECONDS.toMillis(returnedAt.get() - start);
    List<String> relayThreads =
        Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.isAlive() && t.getName().startsWith("outbox-relay"))
            .map(Thread::getName)
            .toList();
    System.out.printf(
        "cancel streamed %d ms after its commit; the run took %d ms of a %d ms budget%n",
        streamedMillis, ranMillis, BUDGET_MILLIS);

    // at the stream's 200 ms poll, ~0.1-0.3 s; 3 s is for a loaded machine
    assertThat(streamedMillis).isLessThan(3_000);
    assertThat(ranMillis).isLessThan(BUDGET_MILLIS);
    assertThat(relayThreads).isEmpty();
    assertThat(stack.dump("SELECT status, close_reason FROM orders WHERE order_id = 'hb-0007'"))
        .containsExactly("CLOSED|USER_CANCEL|");
    assertThat(stack.count("SELECT COUNT(*) FROM outbox WHERE streamed_at IS NULL")).isZero();
    // nothing reached the bus, and everything stays for it: 50 created, the cancel, the close
    assertThat(bus.delivered()).isEmpty();
    assertThat(stack.count("SELECT COUNT(*) FROM outbox WHERE bridged_at IS NULL")).isEqualTo(52);
  }
}
