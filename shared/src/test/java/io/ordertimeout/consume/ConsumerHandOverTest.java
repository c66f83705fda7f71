package io.ordertimeout.consume;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.stream.EventType;
import io.ordertimeout.stream.OrderEvent;
import io.ordertimeout.testing.Await;
import io.ordertimeout.testing.TestStack;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A consumer run reads until a run started after it reads too, then ends: the stream always has a
 * reader, whenever the schedule fires, and two runs overlap only for about a second.
 */
class ConsumerHandOverTest {
  private static final ExecutorService THREADS = Executors.newCachedThreadPool();

  private TestStack stack;

  @AfterEach
  void tearDown() {
    if (stack != null) {
      stack.assertInvariants();
      stack.close();
    }
  }

  private CompletableFuture<ConsumerStats> start(StreamConsumer consumer, long millis) {
    long deadline = System.currentTimeMillis() + millis;
    return CompletableFuture.supplyAsync(
        () -> consumer.run(() -> deadline - System.currentTimeMillis()), THREADS);
  }

  private void cancel(String orderId) {
    stack.app().stream()
        .append(
            List.of(
                OrderEvent.of(
                    EventType.CANCEL_REQUESTED, orderId, "default", System.currentTimeMillis())));
  }

  private boolean closed(String orderId) {
    return stack.count(
            "SELECT COUNT(*) FROM orders WHERE order_id = ? AND status = 'CLOSED'", orderId)
        == 1;
  }

  @Test
  void aRunEndsOnceARunStartedAfterItReadsAndThatRunTakesTheNextCancel() throws Exception {
    stack = TestStack.create("consumer-hand-over");
    stack.seedSku("sku-c", 10);
    List<String> ids =
        stack.bulkPlace("ch-", 2, Duration.ofMinutes(10), i -> new OrderItem("sku-c", 1));
    try (StreamConsumer a = stack.app().newStreamConsumer();
        StreamConsumer b = stack.app().newStreamConsumer()) {
      CompletableFuture<ConsumerStats> runA = start(a, 30_000);
      cancel(ids.get(0));
      Await.until("the first cancel closed by a", () -> closed(ids.get(0)));

      // Act: b starts; a hands over within about a second
      long bStarted = System.nanoTime();
      CompletableFuture<ConsumerStats> runB = start(b, 30_000);
      ConsumerStats sa = runA.get(15, TimeUnit.SECONDS);
      long handOverMillis = (System.nanoTime() - bStarted) / 1_000_000;
      cancel(ids.get(1));
      try {
        Await.until(
            "the second cancel closed by b", Duration.ofSeconds(10), () -> closed(ids.get(1)));

        // Assert
        System.out.printf(
            "consumer hand-over: run a ended %d ms after run b started%n", handOverMillis);
        assertThat(sa.closed()).isEqualTo(1);
        assertThat(handOverMillis).isLessThan(10_000);
        assertThat(stack.app().redis().sync().zrange(stack.app().stream().consumersKey(), 0, -1))
            .hasSize(1);
      } finally {
        b.terminate();
        assertThat(runB.join().closed()).isEqualTo(1);
      }
    }
  }
}
