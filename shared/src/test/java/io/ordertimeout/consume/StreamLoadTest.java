package io.ordertimeout.consume;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.stream.EventType;
import io.ordertimeout.stream.OrderEvent;
import io.ordertimeout.stream.OrderEvents;
import io.ordertimeout.sweep.SweepStats;
import io.ordertimeout.sweep.TimeoutSweeper;
import io.ordertimeout.testing.Await;
import io.ordertimeout.testing.TestStack;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Consumers and sweeps at once over 20,000 orders, and the consumer throughput measurement
 * (printed, not asserted).
 */
@Tag("integration")
class StreamLoadTest {
  private static final ExecutorService THREADS = Executors.newCachedThreadPool();

  /** The invocation margin of the load test's sweeps and consumers. */
  private static final Duration MARGIN = Duration.ofSeconds(5);

  /** An order may stay UNPAID this long past its deadline on a loaded 2-core test machine. */
  private static final long GRACE_SECONDS = 60;

  private TestStack stack;

  @AfterEach
  void tearDown() {
    if (stack != null) {
      stack.close();
    }
  }

  private long unpaid() {
    return stack.count("SELECT COUNT(*) FROM orders WHERE status = 'UNPAID'");
  }

  @Test
  void fourConsumersAndTwoSweepsCloseTwentyThousandOrdersOfAHotSkuExactlyOnce() {
    stack =
        TestStack.create(
            "stream-load",
            c ->
                c.toBuilder()
                    .sweepBatch(500)
                    .waits(c.waits().withWeChatStep(Duration.ofSeconds(5)))
                    .claimLease(Duration.ofSeconds(5))
                    .stream(c.stream().withVisibility(Duration.ofSeconds(2)))
                    // the sweep's closes in flight are waited for within the margin, as on Lambda
                    // (where it is 19 s): on this hot SKU a 500-order close waits seconds on the
                    // consumers' locks
                    .invocationMargin(MARGIN)
                    .build(),
            null);
    stack.seedSku("hot", 40_000);
    for (int i = 0; i < 20; i++) {
      stack.seedSku("sku-" + i, 1_000);
    }
    List<String> hot =
        stack.bulkPlace(
            "hot-", 10_000, Duration.ofSeconds(2), i -> new OrderItem("hot", 1 + i % 3));
    stack.bulkPlace("mix-", 10_000, Duration.ofSeconds(3), i -> new OrderItem("sku-" + i % 20, 1));
    // A quarter of the hot orders are cancelled by their users meanwhile.
    List<OrderEvent> cancels = new ArrayList<>();
    for (int i = 0; i < hot.size(); i += 4) {
      cancels.add(
          OrderEvent.of(
              EventType.CANCEL_REQUESTED, hot.get(i), "default", System.currentTimeMillis()));
    }
    stack.app().stream().append(cancels);
    AtomicBoolean done = new AtomicBoolean();
    long deadline = System.currentTimeMillis() + 180_000;

    List<CompletableFuture<ConsumerStats>> consumers =
        IntStream.range(0, 4)
            .mapToObj(i -> CompletableFuture.supplyAsync(() -> consume(done, deadline), THREADS))
            .toList();
    List<CompletableFuture<SweepStats>> sweeps =
        IntStream.range(0, 2)
            .mapToObj(i -> CompletableFuture.supplyAsync(() -> sweep(done, deadline), THREADS))
            .toList();
    try {
      Await.await("every order closed", Duration.ofSeconds(180))
          .pollInterval(Duration.ofMillis(200))
          .until(() -> unpaid() == 0);
    } finally {
      done.set(true);
    }
    List<ConsumerStats> consumed = consumers.stream().map(CompletableFuture::join).toList();
    List<SweepStats> swept = sweeps.stream().map(CompletableFuture::join).toList();

    assertThat(unpaid()).isZero();
    long consumerCloses = consumed.stream().mapToLong(ConsumerStats::closed).sum();
    long sweepCloses = swept.stream().mapToLong(SweepStats::closed).sum();
    assertThat(consumerCloses + sweepCloses).isEqualTo(20_000);
    assertThat(swept.stream().mapToLong(SweepStats::handedOff).sum()).isPositive();
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE close_reason = 'USER_CANCEL'"))
        .isPositive();
    assertThat(stack.count("SELECT COUNT(*) FROM stock_movements WHERE kind = 'RELEASE'"))
        .isEqualTo(20_000);
    assertThat(
            stack.count(
                "SELECT COUNT(*) FROM orders WHERE close_reason = 'TIMEOUT' AND closed_at < expire_at"))
        .isZero();
    assertThat(
            stack.count(
                "SELECT COUNT(*) FROM orders WHERE closed_at > TIMESTAMPADD(SECOND, ?, expire_at)",
                GRACE_SECONDS))
        .isZero();
    assertThat(stack.dump("SELECT available, reserved, sold FROM stock WHERE sku_id = 'hot'"))
        .containsExactly("40000|0|0|");
    assertThat(stack.count("SELECT COUNT(*) FROM dead_letters")).isZero();
    System.out.printf(
        "stream load: consumers closed %d, sweeps closed %d and handed off %d%n",
        consumerCloses, sweepCloses, swept.stream().mapToLong(SweepStats::handedOff).sum());
    stack.assertInvariants();
  }

  /** Consumer invocations of 5 s one after another, as the minute schedule would run them. */
  private ConsumerStats consume(AtomicBoolean done, long deadline) {
    long closed = 0;
    long claimed = 0;
    while (!done.get() && System.currentTimeMillis() < deadline) {
      long until =
          Math.min(
              deadline,
              System.currentTimeMillis()
                  + 5_000
                  + stack.app().config().invocationMargin().toMillis());
      try (StreamConsumer consumer = stack.app().newStreamConsumer()) {
        ConsumerStats s = consumer.run(() -> done.get() ? 0 : until - System.currentTimeMillis());
        closed += s.closed();
        claimed += s.claimed();
      }
    }
    return new ConsumerStats("all", 0, 0, claimed, closed, 0, 0, 0, 0, 0, 0, 0);
  }

  /**
   * Sweep invocations that loop for 700 ms: the first batch fits the budget and closes inline, what
   * is claimed after that is over budget and handed to the stream. Each has the margin beyond that,
   * in which its closes in flight end (a run cut to no time left would return without them, as a
   * Lambda invocation at its timeout would), and runs to its end after the test is done.
   */
  private SweepStats sweep(AtomicBoolean done, long deadline) {
    long closed = 0;
    long handedOff = 0;
    while (!done.get() && System.currentTimeMillis() < deadline) {
      long until = System.currentTimeMillis() + 700 + MARGIN.toMillis();
      TimeoutSweeper sweeper = stack.app().newSweeper();
      SweepStats s = sweeper.run(() -> until - System.currentTimeMillis());
      closed += s.closed();
      handedOff += s.handedOff();
    }
    return new SweepStats(0, 0, 0, closed, 0, 0, 0, handedOff, 0, 0);
  }

  @Test
  void measureConsumerThroughputWithOneAndWithFourConsumers() {
    for (int consumers : new int[] {1, 4}) {
      stack =
          TestStack.create(
              "throughput-" + consumers,
              c -> c.toBuilder().stream(c.stream().withBatch(100)).build(),
              null);
      for (int i = 0; i < 20; i++) {
        stack.seedSku("sku-" + i, 10_000);
      }
      stack.seedSku("hot", 10_000);
      List<String> ids =
          stack.bulkPlace(
              "tp-",
              8_000,
              Duration.ZERO,
              i -> new OrderItem(i % 2 == 0 ? "hot" : "sku-" + i % 20, 1));
      stack
          .app()
          .timers()
          .remove(
              TenantIds.DEFAULT,
              DeadlineKind.PAYMENT_TIMEOUT,
              ids); // consumers only: no sweep competes
      stack.app().events().closeDue(TenantIds.DEFAULT, ids, OrderEvents.HandOffCause.OVER_BUDGET);
      AtomicBoolean done = new AtomicBoolean();
      long deadline = System.currentTimeMillis() + 120_000;

      long started = System.nanoTime();
      List<CompletableFuture<ConsumerStats>> running =
          IntStream.range(0, consumers)
              .mapToObj(i -> CompletableFuture.supplyAsync(() -> consume(done, deadline), THREADS))
              .toList();
      long millis;
      try {
        // 10 ms polls: the poll is the measured time's resolution
        Await.await(consumers + " consumer(s) closing every order", Duration.ofSeconds(120))
            .pollInterval(Duration.ofMillis(10))
            .until(() -> unpaid() == 0);
      } finally {
        millis = (System.nanoTime() - started) / 1_000_000;
        done.set(true);
      }
      running.forEach(CompletableFuture::join);

      assertThat(unpaid()).isZero();
      System.out.printf(
          "stream consumer throughput: %d consumer(s) closed %d orders (half on one hot SKU) in %d"
              + " ms = %.0f closes/s%n",
          consumers, ids.size(), millis, ids.size() * 1000.0 / millis);
      stack.assertInvariants();
      stack.close();
      stack = null;
    }
  }
}
