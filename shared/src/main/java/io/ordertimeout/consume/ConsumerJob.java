package io.ordertimeout.consume;

import io.ordertimeout.metrics.Metrics;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * One scheduled consumer invocation: a fresh consumer (its own blocking-read connection, closed at
 * the end) reads the stream until the remaining time falls under the margin.
 */
public final class ConsumerJob {
  private final Supplier<StreamConsumer> consumers;
  private final Metrics metrics;

  public ConsumerJob(Supplier<StreamConsumer> consumers, Metrics metrics) {
    this.consumers = consumers;
    this.metrics = metrics;
  }

  public ConsumerStats run(LongSupplier remainingMillis) {
    try (StreamConsumer consumer = consumers.get()) {
      return consumer.run(remainingMillis);
    }
  }

  public Metrics metrics() {
    return metrics;
  }
}
