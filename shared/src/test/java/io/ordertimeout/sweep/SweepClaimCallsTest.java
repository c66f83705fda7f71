package io.ordertimeout.sweep;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.testing.Await;
import io.ordertimeout.testing.TestStack;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * On a single-node Redis a pass claims every due shard in one script call, each shard's payment
 * timeouts limited to its share of what the pass may still take: a pass over 16 shards with a few
 * orders due in each is one call, not one per group of shards that could each fill a batch; and a
 * backlog larger than a pass may take is closed over several passes, each within the pass's cap,
 * every order exactly once.
 */
class SweepClaimCallsTest {
  private TestStack stack;

  @AfterEach
  void tearDown() {
    if (stack != null) {
      stack.assertInvariants();
      stack.close();
    }
  }

  @Test
  void aPassOverSixteenShardsWithAFewOrdersDueEachIsOneClaimCall() {
    // production's 16 shards (the tests' stacks run 4)
    stack =
        TestStack.create(
            "claim-calls", c -> c.toBuilder().dbPoolSize(4).timerShards(16).build(), null);
    stack.seedSku("sku-a", 1_000);
    List<String> ids =
        stack.bulkPlace("steady-", 64, Duration.ofSeconds(-1), i -> new OrderItem("sku-a", 1));
    assertThat(stack.app().timers().crossShardCalls()).as("a single-node Redis").isTrue();

    SweepStats stats = stack.app().newSweeper().run(budget(Duration.ofMillis(1_500)));

    assertThat(stats.closed()).isEqualTo(ids.size());
    assertThat(stats.shardsHeld()).isEqualTo(16);
    // 4 calls a pass before: as many shards a call as could each fill a 500-order batch under the
    // cap of 2,000 (the batch times the 4 closers)
    assertThat(stats.passes()).isPositive();
    assertThat(stats.claimCalls())
        .as("one claim call a pass (%s)", stats)
        .isEqualTo(stats.passes());
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE status = 'CLOSED'"))
        .isEqualTo(ids.size());
  }

  @Test
  void aPassReadsTheTimerClockOnce() {
    stack =
        TestStack.create(
            "claim-clock", c -> c.toBuilder().dbPoolSize(4).timerShards(16).build(), null);
    stack.seedSku("sku-a", 1_000);
    List<String> ids =
        stack.bulkPlace("clock-", 64, Duration.ofSeconds(-1), i -> new OrderItem("sku-a", 1));
    AtomicLong reads = new AtomicLong();
    // a second wiring of the same keys whose timer clock counts its reads
    TestStack counting =
        TestStack.sharing(
            stack,
            redisTime ->
                () -> {
                  reads.incrementAndGet();
                  return redisTime.nowMillis();
                });
    SweepStats stats;
    try {
      stats = counting.app().newSweeper().run(budget(Duration.ofMillis(1_500)));
    } finally {
      counting.app().close();
    }

    assertThat(stats.closed()).isEqualTo(ids.size());
    // Redis TIME is a round trip: a pass asked twice (its claim, then its wait) before
    assertThat(reads.get())
        .as("the run's lease token, then one read a pass (%s)", stats)
        .isEqualTo(stats.passes() + 1);
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE status = 'CLOSED'"))
        .isEqualTo(ids.size());
  }

  @Test
  void aBacklogLargerThanAPassIsClosedOverSeveralPassesEachOrderOnce() {
    // a pass may take 20 orders (a batch of 10 times 2 closers): 16 shards get at most one each
    stack =
        TestStack.create(
            "claim-backlog",
            c -> c.toBuilder().dbPoolSize(2).sweepBatch(10).timerShards(16).build(),
            null);
    stack.seedSku("sku-a", 1_000);
    List<String> ids =
        stack.bulkPlace("backlog-", 200, Duration.ofSeconds(-1), i -> new OrderItem("sku-a", 1));

    TimeoutSweeper sweeper = stack.app().newSweeper();
    CompletableFuture<SweepStats> run =
        CompletableFuture.supplyAsync(() -> sweeper.run(() -> Long.MAX_VALUE / 4));
    Await.until(
        "the backlog closed",
        Duration.ofSeconds(30),
        () -> stack.count("SELECT COUNT(*) FROM orders WHERE status = 'CLOSED'") == ids.size());
    sweeper.terminate();
    SweepStats stats = run.join();

    assertThat(stats.closed()).isEqualTo(ids.size());
    assertThat(stats.claimed()).isEqualTo(ids.size());
    assertThat(stats.claimCalls())
        .as("at most 20 orders a pass: at least 10 claim calls (%s)", stats)
        .isGreaterThanOrEqualTo(10);
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE status = 'CLOSED'"))
        .isEqualTo(ids.size());
    assertThat(stack.count("SELECT COUNT(*) FROM stock_movements WHERE kind = 'RELEASE'"))
        .isEqualTo(ids.size());
  }

  private static java.util.function.LongSupplier budget(Duration d) {
    long end = System.nanoTime() + d.toNanos();
    return () -> Math.max(0, (end - System.nanoTime()) / 1_000_000);
  }
}
