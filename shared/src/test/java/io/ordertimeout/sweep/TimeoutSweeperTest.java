package io.ordertimeout.sweep;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.testing.Await;
import io.ordertimeout.testing.TestStack;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

class TimeoutSweeperTest {
  /**
   * Own threads: the common pool has one thread on a 2-core machine, too few for two sweeps and a
   * watcher.
   */
  private static final ExecutorService THREADS = Executors.newCachedThreadPool();

  private TestStack stack;

  @AfterEach
  void tearDown() {
    if (stack != null) {
      stack.assertInvariants();
      stack.close();
    }
  }

  /** Runs a sweeper until every order of the schema is final or {@code limit} passes. */
  private SweepStats sweepUntilDrained(TestStack s, Duration limit) {
    long until = System.currentTimeMillis() + limit.toMillis();
    TimeoutSweeper sweeper = s.app().newSweeper();
    CompletableFuture<SweepStats> run =
        CompletableFuture.supplyAsync(
            () -> sweeper.run(() -> until - System.currentTimeMillis()), THREADS);
    Await.reached(
        Await.await("every order of " + s.schema() + " final", limit)
            .pollInterval(Duration.ofMillis(100)),
        () -> s.count("SELECT COUNT(*) FROM orders WHERE status = 'UNPAID'") == 0);
    sweeper.terminate();
    return run.join();
  }

  @Test
  void twoSweepsAtOnceCloseFiveThousandOrdersOfAHotSkuExactlyOnce() {
    stack = TestStack.create("two-sweeps", c -> c.toBuilder().sweepBatch(200).build(), null);
    stack.seedSku("hot", 20_000);
    for (int i = 0; i < 20; i++) {
      stack.seedSku("sku-" + i, 1_000);
    }
    stack.bulkPlace("hot-", 3_000, Duration.ofMillis(500), i -> new OrderItem("hot", 1 + i % 3));
    stack.bulkPlace("mix-", 2_000, Duration.ofMillis(800), i -> new OrderItem("sku-" + i % 20, 1));
    long until = System.currentTimeMillis() + 60_000;

    CompletableFuture<SweepStats> a =
        CompletableFuture.supplyAsync(
            () -> sweepUntilDrained(stack, Duration.ofSeconds(60)), THREADS);
    CompletableFuture<SweepStats> b =
        CompletableFuture.supplyAsync(
            () -> sweepUntilDrained(stack, Duration.ofSeconds(60)), THREADS);
    SweepStats sa = a.join();
    SweepStats sb = b.join();

    assertThat(System.currentTimeMillis()).isLessThan(until);
    assertThat(sa.closed() + sb.closed()).isEqualTo(5_000);
    assertThat(
            stack.count(
                "SELECT COUNT(*) FROM orders WHERE status = 'CLOSED' AND close_reason = 'TIMEOUT'"))
        .isEqualTo(5_000);
    assertThat(stack.count("SELECT COUNT(*) FROM stock_movements WHERE kind = 'RELEASE'"))
        .isEqualTo(5_000);
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE closed_at < expire_at")).isZero();
    assertThat(stack.dump("SELECT available, reserved, sold FROM stock WHERE sku_id = 'hot'"))
        .containsExactly("20000|0|0|");
    assertThat(stack.app().timers().size(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT)).isZero();
  }

  @Tag("integration")
  @Test
  void aSweepThatDiesAfterClaimingGivesItsOrdersBackAfterTheLease() {
    stack =
        TestStack.create(
            "crash",
            c ->
                c.toBuilder()
                    .waits(c.waits().withWeChatStep(Duration.ofSeconds(2)))
                    .claimLease(Duration.ofSeconds(2))
                    .build(),
            null);
    stack.seedSku("sku-a", 1_000);
    List<String> ids =
        stack.bulkPlace("crash-", 300, Duration.ofSeconds(-1), i -> new OrderItem("sku-a", 1));
    var timers = stack.app().timers();
    long now = stack.app().time().nowMillis();
    int claimed = 0;
    for (int shard = 0; shard < timers.shards(); shard++) {
      // the "dead" sweeper: claims, then never closes nor acks
      claimed += timers.claimDue(TenantIds.DEFAULT, shard, now, 2_000, 1_000).size();
    }
    assertThat(claimed).isEqualTo(300);
    for (int shard = 0; shard < timers.shards(); shard++) {
      assertThat(
              timers.claimDue(
                  TenantIds.DEFAULT, shard, stack.app().time().nowMillis(), 2_000, 1_000))
          .isEmpty();
    }

    SweepStats stats = sweepUntilDrained(stack, Duration.ofSeconds(30));

    assertThat(stats.closed()).isEqualTo(300);
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE status = 'CLOSED'"))
        .isEqualTo(ids.size());
    assertThat(
            stack.count("SELECT MIN(TIMESTAMPDIFF(MICROSECOND, expire_at, closed_at)) FROM orders"))
        .as("closed only after the 2 s lease ran out")
        .isGreaterThanOrEqualTo(2_000_000L);
  }

  @Tag("integration")
  @Test
  void aWorkerClockFiveSecondsAheadNeverClosesAnOrderEarly() {
    stack = TestStack.create("skew-ahead", c -> c, null);
    TestStack skewed = null;
    stack.seedSku("sku-a", 1_000);
    stack.bulkPlace("ahead-", 200, Duration.ofSeconds(3), i -> new OrderItem("sku-a", 1));
    try {
      // a second wiring over the same schema and keys whose clock runs 5 s ahead of Redis and MySQL
      skewed = TestStack.sharing(stack, 5_000);
      SweepStats stats = sweepUntilDrained(skewed, Duration.ofSeconds(30));

      assertThat(stats.notDue())
          .as("claimed early, refused by expire_at <= NOW(3)")
          .isGreaterThan(0);
      assertThat(stats.closed()).isEqualTo(200);
    } finally {
      if (skewed != null) {
        skewed.app().close();
      }
    }
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE status = 'CLOSED'")).isEqualTo(200);
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE closed_at < expire_at")).isZero();
  }

  @Tag("integration")
  @Test
  void aWorkerClockFiveSecondsBehindClosesLateButEverything() {
    stack = TestStack.create("skew-behind", c -> c, null);
    TestStack skewed = null;
    stack.seedSku("sku-a", 1_000);
    stack.bulkPlace("behind-", 200, Duration.ofMillis(200), i -> new OrderItem("sku-a", 1));
    try {
      skewed = TestStack.sharing(stack, -5_000);
      SweepStats stats = sweepUntilDrained(skewed, Duration.ofSeconds(30));
      assertThat(stats.closed()).isEqualTo(200);
    } finally {
      if (skewed != null) {
        skewed.app().close();
      }
    }
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE closed_at < expire_at")).isZero();
  }
}
