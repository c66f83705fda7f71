package io.ordertimeout.compensation;

import io.ordertimeout.metrics.Metrics;
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

  public Metrics metrics() {
    return metrics;
  }
}
