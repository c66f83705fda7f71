package io.ordertimeout.aws;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import io.ordertimeout.metrics.Metrics;

/**
 * The base of every function behind API Gateway's HTTP API (payload 2.0). Like {@link
 * ScheduledHandler}, its final {@code handleRequest} runs {@link #handle} inside {@link
 * Invocation#run}, so no route can answer without its request id in the logs and its metrics
 * flushed as EMF.
 */
public abstract class HttpApiHandler
    implements RequestHandler<APIGatewayV2HTTPEvent, APIGatewayV2HTTPResponse> {
  private final Metrics metrics;

  /**
   * @param metrics the registry this function records into; flushed at the end of each invocation
   */
  protected HttpApiHandler(Metrics metrics) {
    this.metrics = metrics;
  }

  @Override
  public final APIGatewayV2HTTPResponse handleRequest(
      APIGatewayV2HTTPEvent event, Context context) {
    return Invocation.run(context, metrics, () -> handle(event, context));
  }

  /** One request's answer; every failure should be mapped to a status here, not thrown. */
  protected abstract APIGatewayV2HTTPResponse handle(APIGatewayV2HTTPEvent event, Context context);
}
