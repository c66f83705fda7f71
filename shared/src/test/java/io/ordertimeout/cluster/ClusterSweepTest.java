package io.ordertimeout.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.close.CloseResult;
import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.EmbeddedRedisCluster;
import io.ordertimeout.sweep.SweepStats;
import io.ordertimeout.testing.TestStack;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The core scenarios of TimeoutSweeperTest and OrderCloserTest, on a 3-master Redis Cluster. */
@Tag("integration")
class ClusterSweepTest {
  /**
   * Orders of the hot SKU in the two-sweeps scenario: 2,000 keeps the suite within a minute on a
   * shared 2-core machine; {@code -Dotc.cluster.hotOrders=20000} runs the heavier variant.
   */
  private static final int HOT = Integer.getInteger("otc.cluster.hotOrders", 2_000);

  private static final int MIX = 500;
  private final EmbeddedRedisCluster cluster = ClusterFixture.shared();
  private TestStack stack;

  @AfterEach
  void tearDown() {
    if (stack != null) {
      stack.assertInvariants();
      stack.close();
    }
  }

  @Test
  void placeCancelAndTwoSweepsAtOnceCloseThousandsOfOrdersOfAHotSkuExactlyOnce() {
    stack =
        TestStack.createOnCluster(
            "cl-two-sweeps",
            cluster.uri(),
            c -> c.toBuilder().timerShards(8).sweepBatch(200).build(),
            null);
    stack.seedSku("hot", 3L * HOT + 1_000);
    for (int i = 0; i < 20; i++) {
      stack.seedSku("sku-" + i, 1_000);
    }
    // placed through the use case (its ZADD goes through the cluster connection), half cancelled
    List<String> placed = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      placed.add(
          stack.place("placed-" + i, "u" + i, 1, null, new OrderItem("hot", 2)).order().orderId());
    }
    CloseResult cancelled =
        stack
            .app()
            .closer()
            .close(TenantIds.DEFAULT, placed.subList(0, 50), CloseReason.USER_CANCEL);
    assertThat(cancelled.closed()).hasSize(50);
    assertThat(placed.subList(0, 50))
        .allMatch(id -> stack.app().timers().deadlineOf(TenantIds.DEFAULT, id).isEmpty());
    stack.bulkPlace("hot-", HOT, Duration.ofMillis(500), i -> new OrderItem("hot", 1 + i % 3));
    stack.bulkPlace("mix-", MIX, Duration.ofMillis(800), i -> new OrderItem("sku-" + i % 20, 1));

    CompletableFuture<SweepStats> a =
        ClusterFixture.sweepUntil(
            stack, Duration.ofSeconds(60), () -> ClusterFixture.unpaid(stack) == 0);
    CompletableFuture<SweepStats> b =
        ClusterFixture.sweepUntil(
            stack, Duration.ofSeconds(60), () -> ClusterFixture.unpaid(stack) == 0);
    SweepStats sa = a.join();
    SweepStats sb = b.join();

    assertThat(sa.closed() + sb.closed()).isEqualTo(HOT + MIX + 50);
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE close_reason = 'TIMEOUT'"))
        .isEqualTo(HOT + MIX + 50);
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE close_reason = 'USER_CANCEL'"))
        .isEqualTo(50);
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE status <> 'CLOSED'")).isZero();
    assertThat(
            stack.count(
                "SELECT COUNT(DISTINCT order_id) FROM stock_movements WHERE kind = 'RELEASE'"))
        .isEqualTo(HOT + MIX + 100);
    assertThat(
            stack.count(
                "SELECT COUNT(*) FROM orders WHERE close_reason = 'TIMEOUT' AND closed_at < expire_at"))
        .isZero();
    assertThat(stack.dump("SELECT available, reserved, sold FROM stock WHERE sku_id = 'hot'"))
        .containsExactly((3L * HOT + 1_000) + "|0|0|");
    assertThat(stack.app().timers().size(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT)).isZero();
  }

  @Test
  void aSweepThatDiesAfterClaimingGivesItsOrdersBackAfterTheLease() {
    stack =
        TestStack.createOnCluster(
            "cl-crash",
            cluster.uri(),
            c ->
                c.toBuilder()
                    .timerShards(8)
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

    SweepStats stats = ClusterFixture.sweepUntilDrained(stack, Duration.ofSeconds(30));

    assertThat(stats.closed()).isEqualTo(300);
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE status = 'CLOSED'"))
        .isEqualTo(ids.size());
    assertThat(
            stack.count("SELECT MIN(TIMESTAMPDIFF(MICROSECOND, expire_at, closed_at)) FROM orders"))
        .as("closed only after the 2 s lease ran out")
        .isGreaterThanOrEqualTo(2_000_000L);
  }
}
