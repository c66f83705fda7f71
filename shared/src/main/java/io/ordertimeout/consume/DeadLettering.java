package io.ordertimeout.consume;

import io.lettuce.core.StreamMessage;
import io.ordertimeout.config.StreamSettings;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.stream.DeadLetters;
import io.ordertimeout.stream.EventStream;
import io.ordertimeout.stream.OrderEvent;
import io.ordertimeout.util.Json;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The failure policy of one consumer: a failed delivery is recorded in the entry's error history
 * and left pending for a retry after the visibility timeout; at its {@code maxDeliveries}-th failed
 * delivery (or when delivered more often than that without an outcome) the entry goes to the
 * dead-letter store with its history, is acknowledged and counted ({@code dead_letters}).
 */
final class DeadLettering {
  // the consumer's logger: failure and dead-letter lines keep the name operators filter on
  private static final Logger log = LoggerFactory.getLogger(StreamConsumer.class);

  private final DeadLetters deadLetters;
  private final Acks acks;
  private final StreamSettings settings;
  private final Metrics metrics;
  private final ConsumerCounters counters;
  private final String consumer;

  DeadLettering(
      DeadLetters deadLetters,
      Acks acks,
      StreamSettings settings,
      Metrics metrics,
      ConsumerCounters counters,
      String consumer) {
    this.deadLetters = deadLetters;
    this.acks = acks;
    this.settings = settings;
    this.metrics = metrics;
    this.counters = counters;
    this.consumer = consumer;
  }

  /** Records a failed delivery ({@code event} null when the entry did not parse). */
  void failed(StreamMessage<String, String> entry, OrderEvent event, String error, long delivered) {
    counters.failed++;
    metrics.count("stream_delivery_failures", 1);
    String line = "delivery " + delivered + " to " + consumer + ": " + error;
    List<String> history = deadLetters.recordError(entry.getId(), line);
    if (delivered >= settings.maxDeliveries()) {
      store(entry, event, delivered, history);
    } else {
      log.warn(
          "stream entry {} (order {}) failed delivery {} of {}; it is retried after {} ms: {}",
          entry.getId(),
          orderIdOf(entry, event),
          delivered,
          settings.maxDeliveries(),
          settings.visibility().toMillis(),
          error);
    }
  }

  /** Dead-letters an entry at once, with {@code error} as the last line of its history. */
  void deadLetter(
      StreamMessage<String, String> entry, OrderEvent event, long delivered, String error) {
    store(entry, event, delivered, deadLetters.recordError(entry.getId(), error));
  }

  /** Drops the error histories of entries that failed before and were settled now. */
  void forget(List<String> entryIds) {
    deadLetters.forget(entryIds);
  }

  private void store(
      StreamMessage<String, String> entry, OrderEvent event, long delivered, List<String> history) {
    String type = event != null ? event.type().wireName() : typeOf(entry);
    deadLetters.store(
        new DeadLetters.DeadLetter(
            entry.getId(),
            type,
            tenantOf(entry, event),
            orderIdOf(entry, event),
            fields(entry),
            delivered,
            history));
    acks.ack(List.of(entry));
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

  private static Map<String, String> fields(StreamMessage<String, String> entry) {
    return entry.getBody() == null ? Map.of() : entry.getBody();
  }

  /**
   * Best effort for a dead letter of an unparseable entry: the orderId field if it looks like one.
   */
  private static String orderIdOf(StreamMessage<String, String> entry, OrderEvent event) {
    return event != null ? event.orderId() : field(entry, "orderId");
  }

  /**
   * The entry's tenant: the default tenant for an order event written before tenants were part of
   * the keys; null when the entry names no order (nothing to attribute it to).
   */
  private static String tenantOf(StreamMessage<String, String> entry, OrderEvent event) {
    String tenant = event != null ? event.tenantId() : field(entry, "tenantId");
    return tenant == null && orderIdOf(entry, event) != null ? TenantIds.DEFAULT : tenant;
  }

  private static String typeOf(StreamMessage<String, String> entry) {
    return field(entry, "type");
  }

  /** A short text field of the entry's JSON payload, or null (at most 32 chars, as ids are). */
  private static String field(StreamMessage<String, String> entry, String name) {
    String text = fields(entry).get(EventStream.FIELD);
    try {
      String value = Json.MAPPER.readTree(text).path(name).asText(null);
      return value != null && value.length() <= 32 ? value : null;
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }
}
