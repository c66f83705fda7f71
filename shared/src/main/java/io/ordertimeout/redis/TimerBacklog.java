package io.ordertimeout.redis;

import io.lettuce.core.Range;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.metrics.MetricNames;
import io.ordertimeout.metrics.Metrics;
import java.util.Collection;

/**
 * Counts the timers that are due and unclaimed: score (deadline, or a claimer's lease end) at or
 * before now. A claimed batch moves its scores to now + lease, so orders being closed right now are
 * not backlog; a crashed claimer's orders come back into it when their lease runs out.
 */
public final class TimerBacklog {
  private TimerBacklog() {}

  /**
   * One ZCOUNT per shard and tenant: O(log n) each, 16 round trips per tenant for the default 16
   * shards.
   */
  public static long measure(
      RedisClusterCommands<String, String> redis,
      TimerIndex timers,
      Collection<String> tenantIds,
      long nowMillis) {
    Range<Long> due = Range.from(Range.Boundary.unbounded(), Range.Boundary.including(nowMillis));
    long total = 0;
    for (String tenantId : tenantIds) {
      for (int shard = 0; shard < timers.shards(); shard++) {
        total += redis.zcount(timers.timersKey(tenantId, shard, DeadlineKind.PAYMENT_TIMEOUT), due);
      }
    }
    return total;
  }

  /** Measures the backlog and sets it as the {@link MetricNames#TIMER_BACKLOG} gauge. */
  public static long record(
      Metrics metrics,
      RedisClusterCommands<String, String> redis,
      TimerIndex timers,
      Collection<String> tenantIds,
      long now) {
    long backlog = measure(redis, timers, tenantIds, now);
    metrics.gauge(MetricNames.TIMER_BACKLOG, backlog);
    return backlog;
  }
}
