package io.ordertimeout.sweep;

import io.ordertimeout.close.CloseResult;
import io.ordertimeout.close.OrderCloser;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.order.CloseReason;
import io.ordertimeout.redis.ShardLeases;
import io.ordertimeout.redis.TimeSource;
import io.ordertimeout.redis.TimerIndex;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The timeout sweep loop of one invocation: {@code until done: hold shard leases; claim due timers;
 * close; sleep until the next deadline}. Every error of a pass is logged and counted and the next
 * pass tries again.
 *
 * <p>One active sweeper per shard (a Redis lease, renewed every pass) keeps overlapping invocations
 * from claiming the same shard; it only saves work: claims are atomic and closes are conditional
 * updates.
 */
public final class TimeoutSweeper {
  private static final Logger log = LoggerFactory.getLogger(TimeoutSweeper.class);

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
  private final OrderCloser closer;
  private final TimeSource time;
  private final Metrics metrics;
  private final Settings settings;

  /**
   * This run's lease token, made when run() starts, not at construction: a sweeper built during
   * Lambda init would be frozen into the SnapStart snapshot, and every environment restored from it
   * would hold leases under the same token.
   */
  private volatile String token;

  private long leasesRefreshedAt;
  private boolean leasesEverRefreshed;
  private final Object sleeper = new Object();
  private volatile boolean done;

  /** Tunables of the loop; see OtcConfig for the defaults and their reasons. */
  public record Settings(int batch, Duration claimLease, Duration poll, Duration margin) {}

  public TimeoutSweeper(
      TimerIndex timers,
      ShardLeases leases,
      OrderCloser closer,
      TimeSource time,
      Metrics metrics,
      Settings settings) {
    this.timers = timers;
    this.leases = leases;
    this.closer = closer;
    this.time = time;
    this.metrics = metrics;
    this.settings = settings;
  }

  /**
   * Loops until {@code remainingMillis} (Lambda's remaining time) falls under the margin, or
   * terminate().
   */
  public SweepStats run(LongSupplier remainingMillis) {
    long started = System.nanoTime();
    token = UUID.randomUUID().toString();
    Counters counters = new Counters();
    TreeSet<Integer> held = new TreeSet<>();
    try {
      while (!done && remainingMillis.getAsLong() > settings.margin().toMillis()) {
        try {
          refreshLeases(held);
          int claimed = pass(held, counters);
          counters.passes++;
          if (claimed == 0) {
            sleepUntilNextDeadline(held, remainingMillis);
          }
        } catch (RuntimeException e) {
          counters.failedBatches++;
          metrics.count("sweep_errors", 1);
          log.warn("sweep pass failed (shards {}, token {}): {}", held, token, e.toString());
          sleep(jittered(settings.poll().toMillis() * 4));
        }
      }
    } finally {
      releaseAll(held);
    }
    return counters.stats(held.size(), (System.nanoTime() - started) / 1_000_000);
  }

  /** Ends the loop after the current pass and wakes a sleeping sweeper. */
  public void terminate() {
    // done is set under the sleeper's lock, and sleep() checks it there, so a terminate() between
    // that check and wait() cannot be missed (it would cost a whole poll interval).
    synchronized (sleeper) {
      done = true;
      sleeper.notifyAll();
    }
  }

  private void refreshLeases(TreeSet<Integer> held) {
    long now = System.nanoTime() / 1_000_000;
    if (leasesEverRefreshed && now - leasesRefreshedAt < LEASE_REFRESH_MILLIS) {
      return;
    }
    leasesEverRefreshed = true;
    leasesRefreshedAt = now;
    for (int shard = 0; shard < timers.shards(); shard++) {
      if (leases.acquire(timers.leaseKey(shard), token, SHARD_LEASE.toMillis())) {
        held.add(shard);
      } else {
        held.remove(shard);
      }
    }
  }

  /** Claims and closes one batch per held shard; returns how many timers were claimed. */
  private int pass(TreeSet<Integer> held, Counters counters) {
    int claimedTotal = 0;
    for (int shard : held) {
      long now = time.nowMillis();
      List<String> claimed =
          timers.claimDue(shard, now, settings.claimLease().toMillis(), settings.batch());
      if (claimed.isEmpty()) {
        continue;
      }
      claimedTotal += claimed.size();
      counters.claimed += claimed.size();
      closeClaimed(shard, claimed, counters);
    }
    return claimedTotal;
  }

  private void closeClaimed(int shard, List<String> claimed, Counters counters) {
    try {
      CloseResult result = closer.close(claimed, CloseReason.TIMEOUT);
      counters.closed += result.closed().size();
      counters.notDue += result.notDue().size();
      counters.alreadyFinal += result.alreadyFinal().size();
    } catch (RuntimeException e) {
      // The claimed timers keep their lease score: they come back to a claimer when it runs out.
      counters.failedBatches++;
      metrics.count("close_batch_failures", 1);
      log.warn(
          "closing {} claimed orders of shard {} failed; they return after the claim lease: {}",
          claimed.size(),
          shard,
          e.toString());
    }
  }

  private void sleepUntilNextDeadline(TreeSet<Integer> held, LongSupplier remainingMillis) {
    long wait = settings.poll().toMillis();
    if (!held.isEmpty()) {
      long now = time.nowMillis();
      for (int shard : held) {
        OptionalLong next = timers.nextDeadline(shard);
        if (next.isPresent()) {
          wait = Math.min(wait, Math.max(1, next.getAsLong() - now));
        }
      }
    }
    sleep(Math.min(wait, Math.max(0, remainingMillis.getAsLong() - settings.margin().toMillis())));
  }

  private void releaseAll(TreeSet<Integer> held) {
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

  /** Spreads the retries of many sweepers after a shared failure (Redis restart) over +-25%. */
  private static long jittered(long millis) {
    return millis * 3 / 4 + ThreadLocalRandom.current().nextLong(millis / 2 + 1);
  }

  private void sleep(long millis) {
    if (millis <= 0) {
      return;
    }
    synchronized (sleeper) {
      if (done) {
        return;
      }
      try {
        sleeper.wait(millis);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        done = true;
      }
    }
  }

  private static final class Counters {
    long passes;
    long claimed;
    long closed;
    long notDue;
    long alreadyFinal;
    long failedBatches;

    SweepStats stats(int shardsHeld, long durationMillis) {
      return new SweepStats(
          passes, claimed, closed, notDue, alreadyFinal, failedBatches, shardsHeld, durationMillis);
    }
  }
}
