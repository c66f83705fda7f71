package io.ordertimeout.outbox;

import io.ordertimeout.loop.Sleeper;
import io.ordertimeout.loop.TimeBudget;
import io.ordertimeout.metrics.Metrics;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * One invocation's relay: a loop per destination, {@code until done: one pass; wait if idle}, each
 * on a thread of its own, plus one bounded retention run and the lag metrics. It runs beside the
 * stream consumer's loop in the stream-consumer function ({@link #alongside}), which is the relay's
 * schedule (docs/concepts/events.md: why there and not in a function of its own).
 *
 * <p>Why a loop per destination: the stream is the only path of a user's cancel to the closers, and
 * EventBridge can be slow for minutes (a brownout: every PutEvents timing out after its retries).
 * Sharing one loop, each stream pass waited for an EventBridge pass, up to minutes; now the
 * stream's loop never waits for the bus, and the bus's loop only holds back the bus.
 *
 * <p>Time: a loop starts passes while more than {@code max(margin, 1 s)} is left; inside a pass it
 * starts a batch, and a destination call ends, only within that time too, so a hung call cannot
 * carry a loop into the margin. The last pass after the loop (what the consumer's last closes
 * wrote) has until half of it; the invocation then waits for its loops until a quarter of it is
 * left, and interrupts a loop still running: no relay thread outlives its invocation (a frozen
 * Lambda environment would otherwise resume it inside the next one).
 */
public final class RelayJob {
  private static final Logger log = LoggerFactory.getLogger(RelayJob.class);

  /** Lags are sampled every 5 s: 12 samples per minute-long invocation feed the alarms' Maximum. */
  static final long SAMPLE_EVERY_NANOS = Duration.ofSeconds(5).toNanos();

  /**
   * The least time kept after the loops, whatever the margin: releasing the leases (one UPDATE per
   * destination), the lag sample, the EMF flush and the answer take milliseconds; 1 s leaves room
   * for a loaded host.
   */
  static final Duration END_RESERVE = Duration.ofSeconds(1);

  /** How long an interrupted loop gets to end before it is left behind (and logged). */
  static final long INTERRUPTED_JOIN_MILLIS = 500;

  private final Supplier<OutboxRelay> relays;
  private final OutboxRetention retention;
  private final Runnable streamLagSampler;
  private final RelaySettings settings;
  private final Duration margin;
  private final Metrics metrics;

  public RelayJob(
      Supplier<OutboxRelay> relays,
      OutboxRetention retention,
      Runnable streamLagSampler,
      RelaySettings settings,
      Duration margin,
      Metrics metrics) {
    this.relays = relays;
    this.retention = retention;
    this.streamLagSampler = streamLagSampler;
    this.settings = settings;
    this.margin = margin;
    this.metrics = metrics;
  }

  /** What one run did, every destination together. */
  public record Stats(long passes, long relayed, int deleted) {}

  /**
   * Relays until the remaining time falls under the margin or {@code sleeper} is terminated, one
   * loop per destination; returns when every loop ended (or was ended at the end of the time).
   */
  public Stats run(LongSupplier remainingMillis, Sleeper sleeper) {
    return start(remainingMillis, sleeper).await();
  }

  /**
   * Runs the relay's loops on threads of their own while {@code main} (the consumer loop) runs on
   * the caller's; ends them when {@code main} returns and answers main's result.
   */
  public <T> T alongside(LongSupplier remainingMillis, Supplier<T> main) {
    Sleeper sleeper = new Sleeper();
    Loops loops = start(remainingMillis, sleeper);
    try {
      return main.get();
    } finally {
      sleeper.terminate();
      log.info("outbox relay finished: {}", loops.await());
    }
  }

  private Loops start(LongSupplier remainingMillis, Sleeper sleeper) {
    long stopAt = Math.max(margin.toMillis(), END_RESERVE.toMillis());
    List<OutboxRelay> perDestination = relays.get().perDestination();
    Map<String, String> mdc = MDC.getCopyOfContextMap();
    List<DestinationLoop> loops = new ArrayList<>();
    for (int i = 0; i < perDestination.size(); i++) {
      OutboxRelay relay = perDestination.get(i);
      // retention (at most 20 DELETEs) runs on the last loop, the bus's when there is one, so the
      // stream's first pass does not wait for it
      boolean retains = i == perDestination.size() - 1;
      loops.add(new DestinationLoop(relay, remainingMillis, stopAt, sleeper, retains, mdc));
    }
    loops.forEach(DestinationLoop::start);
    return new Loops(loops, remainingMillis, stopAt / 4);
  }

  /** The running loops of one run. */
  private record Loops(List<DestinationLoop> loops, LongSupplier remainingMillis, long joinUntil) {
    /** Waits for every loop until {@code joinUntil} is left; interrupts those still running. */
    Stats await() {
      long passes = 0;
      long relayed = 0;
      int deleted = 0;
      for (DestinationLoop loop : loops) {
        loop.join(remainingMillis.getAsLong() - joinUntil);
        passes += loop.passCount.get();
        relayed += loop.relayed.get();
        deleted += loop.deleted.get();
      }
      return new Stats(passes, relayed, deleted);
    }
  }

  /** One destination's loop, on a thread of its own. */
  private final class DestinationLoop implements Runnable {
    private final OutboxRelay relay;
    private final boolean isStream;
    private final TimeBudget passes;
    private final TimeBudget lastPass;
    private final Sleeper sleeper;
    private final boolean retains;
    private final Map<String, String> mdc;
    private final Thread thread;
    private final AtomicLong passCount = new AtomicLong();
    private final AtomicLong relayed = new AtomicLong();
    private final AtomicInteger deleted = new AtomicInteger();

    DestinationLoop(
        OutboxRelay relay,
        LongSupplier remainingMillis,
        long stopAt,
        Sleeper sleeper,
        boolean retains,
        Map<String, String> mdc) {
      this.relay = relay;
      this.isStream = relay.destinations().contains(Destination.STREAM);
      this.passes = new TimeBudget(remainingMillis, Duration.ofMillis(stopAt));
      this.lastPass = new TimeBudget(remainingMillis, Duration.ofMillis(stopAt / 2));
      this.sleeper = sleeper;
      this.retains = retains;
      this.mdc = mdc;
      this.thread = new Thread(this, "outbox-relay-" + relay.destinations().get(0).leaseName());
      this.thread.setDaemon(true);
    }

    void start() {
      thread.start();
    }

    @Override
    public void run() {
      if (mdc != null) {
        MDC.setContextMap(mdc);
      }
      try {
        if (retains) {
          deleted.set(deleteOld());
        }
        loop();
      } finally {
        MDC.clear();
      }
    }

    private void loop() {
      long nextSample = System.nanoTime();
      try {
        while (!sleeper.done() && passes.leftMillis() > 0) {
          int moved = relay.relayOnce(passes);
          passCount.incrementAndGet();
          relayed.addAndGet(moved);
          if (System.nanoTime() - nextSample >= 0) {
            sample();
            nextSample = System.nanoTime() + SAMPLE_EVERY_NANOS;
          }
          if (moved == 0) {
            sleeper.sleep(passes.cap(Sleeper.jittered(settings.poll().toMillis())));
          }
        }
        // One more pass after the loop: what the consumer's last closes wrote (their `closed`
        // events) leaves now rather than a minute later with the next invocation.
        if (!Thread.currentThread().isInterrupted()) {
          relayed.addAndGet(relay.relayOnce(lastPass));
        }
      } finally {
        relay.release();
      }
      if (lastPass.leftMillis() > 0) {
        sample();
      }
    }

    /** Waits up to {@code millis} for the loop to end; then interrupts it and waits a little. */
    void join(long millis) {
      try {
        if (millis > 0) {
          thread.join(millis);
        }
        if (thread.isAlive()) {
          thread.interrupt();
          thread.join(INTERRUPTED_JOIN_MILLIS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (thread.isAlive()) {
        log.warn(
            "relay loop {} did not end with its invocation's time; left running: {}",
            thread.getName(),
            stackTop(thread));
      }
    }

    private void sample() {
      try {
        relay.recordLag();
        if (isStream) {
          streamLagSampler.run();
        }
      } catch (RuntimeException e) {
        log.warn("could not sample the outbox and stream lag: {}", e.toString());
      }
    }
  }

  private static String stackTop(Thread thread) {
    StackTraceElement[] stack = thread.getStackTrace();
    return stack.length == 0 ? "(no stack)" : stack[0].toString();
  }

  private int deleteOld() {
    try {
      return retention.deleteOld();
    } catch (RuntimeException e) {
      metrics.count("outbox_retention_failures", 1);
      log.warn("outbox retention failed; the next run retries: {}", e.toString());
      return 0;
    }
  }
}
