package io.ordertimeout.outbox;

import io.ordertimeout.loop.Sleeper;
import io.ordertimeout.metrics.Metrics;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One invocation's relay loop: {@code until done: one pass; wait if idle}, plus one bounded
 * retention run and the lag metrics. It runs on its own thread beside the stream consumer's loop in
 * the stream-consumer function ({@link #alongside}), which is the relay's schedule (README,
 * "Events": why there and not in a function of its own).
 */
public final class RelayJob {
  private static final Logger log = LoggerFactory.getLogger(RelayJob.class);

  /** Lags are sampled every 5 s: 12 samples per minute-long invocation feed the alarms' Maximum. */
  static final long SAMPLE_EVERY_NANOS = Duration.ofSeconds(5).toNanos();

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

  /** What one run did. */
  public record Stats(long passes, long relayed, int deleted) {}

  /** Relays until the remaining time falls under the margin or {@code sleeper} is terminated. */
  public Stats run(LongSupplier remainingMillis, Sleeper sleeper) {
    OutboxRelay relay = relays.get();
    int deleted = deleteOld();
    long passes = 0;
    long relayed = 0;
    long nextSample = System.nanoTime();
    try {
      while (!sleeper.done() && remainingMillis.getAsLong() > margin.toMillis()) {
        int moved = relay.relayOnce();
        passes++;
        relayed += moved;
        if (System.nanoTime() - nextSample >= 0) {
          sample(relay);
          nextSample = System.nanoTime() + SAMPLE_EVERY_NANOS;
        }
        if (moved == 0) {
          sleeper.sleep(Sleeper.jittered(settings.poll().toMillis()));
        }
      }
      // One more pass after the loop: what the consumer's last closes wrote (their `closed` events)
      // leaves now rather than a minute later with the next invocation.
      relayed += relay.relayOnce();
    } finally {
      relay.release();
    }
    sample(relay);
    return new Stats(passes, relayed, deleted);
  }

  /**
   * Runs the relay on a thread of its own while {@code main} (the consumer loop) runs on the
   * caller's; ends it when {@code main} returns and answers main's result.
   */
  public <T> T alongside(LongSupplier remainingMillis, Supplier<T> main) {
    Sleeper sleeper = new Sleeper();
    AtomicReference<Stats> stats = new AtomicReference<>();
    Thread thread = new Thread(() -> stats.set(run(remainingMillis, sleeper)), "outbox-relay");
    thread.setDaemon(true);
    thread.start();
    try {
      return main.get();
    } finally {
      sleeper.terminate();
      try {
        thread.join(settings.lease().toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      log.info("outbox relay finished: {}", stats.get());
    }
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

  private void sample(OutboxRelay relay) {
    try {
      relay.recordLag();
      streamLagSampler.run();
    } catch (RuntimeException e) {
      log.warn("could not sample the outbox and stream lag: {}", e.toString());
    }
  }
}
