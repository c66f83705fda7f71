package io.ordertimeout.sweep;

import io.ordertimeout.loop.RunTokens;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.redis.ShardLeases;
import io.ordertimeout.redis.TimerIndex;
import java.time.Duration;
import java.util.ArrayList;
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
 *
 * <p>The hand-over: of the live runs (the registry, in start order: RunTokens), the newest {@code
 * runs} share the shards; an older run gives its shards back and, once every shard is held by
 * another run, has handed over ({@link #handedOver()}) and ends. So coverage does not depend on
 * when the schedule fires: EventBridge Scheduler fires anywhere within the minute, two runs of a
 * {@code rate(1 minute)} schedule may start up to ~119 s apart, and a run keeps sweeping until its
 * successor has taken its shards or its own time is up. A successor that joined and died before
 * taking them leaves the registry within {@link #SHARD_LEASE}, and the older run sweeps again.
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

  /**
   * While a run holds less than its share (a new run whose predecessor is handing over) or hands
   * over, it refreshes every 50 ms, the sweep's poll: a shard given back is taken within about one
   * poll, so the hand-over costs its shards ~50 ms of sweeping, not a quarter second.
   */
  static final long HANDOVER_REFRESH_MILLIS = 50;

  private final TimerIndex timers;
  private final ShardLeases leases;
  private final Metrics metrics;
  private final String token;
  private final int runs;
  private final LongSupplier nanoTime;
  private final TreeSet<Integer> held = new TreeSet<>();
  private long refreshedAt;
  private boolean everRefreshed;
  private int share;
  private boolean retiring;
  private boolean handedOver;

  /** {@code runs}: how many runs are expected live at once (OTC_SWEEP_RUNS); they share. */
  ShardLeaseSet(TimerIndex timers, ShardLeases leases, Metrics metrics, String token, int runs) {
    this(timers, leases, metrics, token, runs, System::nanoTime);
  }

  ShardLeaseSet(
      TimerIndex timers,
      ShardLeases leases,
      Metrics metrics,
      String token,
      int runs,
      LongSupplier nanoTime) {
    if (runs < 1) {
      throw new IllegalArgumentException("runs must be >= 1, was " + runs);
    }
    this.timers = timers;
    this.leases = leases;
    this.metrics = metrics;
    this.token = token;
    this.runs = runs;
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
   * True once {@code runs} runs started after this one are live and every shard is held by another
   * run: this run has handed over and ends.
   */
  boolean handedOver() {
    return handedOver;
  }

  /**
   * Renews the held leases and takes free shards up to this run's share, unless the last refresh is
   * under {@link #LEASE_REFRESH_MILLIS} old ({@link #HANDOVER_REFRESH_MILLIS} while short of its
   * share or handing over). The share is the shard count over the sharing runs (the newest {@code
   * runs} of the live runs, ShardLeases#join), rounded up: a run holding more gives the rest back,
   * so a second sharing run (another process) takes half within a refresh or two instead of waiting
   * for the first to end; an older run's share is 0 (see the class comment). Without the registry
   * (its Redis node unreachable) a run takes every free shard, as before. A shard whose lease call
   * fails is given up for now (its lease expires by itself); throws only when no shard is held at
   * all.
   */
  void refresh() {
    long now = nanoTime.getAsLong() / 1_000_000;
    long interval =
        retiring || held.size() < share ? HANDOVER_REFRESH_MILLIS : LEASE_REFRESH_MILLIS;
    if (everRefreshed && now - refreshedAt < interval) {
      return;
    }
    everRefreshed = true;
    refreshedAt = now;
    int shards = timers.shards();
    share = shards;
    boolean wasRetiring = retiring;
    retiring = false;
    try {
      List<String> live = leases.join(timers.sweepersKey(), token, SHARD_LEASE.toMillis());
      retiring = RunTokens.newerThan(token, live) >= runs;
      share = retiring ? 0 : share(shards, live);
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
    if (retiring && !wasRetiring) {
      log.info("sweeper {} hands its shards over to a run started after it", token);
    }
    handedOver = retiring && coveredByOthers(shards);
    if (firstFailure != null) {
      metrics.count("sweep_shard_errors", 1);
      if (held.isEmpty() && !retiring) {
        throw firstFailure;
      }
      log.warn(
          "some shard leases could not be renewed; sweeping {}: {}", held, firstFailure.toString());
    }
  }

  /**
   * This run's share of {@code shards} among the sharing runs, the newest {@code runs} of {@code
   * live}: an even split, the first runs in start order taking one more while the split is uneven
   * (4 shards, 3 runs: 2, 1, 1), so the shares add up to the shard count and no run waits on
   * another rounding up.
   */
  private int share(int shards, List<String> live) {
    List<String> sorted = new ArrayList<>(live);
    if (!sorted.contains(token)) {
      // not in the registry yet (its write was lost): count it in as the newest
      sorted.add(token);
    }
    sorted.sort(RunTokens.BY_START);
    List<String> sharing = sorted.subList(Math.max(0, sorted.size() - runs), sorted.size());
    int rank = sharing.indexOf(token);
    int count = sharing.size();
    return shards / count + (rank < shards % count ? 1 : 0);
  }

  /**
   * Whether every shard's lease is held by another run. A shard whose lease cannot be read (its
   * master unreachable) counts as covered: this run could not sweep it either.
   */
  private boolean coveredByOthers(int shards) {
    for (int shard = 0; shard < shards; shard++) {
      try {
        String holder = leases.holder(timers.leaseKey(shard));
        if (holder == null || holder.equals(token)) {
          return false;
        }
      } catch (RuntimeException e) {
        log.debug("shard {}'s lease holder is unknown: {}", shard, e.toString());
      }
    }
    return true;
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
