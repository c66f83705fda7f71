package io.ordertimeout.sweep;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.redis.TimerIndex;
import io.ordertimeout.redis.TimerIndex.TimerSet;
import io.ordertimeout.testing.TestStack;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * A tenant's backlog takes at most what other tenants' due timers leave of a shard's claim budget,
 * and a tenant alone still gets all of it.
 */
// alone in its JVM while it runs (the fast tier runs classes in parallel): it resets and reads
// Redis's command statistics, which count every client's calls
@Isolated
class FairClaimTest {
  private static final TimerSet A = new TimerSet("shop-a", DeadlineKind.PAYMENT_TIMEOUT);
  private static final TimerSet B = new TimerSet("shop-b", DeadlineKind.PAYMENT_TIMEOUT);
  private static final Duration POLL = Duration.ofMillis(50);

  private final TestStack stack = TestStack.create("fair-claim");
  private final TimerIndex timers = stack.app().timers();
  private final long now = stack.app().time().nowMillis();

  @AfterEach
  void tearDown() {
    stack.close();
  }

  /** {@code count} due timers of {@code set} in shard 0 (ids chosen to land there). */
  private void due(TimerSet set, String prefix, int count) {
    Map<String, Long> deadlines = new HashMap<>();
    for (int i = 0; deadlines.size() < count; i++) {
      String id = prefix + i;
      if (timers.shardOf(id) == 0) {
        deadlines.put(id, now - 1_000 - i);
      }
    }
    timers.scheduleAll(set.tenantId(), set.kind(), deadlines);
  }

  private FairClaim.Claimed claim(List<String> tenants, int budget) {
    return FairClaim.claim(
            timers,
            List.of(0),
            now,
            30_000,
            tenants,
            Map.of(DeadlineKind.PAYMENT_TIMEOUT, budget),
            Map.of(),
            new SetNexts(POLL),
            new AtomicLong())
        .get(0);
  }

  @Test
  void aFlashSaleLeavesAnotherTenantsDueTimersTheirShare() {
    due(A, "sale-", 1_000);
    due(B, "steady-", 5);

    FairClaim.Claimed claimed = claim(List.of("shop-a", "shop-b"), 200);

    assertThat(claimed.sets().get(B)).hasSize(5);
    assertThat(claimed.sets().get(A)).hasSize(195);
    assertThat(claimed.full()).isTrue();
    // claimed timers are leased (score now + lease): the next claim sees none of them
    FairClaim.Claimed next = claim(List.of("shop-a", "shop-b"), 200);
    assertThat(next.sets().get(B)).isEmpty();
    assertThat(next.sets().get(A)).hasSize(200).doesNotContainAnyElementsOf(claimed.sets().get(A));
  }

  @Test
  void aTenantAloneGetsTheWholeBudgetAndIdleTenantsCostNothingOfIt() {
    due(A, "sale-", 1_000);

    assertThat(claim(List.of("shop-a"), 200).sets().get(A)).hasSize(200);
    FairClaim.Claimed withIdle = claim(List.of("idle-1", "shop-a", "idle-2", "idle-3"), 200);
    assertThat(withIdle.sets().get(A)).hasSize(200);
    assertThat(withIdle.full()).isTrue();
  }

  @Test
  void twoBusyTenantsShareTheBudgetEqually() {
    due(A, "sale-", 1_000);
    due(B, "other-", 1_000);

    FairClaim.Claimed claimed = claim(List.of("shop-a", "shop-b"), 200);

    assertThat(claimed.sets().get(A)).hasSize(100);
    assertThat(claimed.sets().get(B)).hasSize(100);
  }

  @Test
  void aShardWithNothingDueIsNotFull() {
    due(B, "steady-", 3);
    FairClaim.Claimed claimed = claim(List.of("shop-a", "shop-b"), 200);
    assertThat(claimed.sets().get(B)).hasSize(3);
    assertThat(claimed.full()).isFalse();
  }

  @Test
  void severalShardsAreClaimedInOneCallEachShardSharedOnItsOwn() {
    // shard 0: a flash sale of A beside 5 of B; shard 1: 3 of A only; shard 2: nothing due
    due(A, "sale-", 300);
    due(B, "steady-", 5);
    Map<String, Long> shard1 = new HashMap<>();
    for (int i = 0; shard1.size() < 3; i++) {
      if (timers.shardOf("one-" + i) == 1) {
        shard1.put("one-" + i, now - 500);
      }
    }
    timers.scheduleAll(A.tenantId(), A.kind(), shard1);
    var redis = stack.app().redis().sync();
    redis.configResetstat();

    Map<Integer, FairClaim.Claimed> claimed =
        FairClaim.claim(
            timers,
            List.of(0, 1, 2),
            now,
            30_000,
            List.of("shop-a", "shop-b"),
            Map.of(DeadlineKind.PAYMENT_TIMEOUT, 200),
            Map.of(),
            new SetNexts(POLL),
            new AtomicLong());

    assertThat(claimed.get(0).sets().get(B)).hasSize(5);
    assertThat(claimed.get(0).sets().get(A)).as("the leftover of B's share").hasSize(195);
    assertThat(claimed.get(0).full()).isTrue();
    assertThat(claimed.get(1).sets().get(A)).containsExactlyInAnyOrderElementsOf(shard1.keySet());
    assertThat(claimed.get(1).full()).isFalse();
    assertThat(claimed.get(1).next()).as("shard 1's leased timers").hasValue(now + 30_000);
    assertThat(claimed.get(2).sets().get(A)).isEmpty();
    assertThat(claimed.get(2).next()).isEmpty();
    assertThat(claimed.get(0).next().getAsLong())
        .as("A's 105 timers left due in shard 0")
        .isLessThanOrEqualTo(now - 1_000);
    // a first call for the three shards, a second for shard 0's leftover only
    assertThat(redis.info("commandstats")).contains("cmdstat_evalsha:calls=2,");
  }

  /**
   * A claim of shard 0 for both tenants through {@code known}, counting its calls in {@code calls}.
   */
  private FairClaim.Claimed claim(
      SetNexts known, Map<TimerSet, List<String>> acks, AtomicLong calls) {
    return FairClaim.claim(
            timers,
            List.of(0),
            now,
            30_000,
            List.of("shop-a", "shop-b"),
            Map.of(DeadlineKind.PAYMENT_TIMEOUT, 200),
            acks.isEmpty() ? Map.of() : Map.of(0, acks),
            known,
            calls)
        .get(0);
  }

  @Test
  void aSetWithNothingDueIsLeftOutForAPollAndCountsInTheShardsNextDeadline() {
    due(A, "sale-", 3);
    String later = "later-0";
    for (int i = 1; timers.shardOf(later) != 0; i++) {
      later = "later-" + i;
    }
    timers.scheduleAll(B.tenantId(), B.kind(), Map.of(later, now + 10_000));
    long[] nanos = {0};
    SetNexts known = new SetNexts(POLL, () -> nanos[0]);
    AtomicLong calls = new AtomicLong();

    FairClaim.Claimed first = claim(known, Map.of(), calls);
    assertThat(first.sets().get(A)).hasSize(3);
    assertThat(first.sets().get(B)).isEmpty();
    assertThat(calls).hasValue(1);

    // B gets two due timers; within the poll its last claim (next due in 10 s) stands
    due(B, "late-", 2);
    FairClaim.Claimed second = claim(known, Map.of(), calls);
    assertThat(second.sets()).as("both sets left out: A leased, B not due when read").isEmpty();
    assertThat(calls).as("no call for a shard with every set left out").hasValue(1);
    assertThat(second.next()).as("B's deadline, known from its last claim").hasValue(now + 10_000);
    assertThat(second.full()).isFalse();

    nanos[0] += POLL.toNanos();
    FairClaim.Claimed third = claim(known, Map.of(), calls);
    assertThat(third.sets().get(B)).as("after a poll every set is claimed again").hasSize(2);
    assertThat(third.sets().get(A)).isEmpty();
    assertThat(calls).hasValue(2);
    assertThat(third.next()).hasValue(now + 10_000);
  }

  @Test
  void aSetLeftOutIsStillCalledForItsAcknowledgements() {
    due(A, "sale-", 3);
    SetNexts known = new SetNexts(POLL, () -> 0L);
    AtomicLong calls = new AtomicLong();
    List<String> taken = claim(known, Map.of(), calls).sets().get(A);
    assertThat(taken).hasSize(3);

    FairClaim.Claimed acked = claim(known, Map.of(A, taken), calls);

    assertThat(calls).hasValue(2);
    assertThat(acked.sets()).as("nothing claimed: A leased, B empty").doesNotContainKey(B);
    assertThat(stack.app().redis().sync().zcard(timers.timersKey(A.tenantId(), 0, A.kind())))
        .as("A's acknowledged timers removed")
        .isZero();
    assertThat(acked.next()).as("A empty now, B empty").isEmpty();
  }
}
