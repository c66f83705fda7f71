package io.ordertimeout.metrics;

import java.util.Set;

/**
 * The CloudWatch namespace and the metric names that template.yaml's alarms read. Code that records
 * one of these uses the constant, so a rename breaks the build (and {@code MetricNamesTest} checks
 * the template against this list).
 */
public final class MetricNames {
  /** The namespace of every metric the functions publish in Embedded Metric Format. */
  public static final String NAMESPACE = "OrderTimeout";

  /** Histogram: closed_at - expire_at of each closed order (design goal: p99 under 200 ms). */
  public static final String CLOSE_LAG_MS = "close_lag_ms";

  /** Gauge: timers whose deadline has passed and that no sweep has claimed yet. */
  public static final String TIMER_BACKLOG = "timer_backlog";

  /** Counter: order events moved to the dead-letter store after their last delivery. */
  public static final String DEAD_LETTERS = "dead_letters";

  /** Counter: WeChat reported SUCCESS for an order already CLOSED. */
  public static final String PAID_AFTER_CLOSE = "paid_after_close";

  /** Counter: a close whose stock release failed (the order stays UNPAID and is retried). */
  public static final String STOCK_RELEASE_FAILURES = "stock_release_failures";

  /**
   * Histogram, sampled every 5 s: age of the oldest outbox row not yet relayed, per destination.
   */
  public static final String OUTBOX_LAG_MS = "outbox_lag_ms";

  /** Histogram, sampled every 5 s: age of the oldest stream entry the closers have not acked. */
  public static final String STREAM_LAG_MS = "stream_lag_ms";

  /** Gauge: entries delivered to the closers group and not acknowledged yet. */
  public static final String STREAM_PENDING = "stream_pending";

  /** The names template.yaml raises alarms on. */
  public static final Set<String> ALARMED =
      Set.of(
          CLOSE_LAG_MS,
          TIMER_BACKLOG,
          DEAD_LETTERS,
          PAID_AFTER_CLOSE,
          STOCK_RELEASE_FAILURES,
          OUTBOX_LAG_MS,
          STREAM_LAG_MS,
          STREAM_PENDING);

  private MetricNames() {}
}
