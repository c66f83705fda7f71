package io.ordertimeout.consume;

import io.lettuce.core.Consumer;
import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.XAutoClaimArgs;
import io.lettuce.core.XClaimArgs;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.models.stream.ClaimedMessages;
import io.lettuce.core.models.stream.PendingMessage;
import io.ordertimeout.close.CloseResult;
import io.ordertimeout.close.OrderCloser;
import io.ordertimeout.config.StreamSettings;
import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.loop.Sleeper;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.redis.RedisConnector;
import io.ordertimeout.stream.DeadLetters;
import io.ordertimeout.stream.EventStream;
import io.ordertimeout.stream.OrderEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The consumer loop of one invocation over the order event stream, group {@code closers}: {@code
 * until done: claim idle entries; read new ones (blocking, 1 s); close; acknowledge}. Every error
 * of a pass is logged and counted and the next pass tries again after a jittered wait.
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
 * the acks' Redis commands never wait behind a blocked read.
 *
 * <p>Over 300 lines: one pass reads its own pending entries, claims idle ones, reads new ones,
 * closes, acks and dead-letters, and recreates a lost group; the loop itself is the shared
 * loop.Sleeper. Splitting the pass (own-pending reader, dead-letter policy) is a follow-up.
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
  private final Sleeper sleeper = new Sleeper();
  private final Counters counters = new Counters();
  private String name;

  /** Where the read of this name's own pending entries goes on; null once they were all read. */
  private String ownPendingFrom = "0";

  private long lastClaimAt = Long.MIN_VALUE / 2;
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
      loop(remainingMillis);
    } finally {
      releaseName();
    }
    return counters.stats(name, started);
  }

  /** Ends the loop after the current pass (a blocked read returns within the block time). */
  public void terminate() {
    sleeper.terminate();
  }

  @Override
  public void close() {
    blocking.close();
  }

  private void loop(LongSupplier remainingMillis) {
    int failuresInARow = 0;
    while (!sleeper.done() && budget(remainingMillis) > 0) {
      try {
        if (!renewName()) {
          log.warn("consumer {} lost its name lease; ending this invocation", name);
          return;
        }
        if (ownPendingFrom != null) {
          readOwnPending();
        } else {
          claimIdle();
          readNew(remainingMillis);
        }
        counters.passes++;
        failuresInARow = 0;
      } catch (RuntimeException e) {
        failuresInARow++;
        onPassFailure(e, failuresInARow);
      }
    }
  }

  private long budget(LongSupplier remainingMillis) {
    return remainingMillis.getAsLong() - settings.margin().toMillis();
  }

  // ---- one pass --------------------------------------------------------------------------

  /**
   * The name's own pending entries (left by a previous holder that died, or failed or deferred by
   * one) come first, each once: the read goes on after the last entry of the previous page, because
   * an entry that failed or was deferred stays pending and re-reading from "0" would retry it in a
   * tight loop. Later retries wait for the visibility timeout, like everyone else's.
   */
  private void readOwnPending() {
    List<StreamMessage<String, String>> mine =
        redis.xreadgroup(
            consumer(),
            XReadArgs.Builder.count(settings.stream().batch()),
            XReadArgs.StreamOffset.from(stream.key(), ownPendingFrom));
    if (mine.isEmpty()) {
      ownPendingFrom = null;
      return;
    }
    // XREADGROUP with an id answers the consumer's pending entries after that id
    ownPendingFrom = mine.get(mine.size() - 1).getId();
    counters.read += mine.size();
    handle(mine, true);
  }

  /** Takes over entries idle past the visibility timeout, at most every half timeout. */
  private void claimIdle() {
    long now = System.nanoTime() / 1_000_000;
    long every = Math.max(50, settings.stream().visibility().toMillis() / 2);
    if (now - lastClaimAt < every) {
      return;
    }
    lastClaimAt = now;
    String cursor = "0-0";
    do {
      ClaimedMessages<String, String> claimed =
          redis.xautoclaim(
              stream.key(),
              XAutoClaimArgs.Builder.xautoclaim(consumer(), settings.stream().visibility(), cursor)
                  .count(settings.stream().batch()));
      List<StreamMessage<String, String>> entries = claimed.getMessages();
      counters.claimed += entries.size();
      metrics.count("stream_claimed", entries.size());
      if (!entries.isEmpty()) {
        handle(entries, true);
      }
      cursor = claimed.getId();
    } while (!sleeper.done() && !"0-0".equals(cursor));
  }

  private void readNew(LongSupplier remainingMillis) {
    long block = Math.min(settings.stream().block().toMillis(), budget(remainingMillis));
    if (block < 1) {
      return; // BLOCK 0 would wait forever
    }
    List<StreamMessage<String, String>> entries =
        blocking
            .sync()
            .xreadgroup(
                consumer(),
                XReadArgs.Builder.block(block).count(settings.stream().batch()),
                XReadArgs.StreamOffset.lastConsumed(stream.key()));
    if (entries != null && !entries.isEmpty()) {
      counters.read += entries.size();
      handle(entries, false);
    }
  }

  // ---- handling a batch ------------------------------------------------------------------

  /**
   * Parses a batch, acknowledges what needs no work, closes cancel_requested (USER_CANCEL) and
   * close_due (TIMEOUT) orders in one close call each, and records failures.
   */
  private void handle(List<StreamMessage<String, String>> entries, boolean redelivered) {
    Map<String, Long> deliveries = redelivered ? deliveries(entries) : Map.of();
    Parsed batch = new Parsed();
    for (StreamMessage<String, String> entry : entries) {
      long delivered = deliveries.getOrDefault(entry.getId(), 1L);
      if (delivered > settings.stream().maxDeliveries()) {
        // Delivered more often than allowed without an outcome: its consumers died on it.
        deadLetter(entry, null, delivered, "delivered " + delivered + " times without an outcome");
        continue;
      }
      batch.add(entry);
    }
    settled(batch.noOps, deliveries);
    closeAll(batch.cancels, CloseReason.USER_CANCEL, deliveries);
    closeAll(batch.closeDues, CloseReason.TIMEOUT, deliveries);
    batch.broken.forEach((entry, error) -> failed(entry, null, error, deliveries));
  }

  private void closeAll(List<Event> events, CloseReason reason, Map<String, Long> deliveries) {
    if (events.isEmpty()) {
      return;
    }
    CloseResult result;
    try {
      result = closer.close(events.stream().map(e -> e.event.orderId()).toList(), reason);
    } catch (RuntimeException batchFailure) {
      if (events.size() == 1) {
        failed(events.get(0).entry, events.get(0).event, batchFailure.toString(), deliveries);
        return;
      }
      // One poison order must not hold back the others: retry the batch one order at a time.
      log.warn(
          "closing {} orders from the stream ({}) failed, retrying one by one: {}",
          events.size(),
          reason,
          batchFailure.toString());
      events.forEach(e -> closeAll(List.of(e), reason, deliveries));
      return;
    }
    counters.closed += result.closed().size();
    settle(events, result, reason, deliveries);
  }

  /**
   * Acknowledges the entries whose orders the close settled (closed, paid, already final, unknown,
   * not due); the orders WeChat left open stay pending: {@code failed} ones as a failed delivery,
   * {@code deferred} ones (payer paying) as a delivery given back.
   */
  private void settle(
      List<Event> events, CloseResult result, CloseReason reason, Map<String, Long> deliveries) {
    Set<String> failed = Set.copyOf(result.failed());
    Set<String> deferred = Set.copyOf(result.deferred());
    List<StreamMessage<String, String>> done = new ArrayList<>(events.size());
    for (Event e : events) {
      String orderId = e.event.orderId();
      if (deferred.contains(orderId)) {
        defer(e, reason, deliveries);
      } else if (failed.contains(orderId)) {
        failed(
            e.entry,
            e.event,
            "close of order "
                + orderId
                + " ("
                + reason
                + ") left it UNPAID: WeChat gave no definite answer (error or timeout, see"
                + " close_wechat_failures) or its paid path failed",
            deliveries);
      } else {
        done.add(e.entry);
      }
    }
    settled(done, deliveries);
  }

  /**
   * Leaves an entry pending and gives its delivery back: XCLAIM to this consumer with JUSTID (which
   * does not count a delivery) and RETRYCOUNT one below this delivery's. A payer at the password
   * prompt is a definite "not yet" from WeChat, not a failure; counting it would dead-letter the
   * cancel of an order whose payer takes longer than maxDeliveries x visibility (5 x 30 s). The
   * entry comes back after the visibility timeout (30 s: one WeChat query per wait, not a poll).
   */
  private void defer(Event e, CloseReason reason, Map<String, Long> deliveries) {
    long delivered = deliveries.getOrDefault(e.entry.getId(), 1L);
    redis.xclaim(
        stream.key(),
        consumer(),
        XClaimArgs.Builder.justid().retryCount(Math.max(0, delivered - 1)),
        e.entry.getId());
    counters.deferred++;
    metrics.count("stream_deferred", 1);
    log.info(
        "stream entry {} ({} of order {}): the payer is paying at WeChat; looking again in {} ms",
        e.entry.getId(),
        reason,
        e.event.orderId(),
        settings.stream().visibility().toMillis());
  }

  /** Acknowledges entries done with, and drops the error histories of those that failed before. */
  private void settled(List<StreamMessage<String, String>> entries, Map<String, Long> deliveries) {
    ack(entries);
    List<String> failedBefore =
        entries.stream()
            .map(StreamMessage::getId)
            .filter(id -> deliveries.getOrDefault(id, 1L) > 1)
            .toList();
    if (!failedBefore.isEmpty()) {
      deadLetters.forget(failedBefore);
    }
  }

  private void failed(
      StreamMessage<String, String> entry,
      OrderEvent event,
      String error,
      Map<String, Long> deliveries) {
    counters.failed++;
    metrics.count("stream_delivery_failures", 1);
    long delivered = deliveries.getOrDefault(entry.getId(), 1L);
    String line = "delivery " + delivered + " to " + name + ": " + error;
    List<String> history = deadLetters.recordError(entry.getId(), line);
    if (delivered >= settings.stream().maxDeliveries()) {
      storeDeadLetter(entry, event, delivered, history);
    } else {
      log.warn(
          "stream entry {} (order {}) failed delivery {} of {}; it is retried after {} ms: {}",
          entry.getId(),
          orderIdOf(entry, event),
          delivered,
          settings.stream().maxDeliveries(),
          settings.stream().visibility().toMillis(),
          error);
    }
  }

  private void deadLetter(
      StreamMessage<String, String> entry, OrderEvent event, long delivered, String error) {
    storeDeadLetter(entry, event, delivered, deadLetters.recordError(entry.getId(), error));
  }

  private void storeDeadLetter(
      StreamMessage<String, String> entry, OrderEvent event, long delivered, List<String> history) {
    String type = event != null ? event.type().wireName() : typeOf(entry);
    deadLetters.store(
        new DeadLetters.DeadLetter(
            entry.getId(), type, orderIdOf(entry, event), fields(entry), delivered, history));
    ack(List.of(entry));
    deadLetters.forget(entry.getId());
    counters.deadLettered++;
    metrics.count("dead_letters", 1);
    log.error(
        "stream entry {} ({} of order {}) dead-lettered after {} deliveries: {}",
        entry.getId(),
        type,
        orderIdOf(entry, event),
        delivered,
        history);
  }

  /** Delivery counts of redelivered entries, from the group's pending list (one XPENDING). */
  private Map<String, Long> deliveries(List<StreamMessage<String, String>> entries) {
    Map<String, Long> counts = new HashMap<>();
    String first = entries.get(0).getId();
    String last = entries.get(entries.size() - 1).getId();
    List<PendingMessage> pending =
        redis.xpending(
            stream.key(), consumer(), Range.create(first, last), Limit.from(entries.size() * 2L));
    pending.forEach(p -> counts.put(p.getId(), p.getRedeliveryCount()));
    return counts;
  }

  private void ack(List<StreamMessage<String, String>> entries) {
    if (entries.isEmpty()) {
      return;
    }
    redis.xack(
        stream.key(),
        EventStream.GROUP,
        entries.stream().map(StreamMessage::getId).toArray(String[]::new));
    counters.acked += entries.size();
    metrics.count("stream_acked", entries.size());
  }

  // ---- names, errors, sleeping -----------------------------------------------------------

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
   * and the loop goes on; any other failure waits a jittered, growing backoff. A recreation that
   * fails is an ordinary failure, so a Redis that keeps losing the stream costs one attempt per
   * backoff, not a crash loop.
   */
  private void onPassFailure(RuntimeException e, int failuresInARow) {
    if (EventStream.isNoGroup(e)) {
      try {
        stream.ensureGroup();
        counters.groupsCreated++;
        metrics.count("stream_group_created", 1);
        log.warn("stream {} or group {} was missing; recreated", stream.key(), EventStream.GROUP);
        if (failuresInARow == 1) {
          return;
        }
      } catch (RuntimeException again) {
        e = again;
      }
    }
    counters.errors++;
    metrics.count("stream_consumer_errors", 1);
    log.warn(
        "stream consumer {} pass failed ({} in a row): {}", name, failuresInARow, e.toString());
    sleeper.sleep(Sleeper.jittered(backoff(failuresInARow)));
  }

  static long backoff(int failuresInARow) {
    long millis = ERROR_BACKOFF_MIN_MILLIS << Math.min(failuresInARow - 1, 10);
    return Math.min(millis, ERROR_BACKOFF_MAX_MILLIS);
  }

  private Consumer<String> consumer() {
    return Consumer.from(EventStream.GROUP, name);
  }

  private int slots() {
    return settings.stream().consumerSlots();
  }

  // ---- entries ---------------------------------------------------------------------------

  private static Map<String, String> fields(StreamMessage<String, String> entry) {
    return entry.getBody() == null ? Map.of() : entry.getBody();
  }

  /**
   * Best effort for a dead letter of an unparseable entry: the orderId field if it looks like one.
   */
  private static String orderIdOf(StreamMessage<String, String> entry, OrderEvent event) {
    if (event != null) {
      return event.orderId();
    }
    String text = fields(entry).get(EventStream.FIELD);
    try {
      String id = io.ordertimeout.util.Json.MAPPER.readTree(text).path("orderId").asText(null);
      return id != null && id.length() <= 32 ? id : null;
    } catch (java.io.IOException | RuntimeException e) {
      return null;
    }
  }

  private static String typeOf(StreamMessage<String, String> entry) {
    String text = fields(entry).get(EventStream.FIELD);
    try {
      String type = io.ordertimeout.util.Json.MAPPER.readTree(text).path("type").asText(null);
      return type != null && type.length() <= 32 ? type : null;
    } catch (java.io.IOException | RuntimeException e) {
      return null;
    }
  }

  private record Event(StreamMessage<String, String> entry, OrderEvent event) {}

  /** A batch sorted by what it needs. */
  private static final class Parsed {
    final List<StreamMessage<String, String>> noOps = new ArrayList<>();
    final List<Event> cancels = new ArrayList<>();
    final List<Event> closeDues = new ArrayList<>();
    final Map<StreamMessage<String, String>, String> broken = new java.util.LinkedHashMap<>();

    void add(StreamMessage<String, String> entry) {
      Map<String, String> body = entry.getBody();
      if (body == null || body.isEmpty()) {
        // Trimmed while pending (Redis returns the id without fields): nothing left to do.
        noOps.add(entry);
        return;
      }
      String payload = body.get(EventStream.FIELD);
      if (payload == null) {
        broken.put(entry, "entry has no '" + EventStream.FIELD + "' field: " + body.keySet());
        return;
      }
      try {
        OrderEvent event = OrderEvent.parse(payload);
        switch (event.type()) {
          case CANCEL_REQUESTED -> cancels.add(new Event(entry, event));
          case CLOSE_DUE -> closeDues.add(new Event(entry, event));
          default -> noOps.add(entry);
        }
      } catch (IllegalArgumentException e) {
        broken.put(entry, e.getMessage());
      }
    }
  }

  private static final class Counters {
    long passes;
    long read;
    long claimed;
    long closed;
    long acked;
    long failed;
    long deferred;
    long deadLettered;
    long groupsCreated;
    long errors;

    ConsumerStats stats(String consumer, long startedNanos) {
      return new ConsumerStats(
          consumer,
          passes,
          read,
          claimed,
          closed,
          acked,
          failed,
          deferred,
          deadLettered,
          groupsCreated,
          errors,
          (System.nanoTime() - startedNanos) / 1_000_000);
    }
  }
}
