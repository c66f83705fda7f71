package io.ordertimeout.functions.sweep;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import io.ordertimeout.OrderTimeout;
import io.ordertimeout.api.Json;
import io.ordertimeout.aws.Invocation;
import io.ordertimeout.metrics.TimerBacklog;
import io.ordertimeout.sweep.SweepStats;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * timeout-sweep: invoked by an EventBridge schedule every minute, it sweeps until the invocation's
 * remaining time falls under the configured margin, closing orders as their deadlines pass.
 */
public final class TimeoutSweepHandler implements RequestHandler<Map<String, Object>, String> {
  private static final Logger log = LoggerFactory.getLogger(TimeoutSweepHandler.class);

  private final OrderTimeout app;

  public TimeoutSweepHandler() {
    this(Init.APP);
  }

  public TimeoutSweepHandler(OrderTimeout app) {
    this.app = app;
  }

  @Override
  public String handleRequest(Map<String, Object> event, Context context) {
    return Invocation.run(context, app.metrics(), () -> sweep(context));
  }

  private String sweep(Context context) {
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
