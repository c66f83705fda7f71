package io.ordertimeout.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The drain loop both engines share, so they differ only in one pass: {@code workers} threads start
 * at the first due instant, each repeats its pass until every timer is delivered or the plan's
 * drain time is up, and sleeps 1 ms after a pass that delivered nothing (both engines poll the same
 * way, so neither gets a cheaper idle wait).
 */
final class TriggerDrain {
  private TriggerDrain() {}

  /** One pass of worker {@code w}: delivers what it can, returns how many. */
  @FunctionalInterface
  interface Pass {
    long run(int worker, TriggerTally tally, Sink sink) throws Exception;
  }

  /** Where a pass reports delivered timers: stamps them, counts them toward the stop. */
  static final class Sink {
    private final TriggerPlan plan;
    private final AtomicLong delivered = new AtomicLong();
    private final AtomicLong lastNanos = new AtomicLong();

    Sink(TriggerPlan plan) {
      this.plan = plan;
    }

    void delivered(TriggerTally tally, List<String> ids) {
      tally.deliver(plan, ids, System.currentTimeMillis());
      delivered.addAndGet(ids.size());
      lastNanos.accumulateAndGet(System.nanoTime(), Math::max);
    }
  }

  static TriggerResult run(TriggerEngine engine, TriggerPlan plan, Pass pass) throws Exception {
    long wait = plan.dueAt0() - System.currentTimeMillis();
    if (wait > 0) {
      Thread.sleep(wait);
    }
    Sink sink = new Sink(plan);
    long start = System.nanoTime();
    long deadline = start + plan.maxDrainMs() * 1_000_000;
    ExecutorService pool = Executors.newFixedThreadPool(plan.workers());
    List<Future<TriggerTally>> workers = new ArrayList<>();
    try {
      for (int w = 0; w < plan.workers(); w++) {
        int worker = w;
        workers.add(
            pool.submit(
                () -> {
                  TriggerTally tally = new TriggerTally();
                  while (sink.delivered.get() < plan.timers() && System.nanoTime() < deadline) {
                    if (pass.run(worker, tally, sink) == 0) {
                      Thread.sleep(1);
                    }
                  }
                  return tally;
                }));
      }
      TriggerTally total = new TriggerTally();
      for (Future<TriggerTally> f : workers) {
        total.merge(f.get());
      }
      long end = sink.lastNanos.get() == 0 ? System.nanoTime() : sink.lastNanos.get();
      return new TriggerResult(
          engine.name(),
          engine.description(),
          plan,
          Math.max(1, end - start) / 1e9,
          total,
          engine.keysLeft(),
          0,
          0);
    } finally {
      pool.shutdownNow();
    }
  }
}
