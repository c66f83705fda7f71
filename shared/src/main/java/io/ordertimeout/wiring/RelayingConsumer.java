package io.ordertimeout.wiring;

import io.ordertimeout.consume.ConsumerJob;
import io.ordertimeout.consume.ConsumerStats;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.outbox.RelayJob;
import java.util.function.LongSupplier;

/**
 * The stream-consumer function's invocation: the consumer loop on the caller's thread and the
 * outbox relay beside it (RelayJob#alongside), so the function that reads the stream is also the
 * one that fills it, on the same schedule and in the same time budget.
 */
public record RelayingConsumer(ConsumerJob consumer, RelayJob relay) {
  /** Runs both until the remaining time falls under the margin; answers the consumer's stats. */
  public ConsumerStats run(LongSupplier remainingMillis) {
    return relay.alongside(remainingMillis, () -> consumer.run(remainingMillis));
  }

  public Metrics metrics() {
    return consumer.metrics();
  }
}
