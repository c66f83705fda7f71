package io.ordertimeout.sweep;

import io.ordertimeout.redis.TimerIndex.TimerSet;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.LongSupplier;

/**
 * Per shard and timer set (a tenant's deadline kind), the earliest score its last claim left in it,
 * so a claim leaves out the sets with nothing due: a claim call read every tenant's every kind in
 * every shard it carried (two commands a set in the script, 64 sets a pass in the steady scenario,
 * where only the 16 payment-timeout sets hold timers), and Redis's time in the claims is per set
 * read.
 *
 * <p>What a set's claim left is trusted for one poll, as the shards' next deadlines are ({@link
 * NextDeadlines}): a timer scheduled meanwhile with an earlier deadline into a set left out waits
 * at most one poll longer; after it the set is claimed again whatever it held. Used by the sweep
 * thread only.
 */
final class SetNexts {
  private record Key(int shard, TimerSet set) {}

  /** A set's earliest score when its claim read it (MAX_VALUE: empty), and when that was. */
  private record Seen(long next, long atNanos) {}

  private final Map<Key, Seen> seen = new HashMap<>();
  private final long pollNanos;
  private final LongSupplier nanoTime;

  SetNexts(Duration poll) {
    this(poll, System::nanoTime);
  }

  SetNexts(Duration poll, LongSupplier nanoTime) {
    this.pollNanos = poll.toNanos();
    this.nanoTime = nanoTime;
  }

  /**
   * The set's earliest score if its last claim is under a poll old and left nothing due by {@code
   * nowMillis} (MAX_VALUE: it was empty); empty when the set must be claimed.
   */
  OptionalLong notDue(int shard, TimerSet set, long nowMillis) {
    Seen s = seen.get(new Key(shard, set));
    if (s == null || nanoTime.getAsLong() - s.atNanos >= pollNanos || s.next <= nowMillis) {
      return OptionalLong.empty();
    }
    return OptionalLong.of(s.next);
  }

  /** What a claim of the set left in it: its earliest score, or empty. */
  void claimed(int shard, TimerSet set, OptionalLong next) {
    seen.put(
        new Key(shard, set),
        new Seen(next.isPresent() ? next.getAsLong() : Long.MAX_VALUE, nanoTime.getAsLong()));
  }
}
