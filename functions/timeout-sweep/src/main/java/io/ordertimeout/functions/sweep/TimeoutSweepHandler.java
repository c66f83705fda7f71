package io.ordertimeout.functions.sweep;

import com.amazonaws.services.lambda.runtime.Context;
import io.ordertimeout.aws.ScheduledHandler;
import io.ordertimeout.sweep.SweepJob;
import io.ordertimeout.sweep.SweepStats;
import io.ordertimeout.util.Json;
import io.ordertimeout.wiring.Components;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * timeout-sweep: invoked by an EventBridge schedule every minute, it sweeps until the invocation's
 * remaining time falls under the configured margin, closing orders as their deadlines pass.
 */
public final class TimeoutSweepHandler extends ScheduledHandler {
  private static final Logger log = LoggerFactory.getLogger(TimeoutSweepHandler.class);

  private final SweepJob job;

  public TimeoutSweepHandler() {
    this(Init.JOB);
  }

  public TimeoutSweepHandler(SweepJob job) {
    super(job.metrics());
    this.job = job;
  }

  @Override
  protected String handle(Map<String, Object> event, Context context) {
    SweepStats stats = job.run(context::getRemainingTimeInMillis);
    String summary = Json.write(Json.MAPPER.valueToTree(stats));
    log.info("sweep finished (request {}): {}", context.getAwsRequestId(), summary);
    return summary;
  }

  private static final class Init {
    static final SweepJob JOB = Components.fromEnvironment().sweepJob();
  }
}
