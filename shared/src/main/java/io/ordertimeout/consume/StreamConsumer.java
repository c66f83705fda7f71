package io.ordertimeout.consume;

import io.lettuce.core.Consumer;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.ordertimeout.close.OrderCloser;
import io.ordertimeout.config.StreamSettings;
import io.ordertimeout.loop.PollingLoop;
import io.ordertimeout.loop.RunTokens;
import io.ordertimeout.loop.Sleeper;
import io.ordertimeout.loop.TimeBudget;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.redis.RedisConnector;
import io.ordertimeout.redis.ShardLeases;
import io.ordertimeout.stream.DeadLetters;
import io.ordertimeout.stream.EventStream;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
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

  /**
   * A run's entry in the registry of live consumer runs outlives ~10 renewals (one a second): a
   * pass of slow closes does not drop it, and a run that died leaves it within 10 s.
   */
  static final long REGISTRY_TTL_MILLIS = 10_000;

  private final EventStream stream;
  private final RedisClusterCommands<String, String> redis;
  private final RedisConnector.Dedicated blocking;
  private final ConsumerNames names;
  private final DeadLetters deadLetters;
  private final OrderCloser closer;
  private final Metrics metrics;
  private final Settings settings;
  private final ShardLeases registry;
  private String token;
  private final PollingLoop loop = new PollingLoop();
  private final ConsumerCounters counters = new ConsumerCounters();
  private String name;
  private long lastRenewAt;
  private boolean handedOver;

  /** A pass of this consumer has read from the group: a group missing after that was lost. */
  private boolean readFromGroup;

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
    this.registry = new ShardLeases(redis);
  }

  /**
   * Loops until {@code remainingMillis} (Lambda's remaining time) falls under the margin, until
   * {@code runs} consumer runs started after this one are reading (the hand-over:
   * docs/concepts/architecture.md, "Coverage does not depend on when the schedule fires"), or
   * terminate(). Returns at once when every consumer name is leased by other invocations.
   */
  public ConsumerStats run(LongSupplier remainingMillis) {
    long started = System.nanoTime();
    // made per run and carrying its start on Redis' clock: the runs know which started last
    token = RunTokens.newToken(startMillis());
    Optional<String> leased = leaseName();
    if (leased.isEmpty()) {
      log.info("all {} consumer names are in use; this invocation has nothing to add", slots());
      return counters.stats(null, started);
    }
    name = leased.get();
    try {
      loop(new TimeBudget(remainingMillis, settings.margin()));
    } finally {
      leaveRegistry();
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
            if (handedOver) {
              log.info("consumer {} hands over: a run started after it is reading", name);
              return PollingLoop.STOP;
            }
            reader.pass(budget);
            readFromGroup = true;
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

  /**
   * Renews the name lease and the registry entry at most every second (the lease lasts 30 s); sets
   * {@code handedOver} once {@code runs} runs started after this one are in the registry. A run
   * joins only once it holds a name, right before its first read: a newer run there is reading.
   * Both read at once until the older one sees it (about a second): entries are shared by the
   * group, so the hand-over leaves no time without a reader.
   */
  private boolean renewName() {
    long now = System.nanoTime() / 1_000_000;
    if (now - lastRenewAt < 1_000) {
      return true;
    }
    lastRenewAt = now;
    boolean renewed = names.renew(name, token);
    try {
      List<String> live = registry.join(stream.consumersKey(), token, REGISTRY_TTL_MILLIS);
      handedOver = RunTokens.newerThan(token, live) >= settings.stream().runs();
    } catch (RuntimeException e) {
      // without the registry a run reads until its time is up, as before the hand-over
      log.warn("the consumer registry is unreachable: {}", e.toString());
    }
    return renewed;
  }

  private void leaveRegistry() {
    try {
      registry.leave(stream.consumersKey(), token);
    } catch (RuntimeException e) {
      log.warn("could not leave the consumer registry (the entry expires): {}", e.toString());
    }
  }

  /** Redis TIME, the one clock of every run's start (the host's while Redis is unreachable). */
  private long startMillis() {
    try {
      List<String> t = redis.time();
      return Long.parseLong(t.get(0)) * 1_000 + Long.parseLong(t.get(1)) / 1_000;
    } catch (RuntimeException e) {
      return System.currentTimeMillis();
    }
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
   * and the loop goes on: logged at INFO before this consumer first read from the group (a fresh
   * Redis's first run, as every first deploy and local start has), at WARN once it had (lost under
   * a running consumer); any other failure waits a jittered, growing backoff (returned). A
   * recreation that fails is an ordinary failure, so a Redis that keeps losing the stream costs one
   * attempt per backoff, not a crash loop.
   */
  private long onPassFailure(RuntimeException e, int failuresInARow) {
    if (EventStream.isNoGroup(e)) {
      try {
        stream.ensureGroup();
        counters.groupsCreated++;
        metrics.count("stream_group_created", 1);
        if (readFromGroup) {
          log.warn("stream {} or group {} was missing; recreated", stream.key(), EventStream.GROUP);
        } else {
          log.info("stream {} had no group {} yet; created it", stream.key(), EventStream.GROUP);
        }
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
