package io.ordertimeout.sweep;

import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.redis.TimeSource;
import io.ordertimeout.redis.TimerBacklog;
import io.ordertimeout.redis.TimerIndex;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * One scheduled sweep invocation: a fresh sweeper (its own lease token) runs until the remaining
 * time falls under the margin, then the timer backlog gauge is published.
 */
public final class SweepJob {
  private final Supplier<TimeoutSweeper> sweepers;
  private final RedisClusterCommands<String, String> redis;
  private final TimerIndex timers;
  private final Supplier<List<String>> tenants;
  private final TimeSource time;
  private final Metrics metrics;
  private final BooleanSupplier paused;

  /** {@code paused}: asked once per run; true skips the sweep (an operator's pause). */
  public SweepJob(
      Supplier<TimeoutSweeper> sweepers,
      RedisClusterCommands<String, String> redis,
      TimerIndex timers,
      Supplier<List<String>> tenants,
      TimeSource time,
      Metrics metrics,
      BooleanSupplier paused) {
    this.sweepers = sweepers;
    this.redis = redis;
    this.timers = timers;
    this.tenants = tenants;
    this.time = time;
    this.metrics = metrics;
    this.paused = paused;
  }

  public SweepStats run(LongSupplier remainingMillis) {
    SweepStats stats =
        paused.getAsBoolean()
            ? new SweepStats(0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            : sweepers.get().run(remainingMillis);
    // the backlog alarm reads this gauge every minute: its silence means no sweep ran
    TimerBacklog.record(metrics, redis, timers, tenants.get(), time.nowMillis());
    return stats;
  }

  public Metrics metrics() {
    return metrics;
  }
}
