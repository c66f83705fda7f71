package io.ordertimeout.sweep;

import io.ordertimeout.close.CloseResult;
import io.ordertimeout.close.OrderCloser;
import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.loop.Sleeper;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.mysql.DataAccessException;
import io.ordertimeout.redis.ShardLeases;
import io.ordertimeout.redis.TimeSource;
import io.ordertimeout.redis.TimerIndex;
import io.ordertimeout.stream.OrderEvents;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
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
 *
 * <p>Over 300 lines: the loop, shard-lease refresh, claims, the inline-or-hand-off decision and the
 * next-deadline cache; the close-cost model, the chunk runner and the sleeper are split out, the
 * held-lease set and the deadline cache are a follow-up.
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

  /**
   * A second closing transaction pays off only when each has enough orders: below ~50 the commit
   * and round trips dominate and two transactions cost more than one.
   */
  static final int MIN_PARALLEL_CHUNK = 50;

  private final TimerIndex timers;
  private final ShardLeases leases;
  private final OrderCloser closer;
  private final TimeSource time;
  private final Metrics metrics;
  private final Settings settings;
  private final OrderEvents events;

  /**
   * This run's lease token, made when run() starts, not at construction: a sweeper built during
   * Lambda init would be frozen into the SnapStart snapshot, and every environment restored from it
   * would hold leases under the same token.
   */
  private volatile String token;

  /** Closing time per order, learned from this sweeper's batches, for the hand-off decision. */
  private final CloseCostModel closeCost = new CloseCostModel();

  private long leasesRefreshedAt;
  private boolean leasesEverRefreshed;

  /** Whether the last pass took its full limit from some shard, i.e. more may be due already. */
  private volatile boolean lastPassFull;

  private static final long UNKNOWN = Long.MIN_VALUE;

  /** Per shard: its earliest score when last read (MAX_VALUE: empty), or UNKNOWN since a claim. */
  private final long[] nextDue;

  /** System.nanoTime() of the last read of every held shard's next deadline; 0: never. */
  private volatile long nextDueReadAt;

  private final Sleeper sleeper = new Sleeper();

  /**
   * Tunables of the loop; see OtcConfig for the defaults and their reasons. {@code parallelism}
   * shards are claimed and closed at once: a batch spends most of its time waiting on MySQL round
   * trips (bench S3: ~1,500 closes/s on one thread), so a second transaction on another shard uses
   * that wait. More than the DB pool size only queues on the pool. {@code weChatStep} is the most a
   * batch's WeChat step can take (zero without a payment gateway): a pass is started only when it
   * fits before the margin, and its batch is closed inline only when the measured closing time fits
   * too (else handed to the stream).
   */
  public record Settings(
      int batch,
      Duration claimLease,
      Duration poll,
      Duration margin,
      int parallelism,
      Duration weChatStep) {
    public Settings {
      if (parallelism < 1) {
        throw new IllegalArgumentException("sweep parallelism must be >= 1, was " + parallelism);
      }
    }

    /** Without a WeChat step (no payment gateway). */
    public Settings(
        int batch, Duration claimLease, Duration poll, Duration margin, int parallelism) {
      this(batch, claimLease, poll, margin, parallelism, Duration.ZERO);
    }

    /** One shard at a time. */
    public Settings(int batch, Duration claimLease, Duration poll, Duration margin) {
      this(batch, claimLease, poll, margin, 1);
    }
  }

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
    this.nextDue = new long[timers.shards()];
    java.util.Arrays.fill(nextDue, UNKNOWN);
  }

  /**
   * Loops until {@code remainingMillis} (Lambda's remaining time) can no longer cover a pass and
   * the margin, or terminate().
   */
  public SweepStats run(LongSupplier remainingMillis) {
    long started = System.nanoTime();
    token = UUID.randomUUID().toString();
    Counters counters = new Counters();
    TreeSet<Integer> held = new TreeSet<>();
    ChunkRunner closers =
        settings.parallelism() == 1
            ? ChunkRunner.serial()
            : ChunkRunner.parallel(settings.parallelism(), sleeper);
    try {
      while (!sleeper.done() && passFits(remainingMillis.getAsLong())) {
        try {
          refreshLeases(held);
          int claimed = pass(held, counters, closers, remainingMillis);
          counters.passes.incrementAndGet();
          if (claimed == 0 || !lastPassFull) {
            // Nothing more is due now: another pass would only cost a claim per shard.
            sleepUntilNextDeadline(held, remainingMillis);
          }
        } catch (RuntimeException e) {
          counters.failedBatches.incrementAndGet();
          metrics.count("sweep_errors", 1);
          log.warn("sweep pass failed (shards {}, token {}): {}", held, token, e.toString());
          sleeper.sleep(Sleeper.jittered(settings.poll().toMillis() * 4));
        }
      }
    } finally {
      closers.close();
      releaseAll(held);
    }
    return counters.stats(held.size(), (System.nanoTime() - started) / 1_000_000);
  }

  /** Ends the loop after the current pass and wakes a sleeping sweeper. */
  public void terminate() {
    sleeper.terminate();
  }

  private void refreshLeases(TreeSet<Integer> held) {
    long now = System.nanoTime() / 1_000_000;
    if (leasesEverRefreshed && now - leasesRefreshedAt < LEASE_REFRESH_MILLIS) {
      return;
    }
    leasesEverRefreshed = true;
    leasesRefreshedAt = now;
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

  /**
   * Claims the due timers of every held shard (at most {@code batch} each, {@code batch *
   * parallelism} in all, starting at a rotating shard so none starves), then closes them together:
   * in one transaction when few (steady traffic spreads a handful of due orders over 16 shards, and
   * a transaction per shard would cost 16 commits for them), else in up to {@code parallelism}
   * transactions of at most {@code batch} at once. Returns how many timers were claimed.
   */
  private int pass(
      TreeSet<Integer> held, Counters counters, ChunkRunner closers, LongSupplier remainingMillis) {
    List<String> claimed = claimAll(held, counters);
    if (claimed.isEmpty()) {
      return 0;
    }
    List<List<String>> chunks = chunks(claimed);
    long budget = remainingMillis.getAsLong() - settings.margin().toMillis();
    if (budget
        < settings.weChatStep().toMillis()
            + closeCost.estimateMillis(chunks.get(0).size())
                * closers.chunksInSeries(chunks.size())) {
      // Not enough time left in this invocation: any number of consumers can take them now.
      handOff(claimed, OrderEvents.HandOffCause.OVER_BUDGET, counters);
      return claimed.size();
    }
    List<Runnable> closes = new ArrayList<>(chunks.size());
    chunks.forEach(chunk -> closes.add(() -> closeClaimed(chunk, counters)));
    closers.runAll(closes);
    return claimed.size();
  }

  private List<String> claimAll(TreeSet<Integer> held, Counters counters) {
    List<String> claimed = new ArrayList<>();
    if (held.isEmpty()) {
      return claimed;
    }
    int cap = settings.batch() * settings.parallelism();
    List<Integer> shards = new ArrayList<>(held);
    int first = (int) (counters.passes.get() % shards.size());
    long now = time.nowMillis();
    boolean trusted = nextDueTrusted();
    lastPassFull = false;
    for (int i = 0; i < shards.size(); i++) {
      if (claimed.size() >= cap) {
        lastPassFull = true;
        break;
      }
      int shard = shards.get((first + i) % shards.size());
      if (trusted && nextDue[shard] != UNKNOWN && nextDue[shard] > now) {
        continue;
      }
      nextDue[shard] = UNKNOWN;
      int limit = Math.min(settings.batch(), cap - claimed.size());
      List<String> got;
      try {
        got = timers.claimDue(shard, now, settings.claimLease().toMillis(), limit);
      } catch (RuntimeException e) {
        // As for leases: a shard whose master is unreachable is skipped, the others are swept.
        metrics.count("sweep_shard_errors", 1);
        log.warn("claiming shard {} failed; the other shards are swept: {}", shard, e.toString());
        if (held.size() == 1) {
          throw e;
        }
        continue;
      }
      lastPassFull |= got.size() == limit;
      claimed.addAll(got);
    }
    counters.claimed.addAndGet(claimed.size());
    return claimed;
  }

  /**
   * Splits into at most {@code parallelism} chunks of at most {@code batch}, none smaller than
   * {@link #MIN_PARALLEL_CHUNK} unless it is the only one.
   */
  private List<List<String>> chunks(List<String> claimed) {
    int bySize = (claimed.size() + settings.batch() - 1) / settings.batch();
    int byThreads =
        Math.min(settings.parallelism(), Math.max(1, claimed.size() / MIN_PARALLEL_CHUNK));
    int count = Math.max(bySize, byThreads);
    List<List<String>> chunks = new ArrayList<>(count);
    int size = (claimed.size() + count - 1) / count;
    for (int from = 0; from < claimed.size(); from += size) {
      chunks.add(claimed.subList(from, Math.min(claimed.size(), from + size)));
    }
    return chunks;
  }

  private void closeClaimed(List<String> claimed, Counters counters) {
    long started = System.nanoTime();
    try {
      CloseResult result = closer.close(claimed, CloseReason.TIMEOUT);
      closeCost.observe(claimed.size(), (System.nanoTime() - started) / 1_000_000);
      counters.closed.addAndGet(result.closed().size());
      counters.notDue.addAndGet(result.notDue().size());
      counters.alreadyFinal.addAndGet(result.alreadyFinal().size());
    } catch (DataAccessException e) {
      counters.failedBatches.incrementAndGet();
      metrics.count("close_batch_failures", 1);
      if (e.isTransient()) {
        handOff(claimed, OrderEvents.HandOffCause.CLOSE_FAILED, counters);
      } else {
        leaveLeased(claimed, e);
      }
    } catch (RuntimeException e) {
      // Not a database verdict (Redis after the commit, WeChat, a bug in one order): consumers
      // retry each order on its own and dead-letter the one that keeps failing.
      counters.failedBatches.incrementAndGet();
      metrics.count("close_batch_failures", 1);
      handOff(claimed, OrderEvents.HandOffCause.CLOSE_FAILED, counters);
    }
  }

  /**
   * Hands claimed orders to the stream as close_due. Their timers keep the claim lease: a consumer
   * closes the order and the closer removes the timer; if no consumer does within the lease, the
   * timer comes back to a sweep, so a failed or lost hand-off loses nothing.
   */
  private void handOff(List<String> claimed, OrderEvents.HandOffCause cause, Counters counters) {
    if (events.closeDue(claimed, cause)) {
      counters.handedOff.addAndGet(claimed.size());
      metrics.count("sweep_handed_off", claimed.size());
      log.info(
          "handed {} orders (first {}) to the stream ({})", claimed.size(), claimed.get(0), cause);
    } else {
      leaveLeased(claimed, new IllegalStateException("hand-off to the stream failed"));
    }
  }

  private void leaveLeased(List<String> claimed, RuntimeException e) {
    // The claimed timers keep their lease score: they come back to a claimer when it runs out.
    log.warn(
        "closing {} claimed orders (first {}) failed; they return after the claim lease: {}",
        claimed.size(),
        claimed.get(0),
        e.toString());
  }

  /**
   * Whether a pass may start: the time left before the margin must exceed the WeChat step at its
   * bound, counted whole because a batch's prepaid orders are known only once it is loaded and a
   * step cannot be handed over half-way. A claimed batch whose measured closing time does not fit
   * in what remains after the step is handed to the stream ({@link #pass}); the closing
   * transactions' worst case beyond their average is what the margin is for (OtcConfig).
   */
  private boolean passFits(long remainingMillis) {
    long left = remainingMillis - settings.margin().toMillis();
    if (left > settings.weChatStep().toMillis()) {
      return true;
    }
    log.info(
        "sweep stops (token {}): {} ms left before the {} ms margin, a pass's WeChat step needs"
            + " {} ms",
        token,
        left,
        settings.margin().toMillis(),
        settings.weChatStep().toMillis());
    return false;
  }

  /**
   * Sleeps until the earliest deadline of the held shards, at most one poll. Only shards whose next
   * deadline is unknown (claimed since) are read again, unless the last full read is a poll old: in
   * steady traffic a wake-up then costs one claim and one read of the shard that was due, not a
   * claim and a read of all 16 shards.
   */
  private void sleepUntilNextDeadline(TreeSet<Integer> held, LongSupplier remainingMillis) {
    long poll = settings.poll().toMillis();
    long wait = poll;
    if (!held.isEmpty()) {
      boolean full = !nextDueTrusted();
      long now = time.nowMillis();
      for (int shard : held) {
        if (full || nextDue[shard] == UNKNOWN) {
          OptionalLong next = timers.nextDeadline(shard);
          nextDue[shard] = next.isPresent() ? next.getAsLong() : Long.MAX_VALUE;
        }
        if (nextDue[shard] != Long.MAX_VALUE) {
          wait = Math.min(wait, Math.max(1, nextDue[shard] - now));
        }
      }
      if (full) {
        nextDueReadAt = System.nanoTime();
      }
      wait = Math.min(wait, Math.max(1, poll - (System.nanoTime() - nextDueReadAt) / 1_000_000));
    }
    sleeper.sleep(
        Math.min(wait, Math.max(0, remainingMillis.getAsLong() - settings.margin().toMillis())));
  }

  /**
   * The cached next deadlines are trusted for one poll: a timer scheduled meanwhile with an earlier
   * deadline (a not-yet-due order moved back by a closer, an order placed with a deadline under 50
   * ms away) waits at most one poll longer, as it would have without the cache.
   */
  private boolean nextDueTrusted() {
    return nextDueReadAt != 0
        && (System.nanoTime() - nextDueReadAt) / 1_000_000 < settings.poll().toMillis();
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

  /** Shared by the closer threads of one run. */
  private static final class Counters {
    final AtomicLong passes = new AtomicLong();
    final AtomicLong claimed = new AtomicLong();
    final AtomicLong closed = new AtomicLong();
    final AtomicLong notDue = new AtomicLong();
    final AtomicLong alreadyFinal = new AtomicLong();
    final AtomicLong failedBatches = new AtomicLong();
    final AtomicLong handedOff = new AtomicLong();

    SweepStats stats(int shardsHeld, long durationMillis) {
      return new SweepStats(
          passes.get(),
          claimed.get(),
          closed.get(),
          notDue.get(),
          alreadyFinal.get(),
          failedBatches.get(),
          handedOff.get(),
          shardsHeld,
          durationMillis);
    }
  }
}
