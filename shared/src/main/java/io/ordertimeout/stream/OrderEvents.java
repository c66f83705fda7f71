package io.ordertimeout.stream;

import io.ordertimeout.metrics.Metrics;
import java.util.Collection;
import java.util.List;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Appends work hand-offs to the stream directly. Events of state changes (created, paid, closed,
 * cancel_requested) are not appended here: they are outbox rows of the change's own transaction,
 * and the outbox relay is their only writer to the stream and to EventBridge.
 *
 * <p>{@code close_due} stays a direct append because it records no state change: its record is the
 * timer, which keeps its claim lease and returns to a sweep when the append (or the consumer)
 * fails; routing it through MySQL would add a write per order exactly when the sweep is over
 * budget.
 */
public final class OrderEvents {
  private static final Logger log = LoggerFactory.getLogger(OrderEvents.class);

  /** Why the sweep handed an order on as close_due. */
  public enum HandOffCause {
    /** The sweep's claimed work would not finish within its invocation's time budget. */
    OVER_BUDGET,
    /** Closing the batch inline failed in a way a retry may fix. */
    CLOSE_FAILED
  }

  private final EventStream stream;
  private final Metrics metrics;
  private final LongSupplier wallClock;

  public OrderEvents(EventStream stream, Metrics metrics) {
    this(stream, metrics, System::currentTimeMillis);
  }

  public OrderEvents(EventStream stream, Metrics metrics, LongSupplier wallClock) {
    this.stream = stream;
    this.metrics = metrics;
    this.wallClock = wallClock;
  }

  public EventStream stream() {
    return stream;
  }

  /**
   * {@code close_due} for orders the sweep hands on; true when appended. On failure the timers keep
   * their claim lease and return to a sweep, so nothing is lost.
   */
  public boolean closeDue(String tenantId, Collection<String> orderIds, HandOffCause cause) {
    long at = wallClock.getAsLong();
    List<OrderEvent> events =
        orderIds.stream()
            .map(
                id ->
                    OrderEvent.of(EventType.CLOSE_DUE, id, tenantId, at)
                        .with("cause", cause.name().toLowerCase(java.util.Locale.ROOT)))
            .toList();
    return appendQuietly(events, "close_due for " + orderIds.size() + " orders");
  }

  /**
   * A {@code cancel_requested} entry straight on the stream, with no MySQL record: for an operator
   * replaying a cancel and for tests of the consumer. A user's cancel goes through {@code
   * CancelOrderService}, which records it in MySQL first. A failure is thrown to the caller.
   */
  public String cancelRequested(String orderId, String tenantId, String userId) {
    String id =
        stream
            .append(
                List.of(
                    OrderEvent.of(
                            EventType.CANCEL_REQUESTED, orderId, tenantId, wallClock.getAsLong())
                        .with("userId", userId)))
            .get(0);
    metrics.count("events_emitted", 1);
    return id;
  }

  private boolean appendQuietly(List<OrderEvent> events, String what) {
    try {
      stream.append(events);
      metrics.count("events_emitted", events.size());
      return true;
    } catch (RuntimeException e) {
      metrics.count("event_emit_failures", events.size());
      log.warn("could not append event {} to {}: {}", what, stream.key(), e.toString());
      return false;
    }
  }
}
