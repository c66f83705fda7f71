package io.ordertimeout.functions.orders;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.tests.EventLoader;
import java.util.HashMap;
import java.util.Map;

/**
 * Builds HTTP API payload 2.0 events the way API Gateway does once a route matched: the routeKey is
 * the template route ("POST /orders/{id}/cancel", at the top and in requestContext), the order id
 * is in pathParameters, rawPath and requestContext.http carry the concrete path and method. The
 * rest of the envelope (headers, requestContext, stage) is the sample event's.
 */
final class ApiEvents {
  static final String ENVELOPE = "../../events/order-created-post-orders.json";

  private final String routeKey;
  private String id;
  private String body;
  private String callerArn;
  private String tenantHeader;

  private ApiEvents(String routeKey) {
    this.routeKey = routeKey;
  }

  /** An event for {@code routeKey}, e.g. {@code OrderApiHandler.CANCEL}. */
  static ApiEvents route(String routeKey) {
    return new ApiEvents(routeKey);
  }

  /** The {id} path parameter, also put into rawPath. */
  ApiEvents id(String orderId) {
    this.id = orderId;
    return this;
  }

  ApiEvents body(String text) {
    this.body = text;
    return this;
  }

  /**
   * The IAM caller API Gateway's AWS_IAM authorizer verified, as requestContext.authorizer.iam
   * (userArn); without it the event has no authorizer, as the sample.
   */
  ApiEvents caller(String arn) {
    this.callerArn = arn;
    return this;
  }

  /** The X-Tenant-Id header (lowercased, as API Gateway passes header names). */
  ApiEvents tenant(String tenantId) {
    this.tenantHeader = tenantId;
    return this;
  }

  APIGatewayV2HTTPEvent build() {
    int space = routeKey.indexOf(' ');
    String method = space > 0 ? routeKey.substring(0, space) : "GET";
    String template = space > 0 ? routeKey.substring(space + 1) : "/";
    String path = id == null ? template : template.replace("{id}", id);
    APIGatewayV2HTTPEvent event = EventLoader.loadApiGatewayHttpEvent(ENVELOPE);
    event.setRouteKey(routeKey);
    event.getRequestContext().setRouteKey(routeKey);
    event.getRequestContext().getHttp().setMethod(method);
    event.getRequestContext().getHttp().setPath(path);
    event.setRawPath(path);
    // API Gateway leaves pathParameters out for a route without parameters
    event.setPathParameters(template.contains("{id}") ? Map.of("id", String.valueOf(id)) : null);
    event.setBody(body);
    event.setIsBase64Encoded(false);
    if (callerArn != null) {
      APIGatewayV2HTTPEvent.RequestContext.IAM iam = new APIGatewayV2HTTPEvent.RequestContext.IAM();
      iam.setUserArn(callerArn);
      iam.setAccountId(callerArn.split(":")[4]);
      APIGatewayV2HTTPEvent.RequestContext.Authorizer authorizer =
          new APIGatewayV2HTTPEvent.RequestContext.Authorizer();
      authorizer.setIam(iam);
      event.getRequestContext().setAuthorizer(authorizer);
    }
    if (tenantHeader != null) {
      Map<String, String> headers = new HashMap<>(event.getHeaders());
      headers.put("x-tenant-id", tenantHeader);
      event.setHeaders(headers);
    }
    return event;
  }
}
