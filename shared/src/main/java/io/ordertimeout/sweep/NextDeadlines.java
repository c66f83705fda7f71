package io.ordertimeout.sweep;

import io.ordertimeout.redis.TimerIndex;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.OptionalLong;
import java.util.function.LongSupplier;

/**
 * Per shard, its earliest timer score when last read, so an idle sweep wakes when the first timer
 * is due and a wake-up claims only the shards that are due: in steady traffic a wake-up costs one
 * claim and one read of the shard that was due, not a claim and a read of all 16 shards. A read of
 * several shards is one script call on a single-node Redis (16 calls a poll before), one per shard
 * on a cluster.
 *
 * <p>The cache is trusted for one poll after a full read: a timer scheduled meanwhile with an
 * earlier deadline (a not-yet-due order moved back by a closer, an order placed with a deadline
 * under 50 ms away) waits at most one poll longer, as it would have without the cache. Used by the
 * sweep thread only.
 */
final class NextDeadlines {
  private static final long UNKNOWN = Long.MIN_VALUE;

  private final TimerIndex timers;
  private final long pollMillis;
  private final LongSupplier nanoTime;

  /** Per shard: its earliest score when last read (MAX_VALUE: empty), or UNKNOWN since a claim. */
  private final long[] nextDue;

  /** nanoTime of the last read of every held shard; 0: never. */
  private long readAt;

  NextDeadlines(TimerIndex timers, Duration poll) {
    this(timers, poll, System::nanoTime);
  }

  NextDeadlines(TimerIndex timers, Duration poll, LongSupplier nanoTime) {
    this.timers = timers;
    this.pollMillis = poll.toMillis();
    this.nanoTime = nanoTime;
    this.nextDue = new long[timers.shards()];
    Arrays.fill(nextDue, UNKNOWN);
  }

  /** Whether the last full read is under one poll old. */
  boolean trusted() {
    return readAt != 0 && (nanoTime.getAsLong() - readAt) / 1_000_000 < pollMillis;
  }

  /** Whether {@code shard}'s cached next deadline is known and after {@code nowMillis}. */
  boolean laterThan(int shard, long nowMillis) {
    return nextDue[shard] != UNKNOWN && nextDue[shard] > nowMillis;
  }

  /** Forgets a shard's next deadline: it is about to be claimed, so it must be read again. */
  void forget(int shard) {
    nextDue[shard] = UNKNOWN;
  }

  /**
   * A shard's earliest score as its claim script read it right after claiming ({@code
   * TimerIndex.claim}): the shard need not be read again before the next wait.
   */
  void claimed(int shard, OptionalLong next) {
    nextDue[shard] = next.isPresent() ? next.getAsLong() : Long.MAX_VALUE;
  }

  /**
   * How long to wait for the earliest deadline of {@code held}, at most one poll and at most what
   * remains of the poll since the last full read. Reads the shards whose deadline is unknown, or
   * all of them when the cache is no longer trusted.
   */
  long waitMillis(Collection<Integer> held, Collection<String> tenants, long nowMillis) {
    long wait = pollMillis;
    if (held.isEmpty()) {
      return wait;
    }
    boolean full = !trusted();
    List<Integer> unknown = new ArrayList<>();
    for (int shard : held) {
      if (full || nextDue[shard] == UNKNOWN) {
        unknown.add(shard);
      }
    }
    read(unknown, tenants);
    for (int shard : held) {
      if (nextDue[shard] != Long.MAX_VALUE) {
        wait = Math.min(wait, Math.max(1, nextDue[shard] - nowMillis));
      }
    }
    if (full) {
      readAt = nanoTime.getAsLong();
    }
    return Math.min(wait, Math.max(1, pollMillis - (nanoTime.getAsLong() - readAt) / 1_000_000));
  }

  /** Reads {@code shardIds} in one call where Redis is one node, else one call per shard. */
  private void read(List<Integer> shardIds, Collection<String> tenants) {
    if (shardIds.isEmpty()) {
      return;
    }
    List<List<Integer>> calls =
        timers.crossShardCalls() ? List.of(shardIds) : shardIds.stream().map(List::of).toList();
    for (List<Integer> call : calls) {
      timers
          .nextDeadlines(call, tenants)
          .forEach(
              (shard, next) ->
                  nextDue[shard] = next.isPresent() ? next.getAsLong() : Long.MAX_VALUE);
    }
  }
}
