package io.ordertimeout.functions.compensation;

import com.amazonaws.services.lambda.runtime.Context;
import io.ordertimeout.OrderTimeout;
import io.ordertimeout.aws.ScheduledHandler;
import io.ordertimeout.compensation.CompensationReport;
import io.ordertimeout.compensation.CompensationSettings;
import java.util.Map;

/**
 * compensation: invoked by an EventBridge schedule every 5 minutes, it runs one reconciliation pass
 * of MySQL against Redis and WeChat (see io.ordertimeout.compensation.Compensator) and answers the
 * pass's report as JSON; the same report is logged as one JSON line and published as metrics.
 */
public final class CompensationHandler extends ScheduledHandler {
  private final OrderTimeout app;
  private final CompensationSettings settings;

  public CompensationHandler() {
    this(Init.APP, CompensationSettings.fromEnvironment(System.getenv()));
  }

  public CompensationHandler(OrderTimeout app) {
    this(app, CompensationSettings.defaults());
  }

  public CompensationHandler(OrderTimeout app, CompensationSettings settings) {
    super(app.metrics());
    this.app = app;
    this.settings = settings;
  }

  @Override
  protected String handle(Map<String, Object> event, Context context) {
    CompensationReport report = app.newCompensator(settings).run();
    return report.toJson();
  }

  private static final class Init {
    static final OrderTimeout APP = OrderTimeout.fromEnvironment();
  }
}
