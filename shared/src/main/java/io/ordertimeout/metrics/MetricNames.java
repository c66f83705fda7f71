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

  /**
   * Counter: WeChat reported a refund ABNORMAL (the payer's card or account cannot take the money);
   * an operator applies for the exception refund.
   */
  public static final String REFUNDS_ABNORMAL = "refunds_abnormal";

  /** Counter: a close whose stock release failed (the order stays UNPAID and is retried). */
  public static final String STOCK_RELEASE_FAILURES = "stock_release_failures";

  /**
   * Counter: a close found the order's payer still USERPAYING at WeChat longer than
   * OTC_USERPAYING_LIMIT_MS past its deadline (counted at each look, every 5 minutes while it
   * lasts).
   */
  public static final String ORDERS_USERPAYING_STUCK = "orders_userpaying_stuck";

  /**
   * Histogram, sampled every 5 s: age of the oldest outbox row not yet relayed, per destination.
   */
  public static final String OUTBOX_LAG_MS = "outbox_lag_ms";

  /** Histogram, sampled every 5 s: age of the oldest stream entry the closers have not acked. */
  public static final String STREAM_LAG_MS = "stream_lag_ms";

  /** Gauge: entries delivered to the closers group and not acknowledged yet. */
  public static final String STREAM_PENDING = "stream_pending";

  /**
   * Counter: bill lines (or paid orders without a line) the daily reconciliation flagged for the
   * first time; a re-run of the day counts none again.
   */
  public static final String RECONCILIATION_FLAGS = "reconciliation_flags";

  /** Counter: a tenant's day the scheduled reconciliation could not finish (tried again later). */
  public static final String RECONCILIATION_FAILURES = "reconciliation_failures";

  /** The names template.yaml raises alarms on. */
  public static final Set<String> ALARMED =
      Set.of(
          CLOSE_LAG_MS,
          TIMER_BACKLOG,
          DEAD_LETTERS,
          PAID_AFTER_CLOSE,
          REFUNDS_ABNORMAL,
          STOCK_RELEASE_FAILURES,
          ORDERS_USERPAYING_STUCK,
          OUTBOX_LAG_MS,
          STREAM_LAG_MS,
          STREAM_PENDING,
          RECONCILIATION_FLAGS,
          RECONCILIATION_FAILURES);

  /** The names template.yaml's dashboard graphs beside the alarmed ones. */
  public static final Set<String> DASHBOARD =
      Set.of(
          "orders_closed_timeout",
          "orders_closed_cancel",
          "orders_paid",
          "orders_prepaid",
          "payment_duplicates",
          "payment_notifications_replayed",
          "paid_after_close_refunds",
          "paid_after_close_refund_failures",
          "close_batch_failures",
          "close_wechat_failures",
          "compensation_failures",
          "compensation_flags",
          "compensation_repairs",
          "stream_claimed",
          "stream_consumer_errors",
          "stream_delivery_failures");

  /**
   * The names the runbook and the operator's documentation tell an operator to watch: a
   * notification for a tenant or trade this deployment does not know, a close that could not reach
   * WeChat or met a refunded trade, an operator's force-close, a compensation pass that ran out of
   * time, the relay's throughput and failures, a close refused as not due on the database's clock.
   */
  public static final Set<String> OPERATOR =
      Set.of(
          "payment_notifications_unknown_tenant",
          "payment_notifications_unbound",
          "refund_notifications_unbound",
          "close_trade_unreachable",
          "close_refunded_trade",
          "close_not_due",
          "orders_force_closed",
          "compensation_skipped",
          "outbox_relayed",
          "outbox_relay_failures",
          "outbox_bridge_entry_failures",
          "outbox_cancels_redelivered",
          "outbox_rows_deleted");

  /**
   * What EmfPublisher declares as CloudWatch metrics (service-wide, no dimension; close lag and the
   * backlog also per tenant): what an alarm, the dashboard or an operator's step reads. Every other
   * counter, gauge and latency goes into the same log lines as a plain field, which Logs Insights
   * queries ({@code stats sum(sweep_shard_errors) by bin(5m)}) at no metric charge.
   */
  public static final Set<String> PUBLISHED = union(ALARMED, DASHBOARD, OPERATOR);

  @SafeVarargs
  private static Set<String> union(Set<String>... sets) {
    java.util.Set<String> all = new java.util.TreeSet<>();
    for (Set<String> s : sets) {
      all.addAll(s);
    }
    return Set.copyOf(all);
  }

  private MetricNames() {}
}
