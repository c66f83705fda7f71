package io.ordertimeout.functions.compensation;

import com.amazonaws.services.lambda.runtime.Context;
import io.ordertimeout.aws.ScheduledHandler;
import io.ordertimeout.compensation.CompensationJob;
import io.ordertimeout.compensation.CompensationReport;
import io.ordertimeout.compensation.CompensationSettings;
import io.ordertimeout.reconcile.ReconciliationSettings;
import io.ordertimeout.wiring.Components;
import java.util.Map;

/**
 * compensation: invoked by an EventBridge schedule every 5 minutes, it runs one reconciliation pass
 * of MySQL against Redis and WeChat (see io.ordertimeout.compensation.Compensator) and answers the
 * pass's report as JSON (the pass ends with the daily reconciliation against WeChat's trade bill,
 * io.ordertimeout.reconcile.ReconciliationJob, once a day's bill is published), stopping early (its
 * report's {@code skipped}) when the invocation's remaining time runs short; the same report is
 * logged as one JSON line and published as metrics.
 */
public final class CompensationHandler extends ScheduledHandler {
  private final CompensationJob job;

  public CompensationHandler() {
    this(Init.JOB);
  }

  /** For tests and the local runner: the pass and its settings come from the caller. */
  public CompensationHandler(CompensationJob job) {
    super(job.metrics());
    this.job = job;
  }

  @Override
  protected String handle(Map<String, Object> event, Context context) {
    // Stops while the margin is left: a pass never runs into Lambda's timeout, whose kill would
    // leave a page half-reported and the metrics unflushed.
    CompensationReport report = job.run(context::getRemainingTimeInMillis);
    return report.toJson();
  }

  private static final class Init {
    static final CompensationJob JOB = job(Components.fromEnvironment(), System.getenv());
  }

  /** The pass and its daily reconciliation, both configured from {@code env}. */
  static CompensationJob job(Components components, Map<String, String> env) {
    return components.compensationJob(
        CompensationSettings.fromEnvironment(env), ReconciliationSettings.fromEnvironment(env));
  }
}
