package io.ordertimeout.sweep;

import io.ordertimeout.close.CloseResult;
import io.ordertimeout.close.OrderCloser;
import io.ordertimeout.db.DataAccessException;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.order.CloseReason;
import io.ordertimeout.redis.ShardLeases;
import io.ordertimeout.redis.TimeSource;
import io.ordertimeout.redis.TimerIndex;
import io.ordertimeout.stream.OrderEvents;
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
  private final OrderEvents events;
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
  private double closeMillisPerOrder = 1.0;
  private final Object sleeper = new Object();
  private volatile boolean done;

  /** Tunables of the loop; see OtcConfig for the defaults and their reasons. */
  public record Settings(int batch, Duration claimLease, Duration poll, Duration margin) {}

  public TimeoutSweeper(
      TimerIndex timers,
      ShardLeases leases,
      OrderCloser closer,
      OrderEvents events,
      TimeSource time,
      Metrics metrics,
      Settings settings) {
    this.timers = timers;
    this.leases = leases;
    this.closer = closer;
    this.events = events;
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
          int claimed = pass(held, counters, remainingMillis);
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
  private int pass(TreeSet<Integer> held, Counters counters, LongSupplier remainingMillis) {
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
      if (remainingMillis.getAsLong() - settings.margin().toMillis()
          < estimatedCloseMillis(claimed.size())) {
        handOff(shard, claimed, OrderEvents.HandOffCause.OVER_BUDGET, counters);
      } else {
        closeClaimed(shard, claimed, counters);
      }
    }
    return claimedTotal;
  }

  private void closeClaimed(int shard, List<String> claimed, Counters counters) {
    long started = System.nanoTime();
    try {
      CloseResult result = closer.close(claimed, CloseReason.TIMEOUT);
      observeCloseMillis(claimed.size(), (System.nanoTime() - started) / 1_000_000);
      counters.closed += result.closed().size();
      counters.notDue += result.notDue().size();
      counters.alreadyFinal += result.alreadyFinal().size();
    } catch (DataAccessException e) {
      counters.failedBatches++;
      metrics.count("close_batch_failures", 1);
      if (e.isTransient()) {
        handOff(shard, claimed, OrderEvents.HandOffCause.CLOSE_FAILED, counters);
      } else {
        leaveLeased(shard, claimed, e);
      }
    } catch (RuntimeException e) {
      // Not a database verdict (Redis after the commit, WeChat, a bug in one order): consumers
      // retry each order on its own and dead-letter the one that keeps failing.
      counters.failedBatches++;
      metrics.count("close_batch_failures", 1);
      handOff(shard, claimed, OrderEvents.HandOffCause.CLOSE_FAILED, counters);
    }
  }

  /**
   * Hands claimed orders to the stream as close_due. Their timers keep the claim lease: a consumer
   * closes the order and the closer removes the timer; if no consumer does within the lease, the
   * timer comes back to a sweep, so a failed or lost hand-off loses nothing.
   */
  private void handOff(
      int shard, List<String> claimed, OrderEvents.HandOffCause cause, Counters counters) {
    if (events.closeDue(claimed, cause)) {
      counters.handedOff += claimed.size();
      metrics.count("sweep_handed_off", claimed.size());
      log.info("handed {} orders of shard {} to the stream ({})", claimed.size(), shard, cause);
    } else {
      leaveLeased(shard, claimed, new IllegalStateException("hand-off to the stream failed"));
    }
  }

  private void leaveLeased(int shard, List<String> claimed, RuntimeException e) {
    // The claimed timers keep their lease score: they come back to a claimer when it runs out.
    log.warn(
        "closing {} claimed orders of shard {} failed; they return after the claim lease: {}",
        claimed.size(),
        shard,
        e.toString());
  }

  /**
   * What closing {@code orders} is expected to take: the moving average per order of this sweeper's
   * batches, plus 20 ms for the round trips of any batch. Before the first batch it assumes 1 ms an
   * order (a 500-order batch in 0.5 s, twice what a local MySQL takes).
   */
  long estimatedCloseMillis(int orders) {
    return 20 + (long) Math.ceil(closeMillisPerOrder * orders);
  }

  /** Exponential moving average over ~8 batches: quick to follow a slow DB, steady on noise. */
  private void observeCloseMillis(int orders, long millis) {
    double perOrder = (double) millis / Math.max(1, orders);
    closeMillisPerOrder = closeMillisPerOrder * 7 / 8 + perOrder / 8;
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
    long handedOff;

    SweepStats stats(int shardsHeld, long durationMillis) {
      return new SweepStats(
          passes,
          claimed,
          closed,
          notDue,
          alreadyFinal,
          failedBatches,
          handedOff,
          shardsHeld,
          durationMillis);
    }
  }
}
