package io.ordertimeout.bench;

import io.ordertimeout.sweep.SweepJob;
import io.ordertimeout.sweep.SweepStats;
import io.ordertimeout.wiring.Components;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The timeout-sweep function as template.yaml deploys it: EventBridge Scheduler's {@code rate(1
 * minute)} starts an invocation every {@code periodMillis}, each runs {@link SweepJob#run} (what
 * {@code TimeoutSweepHandler.handle} calls) with Lambda's remaining time counting down from the
 * function's Timeout (100 s), and ReservedConcurrentExecutions 2 gives two execution environments,
 * each with its own {@link Components} (pool, Redis connection) built once as Lambda's init does:
 * invocation n runs on environment n % 2. So a run overlaps the next by ~20 s (it stops at the 19 s
 * margin) and the shard leases split the shards between them, as in production.
 */
final class SweepSchedule implements AutoCloseable {
  /** One invocation: its number, when it started (epoch ms), what the sweep reported. */
  record Invocation(int number, long startedMillis, SweepStats stats) {}

  private final List<SweepJob> environments = new ArrayList<>();
  private final long periodMillis;
  private final long timeoutMillis;
  private final ScheduledExecutorService scheduler =
      Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "bench-scheduler"));
  private final ExecutorService lambda = Executors.newCachedThreadPool();
  private final List<Future<Invocation>> runs = new ArrayList<>();
  private volatile boolean stopping;
  private int invoked;

  SweepSchedule(List<Components> environments, long periodMillis, long timeoutMillis) {
    environments.forEach(app -> this.environments.add(app.sweepJob()));
    this.periodMillis = periodMillis;
    this.timeoutMillis = timeoutMillis;
  }

  /** The first invocation now, then one every period. */
  void start() {
    scheduler.scheduleAtFixedRate(this::invoke, 0, periodMillis, TimeUnit.MILLISECONDS);
  }

  private synchronized void invoke() {
    if (stopping) {
      return;
    }
    int number = invoked++;
    SweepJob job = environments.get(number % environments.size());
    long started = System.currentTimeMillis();
    runs.add(
        lambda.submit(
            () ->
                new Invocation(
                    number,
                    started,
                    // Lambda's getRemainingTimeInMillis; 0 once stopping, which ends the sweep
                    // after its current pass or its wait (at most the poll interval)
                    job.run(
                        () ->
                            stopping ? 0 : started + timeoutMillis - System.currentTimeMillis()))));
  }

  /** Stops scheduling, ends the running invocations and returns every one's figures. */
  List<Invocation> stop() throws InterruptedException, ExecutionException {
    List<Future<Invocation>> started;
    synchronized (this) {
      stopping = true;
      started = List.copyOf(runs);
    }
    scheduler.shutdown();
    List<Invocation> out = new ArrayList<>();
    for (Future<Invocation> run : started) {
      out.add(run.get());
    }
    return out;
  }

  @Override
  public void close() {
    stopping = true;
    scheduler.shutdownNow();
    lambda.shutdown();
  }
}
