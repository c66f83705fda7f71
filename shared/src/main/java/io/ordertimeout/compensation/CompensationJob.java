package io.ordertimeout.compensation;

import io.ordertimeout.metrics.Metrics;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/** One scheduled compensation pass with fixed settings; a fresh Compensator per pass. */
public final class CompensationJob {
  private final Supplier<Compensator> compensators;
  private final Metrics metrics;

  public CompensationJob(Supplier<Compensator> compensators, Metrics metrics) {
    this.compensators = compensators;
    this.metrics = metrics;
  }

  public CompensationReport run() {
    return compensators.get().run();
  }

  /** One pass that stops its work while {@code remainingMillis} still covers the margin. */
  public CompensationReport run(LongSupplier remainingMillis) {
    return compensators.get().run(remainingMillis);
  }

  public Metrics metrics() {
    return metrics;
  }
}
