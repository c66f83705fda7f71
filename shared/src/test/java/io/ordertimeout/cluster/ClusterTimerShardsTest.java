package io.ordertimeout.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.EmbeddedRedisCluster;
import io.ordertimeout.redis.TimerIndex;
import io.ordertimeout.testing.TestStack;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** docs/concepts/design.md, scale-out: timer shards spread over the cluster's slots and masters. */
@Tag("integration")
class ClusterTimerShardsTest {
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
  void eightTimerShardsLandOnEightSlotsServedByMoreThanOneMaster() {
    stack =
        TestStack.createOnCluster(
            "cl-shards", cluster.uri(), c -> c.toBuilder().timerShards(8).build(), null);
    stack.seedSku("sku-a", 1_000);
    stack.bulkPlace("spread-", 400, Duration.ofMinutes(10), i -> new OrderItem("sku-a", 1));
    TimerIndex timers = stack.app().timers();
    Set<Long> slots = new HashSet<>();
    Set<Integer> masters = new HashSet<>();

    for (int shard = 0; shard < timers.shards(); shard++) {
      long slot =
          cluster.keySlot(timers.timersKey(TenantIds.DEFAULT, shard, DeadlineKind.PAYMENT_TIMEOUT));
      assertThat(cluster.keySlot(timers.leaseKey(shard)))
          .as("shard %d's lease shares its timers' hash tag", shard)
          .isEqualTo(slot);
      slots.add(slot);
      masters.add(cluster.portOfSlot(slot));
    }

    assertThat(slots).hasSize(8);
    assertThat(masters).hasSizeGreaterThan(1);
    assertThat(timers.size(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT)).isEqualTo(400);
    List<String> state = stack.redisState();
    // the 8 timer sets and the record of their count (TimerIndex.requireShardCountUnchanged)
    assertThat(state).as("KEYS through the cluster connection reaches every master").hasSize(9);
    assertThat(state).filteredOn(line -> line.contains(":timers zset ")).hasSize(8);
    assertThat(state).contains(timers.shardCountKey() + " string 1");
  }

  @Test
  void closingTheStackDeletesItsKeysOnEveryMaster() {
    stack =
        TestStack.createOnCluster(
            "cl-cleanup", cluster.uri(), c -> c.toBuilder().timerShards(8).build(), null);
    stack.seedSku("sku-a", 1_000);
    stack.bulkPlace("gone-", 200, Duration.ofMinutes(10), i -> new OrderItem("sku-a", 1));
    String pattern = stack.app().config().keyPrefix() + ":*";
    assertThat(cluster.keys(pattern)).hasSize(9); // 8 timer sets, the shard-count record
    stack.assertInvariants();

    stack.close();
    stack = null;

    assertThat(cluster.keys(pattern)).isEmpty();
  }
}
