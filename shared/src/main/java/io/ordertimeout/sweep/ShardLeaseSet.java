package io.ordertimeout.sweep;

import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.redis.ShardLeases;
import io.ordertimeout.redis.TimerIndex;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The timer shards one sweeper run holds, by a Redis lease per shard under the run's token:
 * refreshed (renewed, free shards taken, lost ones dropped) at most every {@link
 * #LEASE_REFRESH_MILLIS}, released when the run ends. One active sweeper per shard only saves work:
 * claims are atomic and closes are conditional updates.
 */
final class ShardLeaseSet {
  private static final Logger log = LoggerFactory.getLogger(ShardLeaseSet.class);

  /**
   * A shard lease outlives a stalled pass (one batch: a few hundred ms, WeChat timeouts included a
   * few s) but hands the shard over within 10 s when an invocation dies without releasing it.
   */
  static final Duration SHARD_LEASE = Duration.ofSeconds(10);

  /**
   * Leases are renewed (and free shards picked up) at most this often: often enough that the
   * minute-by-minute hand-over between overlapping invocations costs a quarter second, rarely
   * enough that an idle sweeper over 16 shards makes ~64 lease calls a second, not one per 50 ms
   * poll per shard.
   */
  static final long LEASE_REFRESH_MILLIS = 250;

  private final TimerIndex timers;
  private final ShardLeases leases;
  private final Metrics metrics;
  private final String token;
  private final LongSupplier nanoTime;
  private final TreeSet<Integer> held = new TreeSet<>();
  private long refreshedAt;
  private boolean everRefreshed;

  ShardLeaseSet(TimerIndex timers, ShardLeases leases, Metrics metrics, String token) {
    this(timers, leases, metrics, token, System::nanoTime);
  }

  ShardLeaseSet(
      TimerIndex timers, ShardLeases leases, Metrics metrics, String token, LongSupplier nanoTime) {
    this.timers = timers;
    this.leases = leases;
    this.metrics = metrics;
    this.token = token;
    this.nanoTime = nanoTime;
  }

  /** The shards held since the last refresh, in order (a read-only view). */
  SortedSet<Integer> held() {
    return Collections.unmodifiableSortedSet(held);
  }

  String token() {
    return token;
  }

  /**
   * Renews the held leases and takes free shards up to this run's share, unless the last refresh is
   * under {@link #LEASE_REFRESH_MILLIS} old. The share is the shard count over the live runs
   * (ShardLeases#join), rounded up: a run holding more gives the rest back, so a second run (an
   * overlapping invocation, another process) takes half within a refresh or two instead of waiting
   * for the first to end. Without the registry (its Redis node unreachable) a run takes every free
   * shard, as before. A shard whose lease call fails is given up for now (its lease expires by
   * itself); throws only when no shard is held at all.
   */
  void refresh() {
    long now = nanoTime.getAsLong() / 1_000_000;
    if (everRefreshed && now - refreshedAt < LEASE_REFRESH_MILLIS) {
      return;
    }
    everRefreshed = true;
    refreshedAt = now;
    int shards = timers.shards();
    int share = shards;
    try {
      share = share(shards, leases.join(timers.sweepersKey(), token, SHARD_LEASE.toMillis()));
    } catch (RuntimeException e) {
      log.warn("the sweeper registry is unreachable; taking every free shard: {}", e.toString());
    }
    RuntimeException firstFailure = null;
    // held ones first: a run renews what it has before it takes more
    for (int shard : new TreeSet<>(held)) {
      firstFailure = first(firstFailure, lease(shard));
    }
    while (held.size() > share) {
      int extra = held.last();
      held.remove(extra);
      firstFailure = first(firstFailure, release(extra));
    }
    for (int shard = 0; shard < shards && held.size() < share; shard++) {
      if (!held.contains(shard)) {
        firstFailure = first(firstFailure, lease(shard));
      }
    }
    if (firstFailure != null) {
      metrics.count("sweep_shard_errors", 1);
      if (held.isEmpty()) {
        throw firstFailure;
      }
      log.warn(
          "some shard leases could not be renewed; sweeping {}: {}", held, firstFailure.toString());
    }
  }

  /**
   * This run's share of {@code shards} among the {@code live} runs: an even split, the first runs
   * in token order taking one more while the split is uneven (4 shards, 3 runs: 2, 1, 1), so the
   * shares add up to the shard count and no run waits on another rounding up.
   */
  private int share(int shards, List<String> live) {
    int rank = live.indexOf(token);
    if (rank < 0) {
      // not in the registry yet (its write was lost): count it in last
      rank = live.size();
    }
    int runs = Math.max(live.size(), rank + 1);
    return shards / runs + (rank < shards % runs ? 1 : 0);
  }

  /** Takes or renews one shard's lease; answers the failure, if any. */
  private RuntimeException lease(int shard) {
    try {
      if (leases.acquire(timers.leaseKey(shard), token, SHARD_LEASE.toMillis())) {
        held.add(shard);
      } else {
        held.remove(shard);
      }
      return null;
    } catch (RuntimeException e) {
      // One cluster master down must not stall the shards the healthy masters serve: give this
      // shard up for now (its lease expires by itself) and sweep the others.
      held.remove(shard);
      return e;
    }
  }

  private RuntimeException release(int shard) {
    try {
      leases.release(timers.leaseKey(shard), token);
      return null;
    } catch (RuntimeException e) {
      return e;
    }
  }

  private static RuntimeException first(RuntimeException sofar, RuntimeException next) {
    return sofar == null ? next : sofar;
  }

  /** Releases every held lease; one that fails expires by itself within {@link #SHARD_LEASE}. */
  void releaseAll() {
    try {
      leases.leave(timers.sweepersKey(), token);
    } catch (RuntimeException e) {
      log.warn(
          "could not leave the sweeper registry (the entry expires by itself): {}", e.toString());
    }
    for (int shard : held) {
      try {
        leases.release(timers.leaseKey(shard), token);
      } catch (RuntimeException e) {
        log.warn(
            "could not release the lease of shard {} (it expires by itself): {}",
            shard,
            e.toString());
      }
    }
  }
}
