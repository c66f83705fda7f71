package io.ordertimeout.functions.sweep;

import com.amazonaws.services.lambda.runtime.Context;
import io.ordertimeout.OrderTimeout;
import io.ordertimeout.aws.ScheduledHandler;
import io.ordertimeout.redis.TimerBacklog;
import io.ordertimeout.sweep.SweepStats;
import io.ordertimeout.util.Json;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * timeout-sweep: invoked by an EventBridge schedule every minute, it sweeps until the invocation's
 * remaining time falls under the configured margin, closing orders as their deadlines pass.
 */
public final class TimeoutSweepHandler extends ScheduledHandler {
  private static final Logger log = LoggerFactory.getLogger(TimeoutSweepHandler.class);

  private final OrderTimeout app;

  public TimeoutSweepHandler() {
    this(Init.APP);
  }

  public TimeoutSweepHandler(OrderTimeout app) {
    super(app.metrics());
    this.app = app;
  }

  @Override
  protected String handle(Map<String, Object> event, Context context) {
    SweepStats stats = app.newSweeper().run(context::getRemainingTimeInMillis);
    // the backlog alarm reads this gauge every minute: its silence means no sweep ran
    TimerBacklog.record(app.metrics(), app.redis().sync(), app.timers(), app.time().nowMillis());
    String summary = Json.write(Json.MAPPER.valueToTree(stats));
    log.info("sweep finished (request {}): {}", context.getAwsRequestId(), summary);
    return summary;
  }

  private static final class Init {
    static final OrderTimeout APP = OrderTimeout.fromEnvironment();
  }
}
