package io.ordertimeout.admin;

import io.ordertimeout.compensation.CompensationJob;
import io.ordertimeout.compensation.CompensationReport;
import io.ordertimeout.metrics.Metrics;

/**
 * Everything the admin API calls, and nothing else (the handler receives this instead of the whole
 * wiring): dead letters, an order's story, force-close, the pause flags, compensation now, the
 * reconciliation against the trade bill.
 */
public record AdminOps(
    DeadLetterAdmin deadLetters,
    OrderStory stories,
    ForceClose forceClose,
    Pauses pauses,
    CompensationJob compensation,
    AdminActions actions,
    Metrics metrics,
    ReconciliationAdmin reconciliation) {

  /** Without the reconciliation routes (they answer 503). */
  public AdminOps(
      DeadLetterAdmin deadLetters,
      OrderStory stories,
      ForceClose forceClose,
      Pauses pauses,
      CompensationJob compensation,
      AdminActions actions,
      Metrics metrics) {
    this(
        deadLetters,
        stories,
        forceClose,
        pauses,
        compensation,
        actions,
        metrics,
        new ReconciliationAdmin(
            null,
            actions,
            () -> java.time.LocalDate.now(io.ordertimeout.reconcile.Reconciler.SHANGHAI)));
  }

  /** Runs one compensation pass now, as the schedule would, and records who asked. */
  public CompensationReport compensateNow(String operator) {
    CompensationReport report = compensation.run();
    actions.record(
        "compensate",
        AdminActions.ALL_TENANTS,
        "compensation",
        operator,
        null,
        java.util.Map.of(
            "repairs", report.repairs().size(),
            "flags", report.flags().size(),
            "failures", report.failures()));
    return report;
  }
}
