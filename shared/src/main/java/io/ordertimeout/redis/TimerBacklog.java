package io.ordertimeout.redis;

import io.lettuce.core.Range;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.metrics.MetricNames;
import io.ordertimeout.metrics.Metrics;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;

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
    return measureByTenant(redis, timers, tenantIds, nowMillis).values().stream()
        .mapToLong(Long::longValue)
        .sum();
  }

  /** The backlog of each tenant, in {@code tenantIds}' order; the same ZCOUNTs as measure. */
  public static Map<String, Long> measureByTenant(
      RedisClusterCommands<String, String> redis,
      TimerIndex timers,
      Collection<String> tenantIds,
      long nowMillis) {
    Range<Long> due = Range.from(Range.Boundary.unbounded(), Range.Boundary.including(nowMillis));
    Map<String, Long> out = new LinkedHashMap<>();
    for (String tenantId : tenantIds) {
      long backlog = 0;
      for (int shard = 0; shard < timers.shards(); shard++) {
        backlog +=
            redis.zcount(timers.timersKey(tenantId, shard, DeadlineKind.PAYMENT_TIMEOUT), due);
      }
      out.put(tenantId, backlog);
    }
    return out;
  }

  /**
   * Measures the backlog and sets it as the {@link MetricNames#TIMER_BACKLOG} gauge: the sum over
   * every tenant undimensioned (what TimerBacklogAlarm reads), and each tenant's under the Tenant
   * dimension: the first 20 tenants this environment saw, the rest summed as "(other)"
   * (metrics.TenantLabels).
   */
  public static long record(
      Metrics metrics,
      RedisClusterCommands<String, String> redis,
      TimerIndex timers,
      Collection<String> tenantIds,
      long now) {
    Map<String, Long> byTenant = measureByTenant(redis, timers, tenantIds, now);
    metrics.gaugeByTenant(MetricNames.TIMER_BACKLOG, byTenant);
    return byTenant.values().stream().mapToLong(Long::longValue).sum();
  }
}
