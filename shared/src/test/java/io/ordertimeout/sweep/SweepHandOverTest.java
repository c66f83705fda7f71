package io.ordertimeout.sweep;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.testing.Await;
import io.ordertimeout.testing.TestStack;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A sweep run keeps sweeping until a run started after it holds every shard, then ends: coverage
 * does not rest on when the schedule fires, and two runs overlap only for the hand-over.
 */
class SweepHandOverTest {
  private static final ExecutorService THREADS = Executors.newCachedThreadPool();

  private TestStack stack;

  @AfterEach
  void tearDown() {
    if (stack != null) {
      stack.assertInvariants();
      stack.close();
    }
  }

  private static LongSupplier invocationOf(long millis) {
    long start = System.currentTimeMillis();
    return () -> millis - (System.currentTimeMillis() - start);
  }

  @Test
  void aRunEndsOnceTheRunStartedAfterItHoldsTheShardsAndNoOrderWaitsMeanwhile() throws Exception {
    // Arrange: run a sweeps with 40 s left; 10 orders are due every 100 ms from t0 to t0 + 2.9 s,
    // t0 4 s ahead (seeding them takes under a second on a loaded 2-core machine)
    stack = TestStack.create("sweep-hand-over");
    stack.seedSku("sku-h", 1_000);
    TimeoutSweeper a = stack.app().newSweeper();
    long aStarted = System.currentTimeMillis();
    CompletableFuture<SweepStats> runA =
        CompletableFuture.supplyAsync(() -> a.run(invocationOf(40_000)), THREADS);
    long t0 = aStarted + 4_000;
    for (int step = 0; step < 30; step++) {
      long dueIn = t0 + 100L * step - System.currentTimeMillis();
      stack.bulkPlace(
          "ho" + step + "-", 10, Duration.ofMillis(dueIn), i -> new OrderItem("sku-h", 1));
    }
    assertThat(System.currentTimeMillis()).as("seeded before t0").isLessThan(t0);

    // Act: run b starts 1.5 s after t0, with 40 s left
    Thread.sleep(t0 + 1_500 - System.currentTimeMillis());
    TimeoutSweeper b = stack.app().newSweeper();
    long bStarted = System.nanoTime();
    CompletableFuture<SweepStats> runB =
        CompletableFuture.supplyAsync(() -> b.run(invocationOf(40_000)), THREADS);
    try {
      SweepStats sa = runA.get(30, java.util.concurrent.TimeUnit.SECONDS);
      long handOverMillis = (System.nanoTime() - bStarted) / 1_000_000;
      Await.until(
          "every order closed",
          Duration.ofSeconds(20),
          () -> stack.count("SELECT COUNT(*) FROM orders WHERE status = 'UNPAID'") == 0);

      // Assert: a ended long before its 40 s, after b had started; no order waited for a sweeper
      long maxLag =
          stack.count(
              "SELECT MAX(TIMESTAMPDIFF(MICROSECOND, expire_at, closed_at)) DIV 1000 FROM orders");
      System.out.println(
          "close lag by group (max ms, 100 ms apart from t0): "
              + stack.dump(
                  "SELECT SUBSTRING_INDEX(order_id, '-', 1),"
                      + " MAX(TIMESTAMPDIFF(MICROSECOND, expire_at, closed_at)) DIV 1000"
                      + " FROM orders GROUP BY 1 ORDER BY MIN(expire_at)"));
      System.out.printf(
          "sweep hand-over: run a ended %d ms after run b started (a swept %d ms, closed %d);"
              + " max close lag %d ms%n",
          handOverMillis, sa.durationMillis(), sa.closed(), maxLag);
      // b started 5.5 s after a: a ran past that (less 500 ms of slack), and ended within 15.5 s
      long bStartedAfterA = t0 + 1_500 - aStarted;
      assertThat(sa.durationMillis()).isBetween(bStartedAfterA - 500, bStartedAfterA + 15_500);
      assertThat(sa.closed()).isPositive();
      // generous: on a loaded 2-core machine a close waits for CPU, not for a sweeper
      assertThat(maxLag).isLessThan(3_000);
      assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE closed_at < expire_at")).isZero();
      assertThat(stack.app().redis().sync().zcard(stack.app().timers().sweepersKey())).isEqualTo(1);
    } finally {
      b.terminate();
      runB.join();
      a.terminate();
      runA.join();
    }
  }

  @Test
  void aRunWithoutASuccessorSweepsUntilItsTimeIsUp() {
    stack = TestStack.create("sweep-no-successor");

    SweepStats stats = stack.app().newSweeper().run(invocationOf(1_500));

    assertThat(stats.durationMillis()).isGreaterThanOrEqualTo(1_400);
    assertThat(stats.shardsHeld()).isEqualTo(stack.app().timers().shards());
  }
}
