package io.ordertimeout.sweep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.loop.RunTokens;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.redis.RedisConnector;
import io.ordertimeout.redis.ShardLeases;
import io.ordertimeout.redis.TimerIndex;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ShardLeaseSetTest {
  private final EmbeddedServers servers = EmbeddedServers.get();
  private final RedisConnector redis = RedisConnector.connect(servers.redisUri(), false);
  private final TimerIndex timers =
      new TimerIndex(redis.sync(), servers.newKeyPrefix("lease-set"), 4);
  private final ShardLeases leases = new ShardLeases(redis.sync());
  private final Metrics metrics = new Metrics();

  /** A hand-driven nanoTime: the refresh throttle is tested without waiting for it. */
  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);

  @AfterEach
  void tearDown() {
    for (int shard = 0; shard < timers.shards(); shard++) {
      redis.sync().del(timers.leaseKey(shard));
    }
    redis.sync().del(timers.sweepersKey());
    redis.close();
  }

  /** A run of three expected at once: up to three share the shards evenly. */
  private ShardLeaseSet leaseSet(String token) {
    return leaseSet(token, 3);
  }

  private ShardLeaseSet leaseSet(String token, int runs) {
    return new ShardLeaseSet(timers, leases, metrics, token, runs, nanos::get);
  }

  private void advanceMillis(long millis) {
    nanos.addAndGet(millis * 1_000_000);
  }

  @Test
  void theFirstRunHoldsEveryFreeShardUnderItsTokenAndASecondRunNone() {
    ShardLeaseSet a = leaseSet("run-a");
    ShardLeaseSet b = leaseSet("run-b");

    a.refresh();
    b.refresh();

    assertThat(a.held()).containsExactly(0, 1, 2, 3);
    assertThat(b.held()).isEmpty();
    for (int shard = 0; shard < 4; shard++) {
      assertThat(redis.sync().get(timers.leaseKey(shard))).isEqualTo("run-a");
      assertThat(redis.sync().pttl(timers.leaseKey(shard)))
          .isBetween(1L, ShardLeaseSet.SHARD_LEASE.toMillis());
    }
  }

  /**
   * ScaleOutBench found 2 sweeper processes on 64 shards split 64/0 and 4 split 57/5/2/0: the first
   * run kept every shard, so more sweepers never closed more. Now each takes an even share.
   */
  @Test
  void aRunHoldingMoreThanItsShareGivesTheRestBackAndTheShardsSplitEvenly() {
    ShardLeaseSet a = leaseSet("run-a");
    ShardLeaseSet b = leaseSet("run-b");
    a.refresh();
    b.refresh();
    assertThat(a.held()).containsExactly(0, 1, 2, 3);

    // a's next refresh sees two live runs: it keeps 2 and releases the others, b takes them
    nanos.addAndGet(ShardLeaseSet.LEASE_REFRESH_MILLIS * 1_000_000);
    a.refresh();
    b.refresh();
    assertThat(a.held()).containsExactly(0, 1);
    assertThat(b.held()).containsExactly(2, 3);
    assertThat(redis.sync().get(timers.leaseKey(2))).isEqualTo("run-b");
    assertThat(redis.sync().zcard(timers.sweepersKey())).isEqualTo(2);

    // a third run gets its share as the others give theirs back: 2/1/1 of 4 shards (ceil(4/3)=2)
    ShardLeaseSet c = leaseSet("run-c");
    c.refresh();
    nanos.addAndGet(ShardLeaseSet.LEASE_REFRESH_MILLIS * 1_000_000);
    a.refresh();
    b.refresh();
    c.refresh();
    assertThat(a.held().size() + b.held().size() + c.held().size()).isEqualTo(4);
    assertThat(c.held()).isNotEmpty();

    // runs that end leave the registry: the last one takes every shard again
    b.releaseAll();
    c.releaseAll();
    nanos.addAndGet(ShardLeaseSet.LEASE_REFRESH_MILLIS * 1_000_000);
    a.refresh();
    assertThat(a.held()).containsExactly(0, 1, 2, 3);
    assertThat(redis.sync().zrange(timers.sweepersKey(), 0, -1)).containsExactly("run-a");
  }

  @Test
  void aRefreshWithinTheRefreshIntervalLeavesRedisAloneAndALaterOneTakesFreedShards() {
    ShardLeaseSet a = leaseSet("run-a");
    ShardLeaseSet b = leaseSet("run-b");
    a.refresh();
    b.refresh();
    a.releaseAll();
    assertThat(redis.sync().exists(timers.leaseKey(0))).isZero();

    // b holds less than its share, so it refreshes every 50 ms: 49 ms later it is throttled, no
    // lease call, so b still holds nothing and no key is written
    advanceMillis(ShardLeaseSet.HANDOVER_REFRESH_MILLIS - 1);
    b.refresh();
    assertThat(b.held()).isEmpty();
    assertThat(redis.sync().exists(timers.leaseKey(0))).isZero();

    // 50 ms after b's first refresh: b takes the shards a released
    advanceMillis(1);
    b.refresh();
    assertThat(b.held()).containsExactly(0, 1, 2, 3);
    assertThat(redis.sync().get(timers.leaseKey(3))).isEqualTo("run-b");

    // holding its share, b is throttled for 250 ms: a shard taken from it meanwhile stays taken
    redis.sync().set(timers.leaseKey(3), "run-c");
    advanceMillis(ShardLeaseSet.LEASE_REFRESH_MILLIS - 1);
    b.refresh();
    assertThat(b.held()).containsExactly(0, 1, 2, 3);
    advanceMillis(1);
    b.refresh();
    assertThat(b.held()).containsExactly(0, 1, 2);
  }

  @Test
  void aShardTakenByAnotherRunIsDroppedAtTheNextRefresh() {
    ShardLeaseSet a = leaseSet("run-a");
    a.refresh();
    // shard 2's lease expired and another run took it meanwhile
    redis.sync().set(timers.leaseKey(2), "run-c");

    nanos.addAndGet(ShardLeaseSet.LEASE_REFRESH_MILLIS * 1_000_000);
    a.refresh();

    assertThat(a.held()).containsExactly(0, 1, 3);
    a.releaseAll();
    assertThat(redis.sync().get(timers.leaseKey(2))).isEqualTo("run-c");
    assertThat(redis.sync().exists(timers.leaseKey(0), timers.leaseKey(1), timers.leaseKey(3)))
        .isZero();
  }

  @Test
  void whenNoLeaseCallSucceedsTheRefreshThrowsHoldsNothingAndCountsAShardError() {
    RedisConnector closed = RedisConnector.connect(servers.redisUri(), false);
    closed.close();
    ShardLeaseSet a =
        new ShardLeaseSet(timers, new ShardLeases(closed.sync()), metrics, "run-a", 1, nanos::get);

    assertThatThrownBy(a::refresh).isInstanceOf(RuntimeException.class);

    assertThat(a.held()).isEmpty();
    assertThat(metrics.counter("sweep_shard_errors")).isEqualTo(1);
    assertThat(redis.sync().exists(timers.leaseKey(0))).isZero();
  }

  /**
   * One run expected at a time (the minute schedule): a run started later takes every shard, the
   * older one gives them back and has handed over once the newer holds them all.
   */
  @Test
  void anOlderRunHandsOverOnceTheRunStartedAfterItHoldsEveryShard() {
    ShardLeaseSet a = leaseSet(RunTokens.newToken(1_000), 1);
    ShardLeaseSet b = leaseSet(RunTokens.newToken(2_000), 1);
    a.refresh();
    b.refresh();
    assertThat(a.held()).containsExactly(0, 1, 2, 3);
    assertThat(b.held()).isEmpty();
    assertThat(a.handedOver()).isFalse();

    // a's next refresh sees b: it gives every shard back, but b holds none yet
    advanceMillis(ShardLeaseSet.LEASE_REFRESH_MILLIS);
    a.refresh();
    assertThat(a.held()).isEmpty();
    assertThat(a.handedOver()).isFalse();

    // b, short of its share, refreshes after 50 ms (not 250) and takes them all
    advanceMillis(ShardLeaseSet.HANDOVER_REFRESH_MILLIS);
    b.refresh();
    assertThat(b.held()).containsExactly(0, 1, 2, 3);
    assertThat(b.handedOver()).isFalse();

    // a, handing over, looks again 50 ms later: every shard is b's
    advanceMillis(ShardLeaseSet.HANDOVER_REFRESH_MILLIS);
    a.refresh();
    assertThat(a.handedOver()).isTrue();
    a.releaseAll();
    assertThat(redis.sync().zrange(timers.sweepersKey(), 0, -1)).containsExactly(b.token());
  }

  @Test
  void anOlderRunSweepsAgainWhenTheRunStartedAfterItLeavesBeforeTakingTheShards() {
    ShardLeaseSet a = leaseSet(RunTokens.newToken(1_000), 1);
    ShardLeaseSet b = leaseSet(RunTokens.newToken(2_000), 1);
    a.refresh();
    b.refresh();
    advanceMillis(ShardLeaseSet.LEASE_REFRESH_MILLIS);
    a.refresh();
    assertThat(a.held()).isEmpty();

    // b is gone (its entry left or expired) without ever holding a shard
    redis.sync().zrem(timers.sweepersKey(), b.token());
    advanceMillis(ShardLeaseSet.HANDOVER_REFRESH_MILLIS);
    a.refresh();

    assertThat(a.handedOver()).isFalse();
    assertThat(a.held()).containsExactly(0, 1, 2, 3);
  }

  @Test
  void aRunOfAVersionWithoutStartTimesCountsAsOlderThanEveryNewRun() {
    // "f..." sorts after "0000000002000-..." as text; as a run it started before it
    ShardLeaseSet old = leaseSet("f47ac10b-58cc-4372-a567-0e02b2c3d479", 1);
    ShardLeaseSet fresh = leaseSet(RunTokens.newToken(2_000), 1);
    old.refresh();
    fresh.refresh();
    advanceMillis(ShardLeaseSet.LEASE_REFRESH_MILLIS);
    old.refresh();
    fresh.refresh();

    assertThat(fresh.held()).isNotEmpty();
    assertThat(old.held()).isEmpty();
  }
}
