package io.ordertimeout.sweep;

import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.redis.TimerIndex;
import io.ordertimeout.redis.TimerIndex.TimerSet;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Claims a shard's due timers of every tenant and kind, sharing each kind's budget between tenants
 * so that one tenant's backlog cannot delay another's deadlines (a flash sale of 50,000 orders due
 * in one second must not hold back another tenant's closes behind it).
 *
 * <p>First call: every tenant may claim an equal share of the kind's budget ({@code budget /
 * tenants}, at least 1). Second call, only when some tenant took its whole share and budget is left
 * over: the leftover is shared by those tenants. So an idle tenant costs one empty range read, a
 * lone busy tenant still gets the whole budget (in two round trips instead of one), and a busy
 * tenant next to another never takes more than the budget minus what the other's due timers need.
 */
final class FairClaim {
  /**
   * What one shard's claim took, whether some tenant may have more due already, and the shard's
   * earliest score left as the claim's script read it (after a second call, the lower of the two:
   * early is safe for a wake-up, late is not).
   */
  record Claimed(Map<TimerSet, List<String>> sets, boolean full, OptionalLong next) {}

  private FairClaim() {}

  /**
   * The claims of several shards, each shared between tenants as above, in one first call for all
   * of them and one second call for those with leftovers ({@code shards} more than one only where
   * {@link TimerIndex#crossShardCalls}); {@code acks} per shard ride on the first call. A set that
   * {@code known} holds as not due is left out of the call unless it has acknowledgements; a shard
   * with no set left and none to acknowledge makes no call. The calls made (none, one, or two with
   * leftovers) are added to {@code calls}.
   */
  static Map<Integer, Claimed> claim(
      TimerIndex timers,
      List<Integer> shards,
      long nowMillis,
      long leaseMillis,
      List<String> tenants,
      Map<DeadlineKind, Integer> budgets,
      Map<Integer, Map<TimerSet, List<String>>> acks,
      SetNexts known,
      AtomicLong calls) {
    Map<TimerSet, Integer> shares = new LinkedHashMap<>();
    budgets.forEach(
        (kind, budget) -> {
          int share = budget <= 0 ? 0 : Math.max(1, budget / tenants.size());
          tenants.forEach(t -> shares.put(new TimerSet(t, kind), share));
        });
    Map<Integer, Map<TimerSet, Integer>> asked = new LinkedHashMap<>();
    Map<Integer, OptionalLong> leftOut = new LinkedHashMap<>();
    List<TimerIndex.ShardClaim> firsts = new ArrayList<>();
    for (int shard : shards) {
      Map<TimerSet, List<String>> shardAcks = acks.getOrDefault(shard, Map.of());
      Map<TimerSet, Integer> limits = new LinkedHashMap<>();
      OptionalLong notDue = OptionalLong.empty();
      for (Map.Entry<TimerSet, Integer> share : shares.entrySet()) {
        OptionalLong next = known.notDue(shard, share.getKey(), nowMillis);
        if (next.isEmpty() || shardAcks.containsKey(share.getKey())) {
          limits.put(share.getKey(), share.getValue());
        } else if (next.getAsLong() != Long.MAX_VALUE) {
          notDue = lower(notDue, next);
        }
      }
      asked.put(shard, limits);
      leftOut.put(shard, notDue);
      if (!limits.isEmpty() || !shardAcks.isEmpty()) {
        firsts.add(new TimerIndex.ShardClaim(shard, limits, shardAcks));
      }
    }
    Map<Integer, TimerIndex.Claim> first = Map.of();
    if (!firsts.isEmpty()) {
      first = timers.claim(firsts, nowMillis, leaseMillis);
      calls.incrementAndGet();
    }
    Map<Integer, Map<TimerSet, List<String>>> got = new LinkedHashMap<>();
    Map<Integer, Map<TimerSet, Integer>> seconds = new LinkedHashMap<>();
    List<TimerIndex.ShardClaim> secondCalls = new ArrayList<>();
    for (int shard : shards) {
      Map<TimerSet, List<String>> sets = new LinkedHashMap<>();
      TimerIndex.Claim answer = first.get(shard);
      if (answer != null) {
        answer.claimed().forEach((set, ids) -> sets.put(set, new ArrayList<>(ids)));
        answer.nexts().forEach((set, next) -> known.claimed(shard, set, next));
      }
      got.put(shard, sets);
      Map<TimerSet, Integer> left = leftovers(budgets, asked.get(shard), sets);
      seconds.put(shard, left);
      if (!left.isEmpty()) {
        secondCalls.add(new TimerIndex.ShardClaim(shard, left, Map.of()));
      }
    }
    Map<Integer, TimerIndex.Claim> second = Map.of();
    if (!secondCalls.isEmpty()) {
      second = timers.claim(secondCalls, nowMillis, leaseMillis);
      calls.incrementAndGet();
    }
    Map<Integer, Claimed> claimed = new LinkedHashMap<>();
    for (int shard : shards) {
      Map<TimerSet, List<String>> sets = got.get(shard);
      TimerIndex.Claim answer = first.get(shard);
      // the sets left out count with what their last claim left: the shard's wake-up stays right
      OptionalLong next =
          lower(answer == null ? OptionalLong.empty() : answer.next(), leftOut.get(shard));
      TimerIndex.Claim more = second.get(shard);
      if (more != null) {
        more.claimed().forEach((set, ids) -> sets.get(set).addAll(ids));
        more.nexts().forEach((set, left) -> known.claimed(shard, set, left));
        next = lower(next, more.next());
      }
      boolean full = false;
      for (Map.Entry<TimerSet, List<String>> set : sets.entrySet()) {
        int limit =
            asked.get(shard).get(set.getKey()) + seconds.get(shard).getOrDefault(set.getKey(), 0);
        full |= limit > 0 && set.getValue().size() >= limit;
      }
      claimed.put(shard, new Claimed(sets, full, next));
    }
    return claimed;
  }

  private static OptionalLong lower(OptionalLong a, OptionalLong b) {
    if (a.isEmpty()) {
      return b;
    }
    return b.isEmpty() ? a : OptionalLong.of(Math.min(a.getAsLong(), b.getAsLong()));
  }

  /**
   * The second call's limits: each kind's unused budget, shared by the tenants that filled theirs.
   */
  private static Map<TimerSet, Integer> leftovers(
      Map<DeadlineKind, Integer> budgets,
      Map<TimerSet, Integer> shares,
      Map<TimerSet, List<String>> got) {
    Map<TimerSet, Integer> seconds = new LinkedHashMap<>();
    budgets.forEach(
        (kind, budget) -> {
          int used = 0;
          List<TimerSet> hungry = new ArrayList<>();
          for (Map.Entry<TimerSet, Integer> share : shares.entrySet()) {
            if (share.getKey().kind() != kind) {
              continue;
            }
            int took = got.get(share.getKey()).size();
            used += took;
            if (share.getValue() > 0 && took >= share.getValue()) {
              hungry.add(share.getKey());
            }
          }
          int left = budget - used;
          if (left > 0 && !hungry.isEmpty()) {
            int each = Math.max(1, left / hungry.size());
            hungry.forEach(set -> seconds.put(set, each));
          }
        });
    return seconds;
  }
}
