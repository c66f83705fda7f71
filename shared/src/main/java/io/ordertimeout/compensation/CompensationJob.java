package io.ordertimeout.compensation;

import io.ordertimeout.metrics.Metrics;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/** One scheduled compensation pass with fixed settings; a fresh Compensator per pass. */
public final class CompensationJob {
  private final Supplier<Compensator> compensators;
  private final Metrics metrics;
  private final io.ordertimeout.reconcile.ReconciliationJob reconciliation;

  public CompensationJob(Supplier<Compensator> compensators, Metrics metrics) {
    this(compensators, metrics, null);
  }

  /**
   * @param reconciliation the daily reconciliation each scheduled pass ends with; null for none
   */
  public CompensationJob(
      Supplier<Compensator> compensators,
      Metrics metrics,
      io.ordertimeout.reconcile.ReconciliationJob reconciliation) {
    this.compensators = compensators;
    this.metrics = metrics;
    this.reconciliation = reconciliation;
  }

  public CompensationReport run() {
    return compensators.get().run();
  }

  /** One pass that stops its work while {@code remainingMillis} still covers the margin. */
  public CompensationReport run(LongSupplier remainingMillis) {
    CompensationReport report = compensators.get().run(remainingMillis);
    if (reconciliation != null) {
      reconciliation.runDue(remainingMillis);
    }
    return report;
  }

  public Metrics metrics() {
    return metrics;
  }
}
