package io.ordertimeout.reliability;

import io.ordertimeout.consume.StreamConsumer;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.redis.TimerBacklog;
import io.ordertimeout.sweep.TimeoutSweeper;
import io.ordertimeout.wiring.Components;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Sweeps and stream consumers running as back-to-back invocations of {@code invocationMillis} each
 * (as Lambda schedules run them), until {@link #close()}. An invocation that dies on a fault is
 * counted and the next one starts, as the next scheduled invocation would.
 */
final class Workers implements AutoCloseable {
  private final List<Thread> threads = new ArrayList<>();
  private final List<TimeoutSweeper> sweepers = new ArrayList<>();
  private final List<StreamConsumer> consumers = new ArrayList<>();
  private final AtomicLong failedInvocations = new AtomicLong();
  private final AtomicLong failedSweeps = new AtomicLong();
  private final AtomicLong failedConsumes = new AtomicLong();
  private final AtomicLong backlogReports = new AtomicLong();
  private final long invocationMillis;
  private volatile boolean stopping;

  Workers(Components app, int sweeps, int streamConsumers, long invocationMillis) {
    this.invocationMillis = invocationMillis;
    for (int i = 0; i < sweeps; i++) {
      start("sweep-" + i, failedSweeps, () -> sweepOnce(app));
    }
    for (int i = 0; i < streamConsumers; i++) {
      start("consume-" + i, failedConsumes, () -> consumeOnce(app));
    }
  }

  long failedInvocations() {
    return failedInvocations.get();
  }

  /** Failed sweep invocations: what the TimeoutSweepErrorsAlarm's Lambda Errors metric counts. */
  long failedSweeps() {
    return failedSweeps.get();
  }

  /** Failed consumer invocations: what the StreamConsumerErrorsAlarm's Errors metric counts. */
  long failedConsumes() {
    return failedConsumes.get();
  }

  /**
   * Sweeps that published the timer_backlog gauge; none in a period is the alarm's missing data.
   */
  long backlogReports() {
    return backlogReports.get();
  }

  private void start(String name, AtomicLong failures, Runnable invocation) {
    Thread t =
        new Thread(
            () -> {
              while (!stopping) {
                try {
                  invocation.run();
                } catch (RuntimeException e) {
                  failedInvocations.incrementAndGet();
                  failures.incrementAndGet();
                  // Pacing, not a wait for an outcome: a failed invocation is retried 200 ms
                  // later, as a scheduler would, instead of spinning while Redis or MySQL is down.
                  pause(200);
                }
              }
            },
            "fault-" + name);
    t.setDaemon(true);
    threads.add(t);
    t.start();
  }

  private void sweepOnce(Components app) {
    TimeoutSweeper sweeper = app.newSweeper();
    register(sweepers, sweeper);
    long end = System.currentTimeMillis() + invocationMillis;
    try {
      sweeper.run(() -> stopping ? 0 : end - System.currentTimeMillis());
    } finally {
      unregister(sweepers, sweeper);
    }
    // as SweepJob (the handler's job) does after each run: the backlog alarm reads this gauge
    TimerBacklog.record(
        app.metrics(),
        app.redis().sync(),
        app.timers(),
        java.util.List.of(TenantIds.DEFAULT),
        app.time().nowMillis());
    backlogReports.incrementAndGet();
  }

  /** A stream-consumer invocation: the consumer loop with the outbox relay beside it. */
  private void consumeOnce(Components app) {
    long end = System.currentTimeMillis() + invocationMillis;
    LongSupplier remaining = () -> stopping ? 0 : end - System.currentTimeMillis();
    try (StreamConsumer consumer = app.newStreamConsumer()) {
      register(consumers, consumer);
      try {
        app.relayJob(app.relaySettings(System.getenv()), null)
            .alongside(remaining, () -> consumer.run(remaining));
      } finally {
        unregister(consumers, consumer);
      }
    }
  }

  private <T> void register(List<T> list, T worker) {
    synchronized (list) {
      list.add(worker);
    }
    if (stopping) {
      stopAll();
    }
  }

  private static <T> void unregister(List<T> list, T worker) {
    synchronized (list) {
      list.remove(worker);
    }
  }

  private void stopAll() {
    synchronized (sweepers) {
      sweepers.forEach(TimeoutSweeper::terminate);
    }
    synchronized (consumers) {
      consumers.forEach(StreamConsumer::terminate);
    }
  }

  static void pause(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    stopping = true;
    stopAll();
    for (Thread t : threads) {
      try {
        t.join(30_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }
}
