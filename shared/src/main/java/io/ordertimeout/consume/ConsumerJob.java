package io.ordertimeout.consume;

import io.ordertimeout.metrics.Metrics;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * One scheduled consumer invocation: a fresh consumer (its own blocking-read connection, closed at
 * the end) reads the stream until the remaining time falls under the margin.
 */
public final class ConsumerJob {
  private final Supplier<StreamConsumer> consumers;
  private final Metrics metrics;
  private final BooleanSupplier paused;

  /** {@code paused}: asked once per run; true skips the run (an operator's pause). */
  public ConsumerJob(Supplier<StreamConsumer> consumers, Metrics metrics, BooleanSupplier paused) {
    this.consumers = consumers;
    this.metrics = metrics;
    this.paused = paused;
  }

  public ConsumerStats run(LongSupplier remainingMillis) {
    if (paused.getAsBoolean()) {
      return new ConsumerStats(null, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    }
    try (StreamConsumer consumer = consumers.get()) {
      return consumer.run(remainingMillis);
    }
  }

  public Metrics metrics() {
    return metrics;
  }
}
