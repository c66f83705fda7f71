package io.ordertimeout.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.redis.TimerIndex.TimerSet;
import io.ordertimeout.testing.TestStack;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The claim script answers the shard's earliest score left after claiming (claimDue-4.lua), which
 * the sweep uses as the shard's next deadline instead of reading it again: it must be the true
 * earliest score over every claimed set's key, claimed members' lease expiries included. It also
 * removes, before claiming, the timers the sweep acknowledges with the claim.
 */
class TimerClaimNextTest {
  private TestStack stack;

  @AfterEach
  void tearDown() {
    stack.close();
  }

  @Test
  void aClaimAnswersTheEarliestScoreLeftOverEveryKindAndTenantOfTheShard() {
    stack = TestStack.create("claim-next", c -> c.toBuilder().timerShards(1).build(), null);
    TimerIndex timers = stack.app().timers();
    long now = stack.app().time().nowMillis();
    String other = "tenant-b";
    timers.schedule(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, "due-1", now - 2_000);
    timers.schedule(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, "due-2", now - 1_000);
    timers.schedule(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, "later", now + 9_000);
    timers.schedule(TenantIds.DEFAULT, DeadlineKind.AUTO_RECEIPT, "o-receipt", now + 7_000);
    timers.schedule(other, DeadlineKind.PAYMENT_TIMEOUT, "b-order", now + 5_000);
    Map<TimerSet, Integer> limits = new LinkedHashMap<>();
    limits.put(new TimerSet(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT), 1);
    limits.put(new TimerSet(TenantIds.DEFAULT, DeadlineKind.AUTO_RECEIPT), 10);
    limits.put(new TimerSet(other, DeadlineKind.PAYMENT_TIMEOUT), 10);

    // limit 1: due-2 is left due, so the shard's next score is its deadline (now - 1 s)
    TimerIndex.Claim first = timers.claim(0, now, 60_000, limits);
    assertThat(first.claimed().get(limits.keySet().iterator().next())).containsExactly("due-1");
    assertThat(first.next()).isEqualTo(OptionalLong.of(now - 1_000));

    // the rest claimed: the earliest left is tenant-b's order at now + 5 s, before the leases
    TimerIndex.Claim second = timers.claim(0, now, 60_000, limits);
    assertThat(second.claimed().values()).containsExactly(List.of("due-2"), List.of(), List.of());
    assertThat(second.next()).isEqualTo(OptionalLong.of(now + 5_000));

    // only leased members and later deadlines left in the claimed keys: still the true minimum
    timers.remove(other, DeadlineKind.PAYMENT_TIMEOUT, List.of("b-order"));
    timers.remove(TenantIds.DEFAULT, DeadlineKind.AUTO_RECEIPT, List.of("o-receipt"));
    assertThat(timers.claim(0, now, 60_000, limits).next()).isEqualTo(OptionalLong.of(now + 9_000));
    timers.remove(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, List.of("later"));
    assertThat(timers.claim(0, now, 60_000, limits).next())
        .as("the two claimed members' lease expiry")
        .isEqualTo(OptionalLong.of(now + 60_000));
    timers.remove(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, List.of("due-1", "due-2"));
    assertThat(timers.claim(0, now, 60_000, limits).next()).isEmpty();
  }

  @Test
  void oneCallReadsTheNextDeadlineOfSeveralShardsAsOneCallPerShardDoes() {
    stack = TestStack.create("next-shards", c -> c.toBuilder().timerShards(4).build(), null);
    TimerIndex timers = stack.app().timers();
    assertThat(timers.crossShardCalls()).as("the embedded Redis is one node").isTrue();
    long now = stack.app().time().nowMillis();
    String other = "tenant-b";
    String[] ids = new String[4];
    for (int shard = 0; shard < 4; shard++) {
      int s = shard;
      ids[shard] =
          java.util.stream.IntStream.range(0, 1_000)
              .mapToObj(i -> "o-" + i)
              .filter(id -> timers.shardOf(id) == s)
              .findFirst()
              .orElseThrow();
    }
    // shard 0: two kinds of one tenant; shard 1: another tenant's earlier one; shard 2: empty;
    // shard 3: a claimed member, whose score is its lease's expiry
    timers.schedule(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, ids[0], now + 9_000);
    timers.schedule(TenantIds.DEFAULT, DeadlineKind.AUTO_RECEIPT, ids[0], now + 4_000);
    timers.schedule(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, ids[1], now + 8_000);
    timers.schedule(other, DeadlineKind.PAYMENT_TIMEOUT, ids[1], now + 3_000);
    timers.schedule(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, ids[3], now - 1_000);
    timers.claim(
        3, now, 60_000, Map.of(new TimerSet(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT), 10));
    List<String> tenants = List.of(TenantIds.DEFAULT, other);

    Map<Integer, OptionalLong> together = timers.nextDeadlines(List.of(3, 0, 2, 1), tenants);

    assertThat(together)
        .containsExactly(
            Map.entry(3, OptionalLong.of(now + 60_000)),
            Map.entry(0, OptionalLong.of(now + 4_000)),
            Map.entry(2, OptionalLong.empty()),
            Map.entry(1, OptionalLong.of(now + 3_000)));
    for (int shard = 0; shard < 4; shard++) {
      assertThat(timers.nextDeadline(shard, tenants)).isEqualTo(together.get(shard));
    }
    assertThat(timers.nextDeadlines(List.of(0, 1), List.of()))
        .as("no tenant: nothing due anywhere")
        .containsExactly(Map.entry(0, OptionalLong.empty()), Map.entry(1, OptionalLong.empty()));
    assertThat(timers.nextDeadlines(List.of(), tenants)).as("no shard: no call").isEmpty();

    TimerIndex onACluster = new TimerIndex(stack.app().redis().sync(), "unused-prefix", 4, false);
    assertThatThrownBy(() -> onACluster.nextDeadlines(List.of(0, 1), tenants))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("one shard on a Redis cluster");
  }

  @Test
  void aRemovalAcrossShardsTakesOnlyItsTenantsAndKindsMembersAsAZremPerShardDoes() {
    stack = TestStack.create("remove-shards", c -> c.toBuilder().timerShards(16).build(), null);
    TimerIndex timers = stack.app().timers();
    assertThat(timers.crossShardCalls()).as("the embedded Redis is one node").isTrue();
    TimerIndex onACluster =
        new TimerIndex(stack.app().redis().sync(), stack.app().config().keyPrefix(), 16, false);
    long now = stack.app().time().nowMillis();
    String other = "tenant-b";
    // 5,000 orders over the 16 shards: more than one call's 2,000 members, chunks of 200 inside
    Map<String, Long> deadlines = new LinkedHashMap<>();
    for (int i = 0; i < 5_000; i++) {
      deadlines.put(String.format("o-%04d", i), now + 60_000 + i);
    }
    List<String> ids = new ArrayList<>(deadlines.keySet());
    timers.scheduleAll(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, deadlines);
    timers.scheduleAll(TenantIds.DEFAULT, DeadlineKind.AUTO_RECEIPT, deadlines);
    timers.scheduleAll(other, DeadlineKind.PAYMENT_TIMEOUT, deadlines);

    List<String> gone = ids.subList(0, 4_500);
    timers.remove(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, gone);
    // the same removal where Redis is a cluster (a ZREM per shard) of another tenant's same ids
    onACluster.remove(other, DeadlineKind.PAYMENT_TIMEOUT, gone);
    // ids of no timer and an empty batch remove nothing
    timers.remove(TenantIds.DEFAULT, DeadlineKind.AUTO_RECEIPT, List.of("no-such-1", "no-such-2"));
    timers.remove(TenantIds.DEFAULT, DeadlineKind.AUTO_RECEIPT, List.of());

    var redis = stack.app().redis().sync();
    for (String tenant : List.of(TenantIds.DEFAULT, other)) {
      List<String> left = new ArrayList<>();
      for (int shard = 0; shard < 16; shard++) {
        left.addAll(
            redis.zrange(timers.timersKey(tenant, shard, DeadlineKind.PAYMENT_TIMEOUT), 0, -1));
      }
      assertThat(left).as(tenant).containsExactlyInAnyOrderElementsOf(ids.subList(4_500, 5_000));
    }
    assertThat(timers.deadlineOf(TenantIds.DEFAULT, DeadlineKind.AUTO_RECEIPT, "o-0000"))
        .as("another kind's timer of a removed order stays")
        .hasValue(now + 60_000);
    long receipts = 0;
    for (int shard = 0; shard < 16; shard++) {
      receipts +=
          redis.zcard(timers.timersKey(TenantIds.DEFAULT, shard, DeadlineKind.AUTO_RECEIPT));
    }
    assertThat(receipts).isEqualTo(5_000);
  }

  @Test
  void acknowledgementsRideOnTheClaimAndGoBeforeIt() {
    stack = TestStack.create("claim-acks", c -> c.toBuilder().timerShards(1).build(), null);
    TimerIndex timers = stack.app().timers();
    long now = stack.app().time().nowMillis();
    String other = "tenant-b";
    TimerSet mine = new TimerSet(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT);
    TimerSet theirs = new TimerSet(other, DeadlineKind.PAYMENT_TIMEOUT);
    // 450 finished orders (more than one ZREM chunk of 200), claimed before: leased now
    List<String> finished = new ArrayList<>();
    Map<String, Long> deadlines = new LinkedHashMap<>();
    for (int i = 0; i < 450; i++) {
      finished.add(String.format("done-%03d", i));
      deadlines.put(finished.get(i), now + 60_000);
    }
    timers.scheduleAll(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, deadlines);
    timers.schedule(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, "due-1", now - 1_000);
    timers.schedule(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, "later", now + 9_000);
    timers.schedule(other, DeadlineKind.PAYMENT_TIMEOUT, "b-done", now + 30_000);
    timers.schedule(other, DeadlineKind.PAYMENT_TIMEOUT, "b-due", now - 500);

    // tenant-b is acknowledged only (not claimed from this call: limit 0 for its set)
    TimerIndex.Claim claim =
        timers.claim(
            0, now, 60_000, Map.of(mine, 10), Map.of(mine, finished, theirs, List.of("b-done")));

    assertThat(claim.claimed()).containsOnlyKeys(mine);
    assertThat(claim.claimed().get(mine)).containsExactly("due-1");
    assertThat(claim.next())
        .as("the acknowledged timers are gone before the next deadline is read: b-due is left")
        .isEqualTo(OptionalLong.of(now - 500));
    assertThat(timers.deadlineOf(TenantIds.DEFAULT, "done-000")).isEmpty();
    assertThat(timers.deadlineOf(TenantIds.DEFAULT, "done-449")).isEmpty();
    assertThat(timers.deadlineOf(other, "b-done")).isEmpty();
    assertThat(timers.deadlineOf(other, "b-due")).as("not claimed: limit 0").hasValue(now - 500);
    assertThat(timers.deadlineOf(TenantIds.DEFAULT, "later")).hasValue(now + 9_000);
    assertThat(timers.deadlineOf(TenantIds.DEFAULT, "due-1")).hasValue(now + 60_000);
    // acknowledging again is harmless: nothing left to remove, the claim goes on
    assertThat(
            timers
                .claim(0, now, 60_000, Map.of(mine, 10), Map.of(mine, List.of("done-000")))
                .claimed()
                .get(mine))
        .isEmpty();
  }

  @Test
  void aSingleNodeTakesSeveralShardsInOneCallAClusterOneShardACall() {
    stack = TestStack.create("claim-shards", c -> c.toBuilder().timerShards(4).build(), null);
    TimerIndex timers = stack.app().timers();
    assertThat(timers.crossShardCalls()).as("the embedded Redis is one node").isTrue();
    long now = stack.app().time().nowMillis();
    TimerSet mine = new TimerSet(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT);
    String[] due = new String[4];
    String[] done = new String[4];
    for (int i = 0, found = 0; found < 8; i++) {
      String id = "o-" + i;
      int shard = timers.shardOf(id);
      if (due[shard] == null) {
        due[shard] = id;
        found++;
      } else if (done[shard] == null) {
        done[shard] = id;
        found++;
      }
    }
    for (int shard = 0; shard < 4; shard++) {
      timers.schedule(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, due[shard], now - shard);
      timers.schedule(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, done[shard], now + 60_000);
    }
    timers.schedule(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, "o-later", now + 9_000);
    int laterShard = timers.shardOf("o-later");

    // shards 0 and 1 claimed, shard 2 only acknowledged, in one call
    Map<Integer, TimerIndex.Claim> claims =
        timers.claim(
            List.of(
                new TimerIndex.ShardClaim(0, Map.of(mine, 10), Map.of()),
                new TimerIndex.ShardClaim(1, Map.of(mine, 10), Map.of(mine, List.of(done[1]))),
                new TimerIndex.ShardClaim(2, Map.of(), Map.of(mine, List.of(done[2])))),
            now,
            60_000);

    assertThat(claims.get(0).claimed().get(mine)).containsExactly(due[0]);
    assertThat(claims.get(1).claimed().get(mine)).containsExactly(due[1]);
    assertThat(claims.get(2).claimed()).isEmpty();
    assertThat(timers.deadlineOf(TenantIds.DEFAULT, done[1])).isEmpty();
    assertThat(timers.deadlineOf(TenantIds.DEFAULT, done[2])).isEmpty();
    assertThat(timers.deadlineOf(TenantIds.DEFAULT, done[0])).hasValue(now + 60_000);
    assertThat(timers.deadlineOf(TenantIds.DEFAULT, due[2])).as("not claimed").hasValue(now - 2);
    // each shard's next deadline is its own keys' earliest score
    assertThat(claims.get(2).next()).hasValue(now - 2);
    assertThat(claims.get(1).next()).hasValue(laterShard == 1 ? now + 9_000 : now + 60_000);

    TimerIndex oneShardACall =
        new TimerIndex(stack.app().redis().sync(), stack.app().config().keyPrefix(), 4);
    assertThatThrownBy(
            () ->
                oneShardACall.claim(
                    List.of(
                        new TimerIndex.ShardClaim(0, Map.of(mine, 1), Map.of()),
                        new TimerIndex.ShardClaim(1, Map.of(mine, 1), Map.of())),
                    now,
                    60_000))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("one shard on a Redis cluster");
  }
}
