package io.ordertimeout.sweep;

import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.redis.ShardLeases;
import io.ordertimeout.redis.TimerIndex;
import java.time.Duration;
import java.util.Collections;
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
   * Renews the held leases and takes free shards, unless the last refresh is under {@link
   * #LEASE_REFRESH_MILLIS} old. A shard whose lease call fails is given up for now (its lease
   * expires by itself); throws only when no shard is held at all.
   */
  void refresh() {
    long now = nanoTime.getAsLong() / 1_000_000;
    if (everRefreshed && now - refreshedAt < LEASE_REFRESH_MILLIS) {
      return;
    }
    everRefreshed = true;
    refreshedAt = now;
    RuntimeException firstFailure = null;
    for (int shard = 0; shard < timers.shards(); shard++) {
      try {
        if (leases.acquire(timers.leaseKey(shard), token, SHARD_LEASE.toMillis())) {
          held.add(shard);
        } else {
          held.remove(shard);
        }
      } catch (RuntimeException e) {
        // One cluster master down must not stall the shards the healthy masters serve: give this
        // shard up for now (its lease expires by itself) and sweep the others.
        held.remove(shard);
        firstFailure = firstFailure == null ? e : firstFailure;
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

  /** Releases every held lease; one that fails expires by itself within {@link #SHARD_LEASE}. */
  void releaseAll() {
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
