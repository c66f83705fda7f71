package io.ordertimeout.bench;

import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.redis.ShardLeases;
import io.ordertimeout.sweep.SweepStats;
import io.ordertimeout.sweep.TimeoutSweeper;
import io.ordertimeout.wiring.Components;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** This system: the timer index in Redis and one TimeoutSweeper, as the sweep function runs it. */
final class OtcSystem implements ClosingSystem {
  private final Components app;
  private final int parallelism;
  private final String name;
  private TimeoutSweeper sweeper;
  private Thread thread;
  private volatile SweepStats stats;

  /** {@code parallelism} 0: the sweeper as Components wires it; else that many closer threads. */
  OtcSystem(Components app, int parallelism) {
    this(app, parallelism, "otc");
  }

  /** Under another name: the same system with other settings ({@code otc-gather-100}). */
  OtcSystem(Components app, int parallelism, String name) {
    this.app = app;
    this.parallelism = parallelism;
    this.name = name;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public String description() {
    return "this system: TimeoutSweeper over "
        + app.config().timerShards()
        + " timer shards, batch "
        + app.config().sweepBatch()
        + ", poll "
        + app.config().sweepPoll().toMillis()
        + " ms, gather "
        + app.config().sweep().gather().toMillis()
        + " ms, DB pool "
        + app.config().dbPoolSize();
  }

  @Override
  public long scheduleMicrosPerOrder() {
    return 10;
  }

  @Override
  public void schedule(Map<String, Long> deadlines) {
    app.timers().scheduleAll(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, deadlines);
  }

  @Override
  public void start() {
    sweeper = parallelism == 0 ? app.newSweeper() : sweeperWith(parallelism);
    thread = new Thread(() -> stats = sweeper.run(() -> Long.MAX_VALUE / 4), "bench-otc-sweeper");
    thread.start();
  }

  private TimeoutSweeper sweeperWith(int threads) {
    var c = app.config();
    return new TimeoutSweeper(
        app.timers(),
        new ShardLeases(app.redis().sync()),
        app.closer(),
        app.events(),
        app.time(),
        app.metrics(),
        new TimeoutSweeper.Settings(
            c.sweepBatch(),
            c.claimLease(),
            c.sweepPoll(),
            c.invocationMargin(),
            threads,
            Duration.ZERO,
            TimeoutSweeper.DEFAULT_KIND_BATCH,
            1,
            c.sweep().gather()),
        app.tenants()::all);
  }

  @Override
  public void onPaid(List<String> orderIds) {
    // The paid path's last step (docs/concepts/design.md, the paid path): ZREM the timer after the
    // commit.
    app.timers().remove(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, orderIds);
  }

  @Override
  public void stop() throws InterruptedException {
    sweeper.terminate();
    thread.join();
  }

  SweepStats stats() {
    return stats;
  }
}
