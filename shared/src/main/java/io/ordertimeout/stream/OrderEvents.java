package io.ordertimeout.stream;

import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.ClosedOrder;
import io.ordertimeout.domain.Order;
import io.ordertimeout.metrics.Metrics;
import java.util.Collection;
import java.util.List;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Emits order events. MySQL is the source of truth, so an event that cannot be appended after the
 * state change committed never fails the operation: it is logged and counted ({@code
 * event_emit_failures}). The one exception is {@link #cancelRequested}, where the event is the
 * whole operation and its failure must reach the caller.
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

  /** {@code created}: after the order committed and its timer was scheduled. */
  public void created(Order order) {
    appendQuietly(
        List.of(
            OrderEvent.of(
                    EventType.CREATED, order.orderId(), order.tenantId(), wallClock.getAsLong())
                .with("userId", order.userId())
                .with("expireAt", order.expireAt().toEpochMilli())
                .with("amountFen", order.amountFen())),
        "created " + order.orderId());
  }

  /** {@code paid}: for the payment path, after the UNPAID -> PAID commit. */
  public void paid(String orderId, String tenantId, String transactionId) {
    appendQuietly(
        List.of(
            OrderEvent.of(EventType.PAID, orderId, tenantId, wallClock.getAsLong())
                .with("transactionId", transactionId)),
        "paid " + orderId);
  }

  /** {@code closed}: one per order a close committed. */
  public void closed(Collection<ClosedOrder> closed, CloseReason reason) {
    if (closed.isEmpty()) {
      return;
    }
    long at = wallClock.getAsLong();
    List<OrderEvent> events =
        closed.stream()
            .map(
                c ->
                    OrderEvent.of(EventType.CLOSED, c.orderId(), null, at)
                        .with("reason", reason.name())
                        .with("lagMs", c.lagMillis()))
            .toList();
    appendQuietly(events, "closed " + closed.size() + " orders");
  }

  /**
   * {@code close_due} for orders the sweep hands on; true when appended. On failure the timers keep
   * their claim lease and return to a sweep, so nothing is lost.
   */
  public boolean closeDue(Collection<String> orderIds, HandOffCause cause) {
    long at = wallClock.getAsLong();
    List<OrderEvent> events =
        orderIds.stream()
            .map(
                id ->
                    OrderEvent.of(EventType.CLOSE_DUE, id, null, at)
                        .with("cause", cause.name().toLowerCase(java.util.Locale.ROOT)))
            .toList();
    return appendQuietly(events, "close_due for " + orderIds.size() + " orders");
  }

  /**
   * {@code cancel_requested}: the whole of a cancel request, so a failure is thrown to the caller
   * (the API answers 503 and the client retries; a duplicate request only closes once).
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
