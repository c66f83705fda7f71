package io.ordertimeout.consume;

import io.lettuce.core.Consumer;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.ordertimeout.close.OrderCloser;
import io.ordertimeout.config.StreamSettings;
import io.ordertimeout.loop.PollingLoop;
import io.ordertimeout.loop.Sleeper;
import io.ordertimeout.loop.TimeBudget;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.redis.RedisConnector;
import io.ordertimeout.stream.DeadLetters;
import io.ordertimeout.stream.EventStream;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The consumer loop of one invocation over the order event stream, group {@code closers}: {@code
 * until done: claim idle entries; read new ones (blocking, 1 s); close; acknowledge}, a {@link
 * PollingLoop} over this work. Every error of a pass is logged and counted and the next pass tries
 * again after a jittered wait.
 *
 * <p>Delivery is at least once. An entry is acknowledged only after its close had a definite
 * outcome: the close committed, the order took the paid path, or there was nothing to do (order
 * already final, unknown, or not yet due and re-scheduled by the closer). Everything else stays
 * pending and, after the visibility timeout, is XAUTOCLAIMed by any consumer:
 *
 * <ul>
 *   <li>a failure (the close threw, or WeChat gave no definite answer for a prepaid order: timeout,
 *       {@code SYSTEM_ERROR}, {@code FREQUENCY_LIMITED}) is recorded in the entry's error history,
 *       and at its {@code maxDeliveries}-th failed delivery the entry goes to the dead-letter
 *       store, is acknowledged and counted ({@code dead_letters});
 *   <li>a deferral (WeChat says the payer is entering the password, USERPAYING) is a definite "not
 *       yet", not a failure: the delivery is given back to the entry's count, so waiting for a
 *       payer never turns into a dead letter. It is bounded by the trade itself: WeChat closes an
 *       unpaid trade at its time_expire, the order's deadline, after which the close goes through.
 * </ul>
 *
 * Acknowledging a failed or deferred cancel_requested would lose the user's cancel: the order would
 * keep its stock and coupon until its deadline (up to 24 h).
 *
 * <p>Blocking reads use a connection of their own (closed by {@link #close()}), so the closer's and
 * the acks' Redis commands never wait behind a blocked read. This class holds the loop, the
 * consumer name's lease and the recovery of a lost group; reading is {@link EntryReader}'s, the
 * settlement of a batch {@link Settlement}'s, the failure policy {@link DeadLettering}'s.
 */
public final class StreamConsumer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(StreamConsumer.class);

  /**
   * Failed passes wait 200 ms (+-25% jitter) doubling to 5 s: a Redis restart seen by 32 consumers
   * at once turns into a spread of retries, not 32 reconnects in the same millisecond, and a long
   * outage costs each consumer one attempt every ~5 s.
   */
  static final long ERROR_BACKOFF_MIN_MILLIS = 200;

  static final long ERROR_BACKOFF_MAX_MILLIS = 5_000;

  private final EventStream stream;
  private final RedisClusterCommands<String, String> redis;
  private final RedisConnector.Dedicated blocking;
  private final ConsumerNames names;
  private final DeadLetters deadLetters;
  private final OrderCloser closer;
  private final Metrics metrics;
  private final Settings settings;
  private final String token = UUID.randomUUID().toString();
  private final PollingLoop loop = new PollingLoop();
  private final ConsumerCounters counters = new ConsumerCounters();
  private String name;
  private long lastRenewAt;

  /** Tunables of the loop; see OtcConfig for the defaults and their reasons. */
  public record Settings(StreamSettings stream, Duration margin) {}

  public StreamConsumer(
      EventStream stream,
      RedisClusterCommands<String, String> redis,
      RedisConnector.Dedicated blocking,
      ConsumerNames names,
      DeadLetters deadLetters,
      OrderCloser closer,
      Metrics metrics,
      Settings settings) {
    this.stream = stream;
    this.redis = redis;
    this.blocking = blocking;
    this.names = names;
    this.deadLetters = deadLetters;
    this.closer = closer;
    this.metrics = metrics;
    this.settings = settings;
  }

  /**
   * Loops until {@code remainingMillis} (Lambda's remaining time) falls under the margin, or
   * terminate(). Returns at once when every consumer name is leased by other invocations.
   */
  public ConsumerStats run(LongSupplier remainingMillis) {
    long started = System.nanoTime();
    Optional<String> leased = leaseName();
    if (leased.isEmpty()) {
      log.info("all {} consumer names are in use; this invocation has nothing to add", slots());
      return counters.stats(null, started);
    }
    name = leased.get();
    try {
      loop(new TimeBudget(remainingMillis, settings.margin()));
    } finally {
      releaseName();
    }
    return counters.stats(name, started);
  }

  /** Ends the loop after the current pass (a blocked read returns within the block time). */
  public void terminate() {
    loop.terminate();
  }

  @Override
  public void close() {
    blocking.close();
  }

  private void loop(TimeBudget budget) {
    StreamSettings s = settings.stream();
    Consumer<String> consumer = Consumer.from(EventStream.GROUP, name);
    Acks acks = new Acks(redis, stream, metrics, counters);
    DeadLettering deadLettering = new DeadLettering(deadLetters, acks, s, metrics, counters, name);
    Settlement settlement =
        new Settlement(stream, redis, closer, s, metrics, counters, acks, deadLettering, consumer);
    EntryReader reader =
        new EntryReader(stream, redis, blocking, s, metrics, counters, settlement, consumer, loop);
    loop.run(
        () -> budget.leftMillis() > 0,
        new PollingLoop.Work() {
          private int failuresInARow;

          @Override
          public long pass() {
            if (!renewName()) {
              log.warn("consumer {} lost its name lease; ending this invocation", name);
              return PollingLoop.STOP;
            }
            reader.pass(budget);
            counters.passes++;
            failuresInARow = 0;
            return 0; // the next read blocks until entries arrive
          }

          @Override
          public long failed(RuntimeException e) {
            failuresInARow++;
            return onPassFailure(e, failuresInARow);
          }
        });
  }

  // ---- names, errors -------------------------------------------------------------------

  private Optional<String> leaseName() {
    try {
      return names.lease(token);
    } catch (RuntimeException e) {
      counters.errors++;
      metrics.count("stream_consumer_errors", 1);
      log.warn("cannot lease a consumer name: {}", e.toString());
      return Optional.empty();
    }
  }

  /** Renews the name lease at most every second (the lease lasts 30 s). */
  private boolean renewName() {
    long now = System.nanoTime() / 1_000_000;
    if (now - lastRenewAt < 1_000) {
      return true;
    }
    lastRenewAt = now;
    return names.renew(name, token);
  }

  private void releaseName() {
    try {
      names.release(name, token);
    } catch (RuntimeException e) {
      log.warn("could not release consumer name {} (it expires by itself): {}", name, e.toString());
    }
  }

  /**
   * A lost stream or group (fresh Redis, failover without persistence, key deleted) is recreated
   * and the loop goes on; any other failure waits a jittered, growing backoff (returned). A
   * recreation that fails is an ordinary failure, so a Redis that keeps losing the stream costs one
   * attempt per backoff, not a crash loop.
   */
  private long onPassFailure(RuntimeException e, int failuresInARow) {
    if (EventStream.isNoGroup(e)) {
      try {
        stream.ensureGroup();
        counters.groupsCreated++;
        metrics.count("stream_group_created", 1);
        log.warn("stream {} or group {} was missing; recreated", stream.key(), EventStream.GROUP);
        if (failuresInARow == 1) {
          return 0;
        }
      } catch (RuntimeException again) {
        e = again;
      }
    }
    counters.errors++;
    metrics.count("stream_consumer_errors", 1);
    log.warn(
        "stream consumer {} pass failed ({} in a row): {}", name, failuresInARow, e.toString());
    return Sleeper.jittered(backoff(failuresInARow));
  }

  static long backoff(int failuresInARow) {
    long millis = ERROR_BACKOFF_MIN_MILLIS << Math.min(failuresInARow - 1, 10);
    return Math.min(millis, ERROR_BACKOFF_MAX_MILLIS);
  }

  private int slots() {
    return settings.stream().consumerSlots();
  }
}
