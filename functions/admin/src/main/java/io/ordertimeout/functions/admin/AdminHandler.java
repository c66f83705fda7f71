package io.ordertimeout.functions.admin;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import io.ordertimeout.aws.HttpApiHandler;
import io.ordertimeout.compensation.CompensationSettings;
import io.ordertimeout.http.AdminRoutes;
import io.ordertimeout.mysql.DataAccessException;
import io.ordertimeout.util.Json;
import io.ordertimeout.wiring.Components;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * admin: the operator's API behind the HTTP API's /admin routes, every one AWS_IAM (never public).
 * Its own function rather than routes of order-created: the mall backend's role can be granted
 * execute-api:Invoke on /orders* only, the admin code (redrive, force-close, compensation) is not
 * in the function the internet-facing API scales out, a reserved concurrency of 2 keeps an
 * operator's script from taking database connections from the close path, and its log group is the
 * operators' audit trail next to the admin_actions table. Routes: {@link AdminRoutes#ROUTES}.
 */
public final class AdminHandler extends HttpApiHandler {
  private static final Logger log = LoggerFactory.getLogger(AdminHandler.class);

  private final AdminRoutes routes;

  /** Lambda's constructor: clients come from the environment once per execution environment. */
  public AdminHandler() {
    this(Init.ROUTES);
  }

  /** For tests and the local runner: the collaborators come from the caller. */
  public AdminHandler(AdminRoutes routes) {
    super(routes.ops().metrics());
    this.routes = routes;
  }

  @Override
  protected APIGatewayV2HTTPResponse handle(APIGatewayV2HTTPEvent event, Context context) {
    try {
      AdminRoutes.Answer answer = routes.handle(event);
      log.info("admin {} answered {}", event.getRouteKey(), answer.status());
      return respond(answer.status(), answer.body());
    } catch (DataAccessException e) {
      log.error("admin {} failed on the database: {}", event.getRouteKey(), e.toString());
      return respond(503, Json.error("UNAVAILABLE", "the database is unavailable; retry later"));
    } catch (RuntimeException e) {
      log.error("admin {} failed", event.getRouteKey(), e);
      String id = context == null ? "-" : context.getAwsRequestId();
      return respond(500, Json.error("INTERNAL", "internal error; request " + id));
    }
  }

  private static APIGatewayV2HTTPResponse respond(int status, String body) {
    return APIGatewayV2HTTPResponse.builder()
        .withStatusCode(status)
        .withHeaders(Map.of("content-type", "application/json; charset=utf-8"))
        .withBody(body)
        .build();
  }

  private static final class Init {
    static final AdminRoutes ROUTES =
        Components.fromEnvironment()
            .adminRoutes(CompensationSettings.fromEnvironment(System.getenv()));
  }
}
