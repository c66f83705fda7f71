package io.ordertimeout.consume;

import io.lettuce.core.Consumer;
import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.XClaimArgs;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.models.stream.PendingMessage;
import io.ordertimeout.close.CloseResult;
import io.ordertimeout.close.OrderCloser;
import io.ordertimeout.config.StreamSettings;
import io.ordertimeout.consume.EntryBatch.Event;
import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.stream.EventStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Settles a batch of delivered entries: acknowledges what needs no work, closes cancel_requested
 * (USER_CANCEL) and close_due (TIMEOUT) orders in one close call each, acknowledges the entries
 * whose close had a definite outcome, gives deferred ones their delivery back and hands failures to
 * {@link DeadLettering}.
 */
final class Settlement {
  // the consumer's logger: its lines keep the name operators filter on
  private static final Logger log = LoggerFactory.getLogger(StreamConsumer.class);

  private final EventStream stream;
  private final RedisClusterCommands<String, String> redis;
  private final OrderCloser closer;
  private final StreamSettings settings;
  private final Metrics metrics;
  private final ConsumerCounters counters;
  private final Acks acks;
  private final DeadLettering deadLettering;
  private final Consumer<String> consumer;

  Settlement(
      EventStream stream,
      RedisClusterCommands<String, String> redis,
      OrderCloser closer,
      StreamSettings settings,
      Metrics metrics,
      ConsumerCounters counters,
      Acks acks,
      DeadLettering deadLettering,
      Consumer<String> consumer) {
    this.stream = stream;
    this.redis = redis;
    this.closer = closer;
    this.settings = settings;
    this.metrics = metrics;
    this.counters = counters;
    this.acks = acks;
    this.deadLettering = deadLettering;
    this.consumer = consumer;
  }

  /**
   * Handles a batch; {@code redelivered} entries (the name's own pending ones, claimed idle ones)
   * have their delivery counts read first, new ones are on their first delivery.
   */
  void handle(List<StreamMessage<String, String>> entries, boolean redelivered) {
    Map<String, Long> deliveries = redelivered ? deliveries(entries) : Map.of();
    EntryBatch batch = new EntryBatch();
    for (StreamMessage<String, String> entry : entries) {
      long delivered = deliveries.getOrDefault(entry.getId(), 1L);
      if (delivered > settings.maxDeliveries()) {
        // Delivered more often than allowed without an outcome: its consumers died on it.
        deadLettering.deadLetter(
            entry, null, delivered, "delivered " + delivered + " times without an outcome");
        continue;
      }
      batch.add(entry);
    }
    settled(batch.noOps, deliveries);
    closeAll(batch.cancels, CloseReason.USER_CANCEL, deliveries);
    closeAll(batch.closeDues, CloseReason.TIMEOUT, deliveries);
    batch.broken.forEach(
        (entry, error) -> deadLettering.failed(entry, null, error, delivered(entry, deliveries)));
  }

  private void closeAll(List<Event> events, CloseReason reason, Map<String, Long> deliveries) {
    // A close transaction is one tenant's: the batch splits by the entries' tenants.
    Map<String, List<Event>> byTenant = new java.util.TreeMap<>();
    events.forEach(
        e -> byTenant.computeIfAbsent(e.event().tenantOrDefault(), t -> new ArrayList<>()).add(e));
    byTenant.forEach((tenant, mine) -> closeTenant(tenant, mine, reason, deliveries));
  }

  private void closeTenant(
      String tenantId, List<Event> events, CloseReason reason, Map<String, Long> deliveries) {
    CloseResult result;
    try {
      result =
          closer.close(tenantId, events.stream().map(e -> e.event().orderId()).toList(), reason);
    } catch (RuntimeException batchFailure) {
      if (events.size() == 1) {
        Event e = events.get(0);
        deadLettering.failed(
            e.entry(), e.event(), batchFailure.toString(), delivered(e.entry(), deliveries));
        return;
      }
      // One poison order must not hold back the others: retry the batch one order at a time.
      log.warn(
          "closing {} orders from the stream ({}) failed, retrying one by one: {}",
          events.size(),
          reason,
          batchFailure.toString());
      events.forEach(e -> closeTenant(tenantId, List.of(e), reason, deliveries));
      return;
    }
    counters.closed += result.closed().size();
    settle(events, result, reason, deliveries);
  }

  /**
   * Acknowledges the entries whose orders the close settled (closed, paid, already final, unknown,
   * not due, or flagged as past the USERPAYING limit); the orders WeChat left open stay pending:
   * {@code failed} ones as a failed delivery, {@code deferred} ones (payer paying) as a delivery
   * given back.
   */
  private void settle(
      List<Event> events, CloseResult result, CloseReason reason, Map<String, Long> deliveries) {
    Set<String> failed = Set.copyOf(result.failed());
    Set<String> deferred = Set.copyOf(result.deferred());
    Set<String> stuck = Set.copyOf(result.stuck());
    List<StreamMessage<String, String>> done = new ArrayList<>(events.size());
    for (Event e : events) {
      String orderId = e.event().orderId();
      if (stuck.contains(orderId)) {
        // Past the USERPAYING limit the order's timer (one compensation period ahead) and
        // compensation own the retry; a cancel's intent is on the row (cancel_requested_at).
        log.info(
            "stream entry {} ({} of order {}): the payer is still paying past the USERPAYING"
                + " limit; acknowledged, its timer and compensation look again",
            e.entry().getId(),
            reason,
            orderId);
        done.add(e.entry());
      } else if (deferred.contains(orderId)) {
        defer(e, reason, deliveries);
      } else if (failed.contains(orderId)) {
        deadLettering.failed(
            e.entry(),
            e.event(),
            "close of order "
                + orderId
                + " ("
                + reason
                + ") left it UNPAID: WeChat gave no definite answer (error or timeout, see"
                + " close_wechat_failures) or its paid path failed",
            delivered(e.entry(), deliveries));
      } else {
        done.add(e.entry());
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
    long delivered = delivered(e.entry(), deliveries);
    redis.xclaim(
        stream.key(),
        consumer,
        XClaimArgs.Builder.justid().retryCount(Math.max(0, delivered - 1)),
        e.entry().getId());
    counters.deferred++;
    metrics.count("stream_deferred", 1);
    log.info(
        "stream entry {} ({} of order {}): the payer is paying at WeChat; looking again in {} ms",
        e.entry().getId(),
        reason,
        e.event().orderId(),
        settings.visibility().toMillis());
  }

  /** Acknowledges entries done with, and drops the error histories of those that failed before. */
  private void settled(List<StreamMessage<String, String>> entries, Map<String, Long> deliveries) {
    acks.ack(entries);
    List<String> failedBefore =
        entries.stream()
            .map(StreamMessage::getId)
            .filter(id -> deliveries.getOrDefault(id, 1L) > 1)
            .toList();
    if (!failedBefore.isEmpty()) {
      deadLettering.forget(failedBefore);
    }
  }

  private static long delivered(StreamMessage<String, String> entry, Map<String, Long> deliveries) {
    return deliveries.getOrDefault(entry.getId(), 1L);
  }

  /** Delivery counts of redelivered entries, from the group's pending list (one XPENDING). */
  private Map<String, Long> deliveries(List<StreamMessage<String, String>> entries) {
    Map<String, Long> counts = new HashMap<>();
    String first = entries.get(0).getId();
    String last = entries.get(entries.size() - 1).getId();
    List<PendingMessage> pending =
        redis.xpending(
            stream.key(), consumer, Range.create(first, last), Limit.from(entries.size() * 2L));
    pending.forEach(p -> counts.put(p.getId(), p.getRedeliveryCount()));
    return counts;
  }
}
