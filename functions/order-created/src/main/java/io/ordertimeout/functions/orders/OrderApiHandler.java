package io.ordertimeout.functions.orders;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ordertimeout.aws.HttpApiHandler;
import io.ordertimeout.aws.Invocation;
import io.ordertimeout.cancel.CancelOrderService;
import io.ordertimeout.domain.Order;
import io.ordertimeout.domain.OrderRejected;
import io.ordertimeout.domain.OrderStatus;
import io.ordertimeout.http.ApiError;
import io.ordertimeout.http.HttpBodies;
import io.ordertimeout.http.LifecycleRequests;
import io.ordertimeout.http.LifecycleRoutes;
import io.ordertimeout.http.OrderApi;
import io.ordertimeout.http.OrderViews;
import io.ordertimeout.http.PlaceOrderRequests;
import io.ordertimeout.http.PrepayRequests;
import io.ordertimeout.lifecycle.IllegalTransition;
import io.ordertimeout.mysql.DataAccessException;
import io.ordertimeout.place.PlaceOrderService.Placed;
import io.ordertimeout.util.Json;
import io.ordertimeout.wechat.MiniProgramPayment;
import io.ordertimeout.wiring.Components;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * order-created: the order API behind API Gateway's HTTP API (payload 2.0).
 *
 * <ul>
 *   <li>{@code POST /orders}: place an order (201; 200 for an identical retry; 409 conflict or out
 *       of stock; 400 bad input)
 *   <li>{@code GET /orders/{id}}: the order (200; 404)
 *   <li>{@code POST /orders/{id}/prepay}: WeChat Pay JSAPI prepay; answers wx.requestPayment's
 *       arguments (200; 400 bad body; 404; 409 not UNPAID or past its deadline; 502/503 WeChat)
 *   <li>{@code POST /orders/{id}/cancel}: request a cancellation (202 and a cancel_requested event
 *       for an UNPAID order; 200 if already CLOSED; 409 if PAID; 404)
 *   <li>{@code GET /orders/{id}/events}: the order's event timeline from the outbox (200; 404)
 *   <li>{@code POST /orders/{id}/ship}, {@code /receipt}, {@code /receipt/extend}, {@code
 *       /after-sale}, {@code /after-sale/resolve}: the order's life after payment (200 with {@code
 *       changed}; 404; 409 ILLEGAL_TRANSITION with the current state or RECEIPT_ALREADY_EXTENDED;
 *       400 bad input)
 *   <li>{@code POST /coupons}: issue a coupon valid until a time (201; 200 identical retry; 409
 *       COUPON_CONFLICT; 400); {@code GET /coupons/{id}} (200; 404)
 * </ul>
 *
 * <p>Every route acts for one tenant of the IAM caller (OTC_TENANT_PRINCIPALS, CallerTenants): 403
 * PRINCIPAL_NOT_MAPPED or TENANT_NOT_ALLOWED, 400 TENANT_REQUIRED; another tenant's order or coupon
 * answers 404 exactly like a missing one.
 */
public final class OrderApiHandler extends HttpApiHandler {
  private static final Logger log = LoggerFactory.getLogger(OrderApiHandler.class);

  static final String PLACE = "POST /orders";
  static final String GET = "GET /orders/{id}";
  static final String PREPAY = "POST /orders/{id}/prepay";
  static final String CANCEL = "POST /orders/{id}/cancel";
  static final String EVENTS = "GET /orders/{id}/events";
  static final String SHIP = "POST /orders/{id}/ship";
  static final String RECEIPT = "POST /orders/{id}/receipt";
  static final String EXTEND_RECEIPT = "POST /orders/{id}/receipt/extend";
  static final String OPEN_AFTER_SALE = "POST /orders/{id}/after-sale";
  static final String RESOLVE_AFTER_SALE = "POST /orders/{id}/after-sale/resolve";
  static final String ISSUE_COUPON = "POST /coupons";
  static final String GET_COUPON = "GET /coupons/{id}";

  /** The header naming the tenant a request acts for (CallerTenants). */
  static final String TENANT_HEADER = "X-Tenant-Id";

  /**
   * Every route this function serves, as API Gateway's routeKey; template.yaml's
   * OrderCreatedFunction declares exactly these (infra/local OrderRoutesTemplateTest).
   */
  public static final List<String> ROUTE_KEYS =
      List.of(
          PLACE,
          GET,
          PREPAY,
          CANCEL,
          EVENTS,
          SHIP,
          RECEIPT,
          EXTEND_RECEIPT,
          OPEN_AFTER_SALE,
          RESOLVE_AFTER_SALE,
          ISSUE_COUPON,
          GET_COUPON);

  private final OrderApi api;

  /** Lambda's constructor: clients come from the environment once per execution environment. */
  public OrderApiHandler() {
    this(Init.API);
  }

  /** For tests and the local runner: the collaborators come from the caller. */
  public OrderApiHandler(OrderApi api) {
    super(api.metrics());
    this.api = api;
  }

  @Override
  protected APIGatewayV2HTTPResponse handle(APIGatewayV2HTTPEvent event, Context context) {
    try {
      return route(event);
    } catch (ApiError e) {
      return respond(e.status(), Json.error(e.code(), e.getMessage()));
    } catch (IllegalTransition e) {
      // the current state as a field, so the mall backend need not parse the message
      ApiError api = ApiError.from(e);
      ObjectNode body = Json.object();
      body.putObject("error")
          .put("code", api.code())
          .put("message", api.getMessage())
          .put("status", e.current().name());
      return respond(api.status(), Json.write(body));
    } catch (OrderRejected e) {
      ApiError api = ApiError.from(e);
      return respond(api.status(), Json.error(api.code(), api.getMessage()));
    } catch (DataAccessException e) {
      log.error(
          "order API {} {} failed on the database (request {}): {}",
          method(event),
          path(event),
          requestId(context),
          e.toString());
      return respond(503, Json.error("UNAVAILABLE", "the order store is unavailable; retry later"));
    } catch (RuntimeException e) {
      log.error(
          "order API {} {} failed (request {})", method(event), path(event), requestId(context), e);
      return respond(500, Json.error("INTERNAL", "internal error; request " + requestId(context)));
    }
  }

  /**
   * Routes on API Gateway's routeKey, the template route that matched ("POST /orders/{id}/cancel"),
   * and reads the order id from pathParameters: the gateway has parsed the path already. The keys
   * are template.yaml's OrderCreatedFunction events, character for character (the local gateway's
   * TemplateConsistencyTest sends each of them).
   */
  private APIGatewayV2HTTPResponse route(APIGatewayV2HTTPEvent event) {
    String routeKey = event.getRouteKey() == null ? "" : event.getRouteKey();
    if (!ROUTE_KEYS.contains(routeKey)) {
      throw unrouted(routeKey, event);
    }
    String caller = callerArn(event);
    api.tenants().requireMapped(caller);
    // the caller's tenant, from X-Tenant-Id or (POST /orders, POST /coupons) the body's tenantId
    UnaryOperator<String> tenant =
        named -> api.tenants().resolve(caller, tenantHeader(event), named);
    return switch (routeKey) {
      case PLACE -> place(event, tenant);
      case ISSUE_COUPON -> answer(api.lifecycle().issueCoupon(body(event), tenant));
      case GET_COUPON -> answer(api.lifecycle().coupon(tenant.apply(null), couponPathId(event)));
      default -> orderRoute(routeKey, event, tenant.apply(null));
    };
  }

  /**
   * The routes of one order of {@code tenant}. Every use case reads and writes by (tenant, order
   * id), the tables' keys: another tenant's order of the same id is another order, and one that
   * only another tenant has answers the same 404 as a missing one.
   */
  private APIGatewayV2HTTPResponse orderRoute(
      String routeKey, APIGatewayV2HTTPEvent event, String tenant) {
    String orderId = pathId(event);
    LifecycleRoutes life = api.lifecycle();
    return switch (routeKey) {
      case GET -> get(tenant, orderId);
      case PREPAY -> prepay(event, tenant, orderId);
      case CANCEL -> cancel(tenant, orderId);
      case EVENTS -> respond(200, api.timeline().answer(tenant, orderId));
      case SHIP -> answer(life.ship(tenant, orderId, body(event)));
      case RECEIPT -> answer(life.confirmReceipt(tenant, orderId, body(event)));
      case EXTEND_RECEIPT -> answer(life.extendReceipt(tenant, orderId, body(event)));
      case OPEN_AFTER_SALE -> answer(life.openAfterSale(tenant, orderId, body(event)));
      case RESOLVE_AFTER_SALE -> answer(life.resolveAfterSale(tenant, orderId, body(event)));
      default -> throw unrouted(routeKey, event);
    };
  }

  /** The same 404 as the use cases' for a missing order: no body tells the two apart. */
  private static ApiError notFound(String orderId) {
    return ApiError.notFound("order " + orderId + " does not exist");
  }

  /**
   * The IAM caller API Gateway's AWS_IAM authorizer verified (requestContext.authorizer.iam
   * .userArn: a user's ARN, or an assumed role's session ARN); null without one.
   */
  private static String callerArn(APIGatewayV2HTTPEvent event) {
    var ctx = event.getRequestContext();
    if (ctx == null || ctx.getAuthorizer() == null || ctx.getAuthorizer().getIam() == null) {
      return null;
    }
    return ctx.getAuthorizer().getIam().getUserArn();
  }

  /** X-Tenant-Id (API Gateway lowercases header names; matched case-insensitively anyway). */
  private static String tenantHeader(APIGatewayV2HTTPEvent event) {
    Map<String, String> headers = event.getHeaders();
    if (headers == null) {
      return null;
    }
    for (Map.Entry<String, String> h : headers.entrySet()) {
      if (TENANT_HEADER.equalsIgnoreCase(h.getKey())) {
        return h.getValue();
      }
    }
    return null;
  }

  /**
   * A routeKey that is none of ours (a {@code $default} route, a misrouted call): 405 when its path
   * is one of ours under another method, else 404. API Gateway itself answers both before the
   * function for a request that matches no route; these keep the handler's own answers as they
   * were.
   */
  private static ApiError unrouted(String routeKey, APIGatewayV2HTTPEvent event) {
    int space = routeKey.indexOf(' ');
    if (space > 0) {
      String method = routeKey.substring(0, space);
      String path = routeKey.substring(space + 1);
      for (String ours : ROUTE_KEYS) {
        if (ours.substring(ours.indexOf(' ') + 1).equals(path)) {
          String expected = ours.substring(0, ours.indexOf(' '));
          return new ApiError(405, "METHOD_NOT_ALLOWED", "use " + expected + ", not " + method);
        }
      }
    }
    return new ApiError(404, "ROUTE_NOT_FOUND", "no route " + method(event) + " " + path(event));
  }

  private APIGatewayV2HTTPResponse prepay(
      APIGatewayV2HTTPEvent event, String tenant, String orderId) {
    byte[] body = HttpBodies.bytes(event.getBody(), event.getIsBase64Encoded());
    PrepayRequests.PrepayRequest request = PrepayRequests.parse(body);
    MiniProgramPayment payment =
        api.prepays().prepay(tenant, orderId, request.openId(), request.description());
    return respond(200, Json.write(PrepayRequests.view(orderId, payment)));
  }

  private APIGatewayV2HTTPResponse cancel(String tenant, String orderId) {
    CancelOrderService.Outcome outcome = api.cancels().request(tenant, orderId);
    var view = OrderViews.of(outcome.order());
    if (outcome.accepted()) {
      view.put("cancel", "REQUESTED");
    }
    return respond(outcome.accepted() ? 202 : 200, Json.write(view));
  }

  private APIGatewayV2HTTPResponse place(
      APIGatewayV2HTTPEvent event, UnaryOperator<String> tenant) {
    byte[] body = HttpBodies.bytes(event.getBody(), event.getIsBase64Encoded());
    Placed placed = api.places().place(api.requests().parse(body, tenant));
    return respond(placed.created() ? 201 : 200, Json.write(OrderViews.of(placed.order())));
  }

  private APIGatewayV2HTTPResponse get(String tenant, String orderId) {
    Order order = api.orders().find(tenant, orderId).orElseThrow(() -> notFound(orderId));
    ObjectNode view = OrderViews.of(order);
    if (order.status().paid() && order.status() != OrderStatus.PAID) {
      // shipped or later: the lifecycle fields too (one more read, only for these orders)
      api.lifecycle()
          .lifecycle(tenant, orderId)
          .ifPresent(life -> LifecycleRoutes.putLifecycle(view, life));
    }
    return respond(200, Json.write(view));
  }

  private static byte[] body(APIGatewayV2HTTPEvent event) {
    return HttpBodies.bytes(event.getBody(), event.getIsBase64Encoded());
  }

  private static APIGatewayV2HTTPResponse answer(LifecycleRoutes.Answer answer) {
    return respond(answer.status(), answer.body());
  }

  /** The {id} path parameter of a coupon route; absent or malformed: 400 INVALID_COUPON_ID. */
  private static String couponPathId(APIGatewayV2HTTPEvent event) {
    Map<String, String> params = event.getPathParameters();
    return LifecycleRequests.couponIdFromPath(params == null ? null : params.get("id"));
  }

  /** The {id} path parameter; absent or malformed: 400 INVALID_ORDER_ID. */
  private static String pathId(APIGatewayV2HTTPEvent event) {
    Map<String, String> params = event.getPathParameters();
    String orderId = PlaceOrderRequests.orderIdFromPath(params == null ? null : params.get("id"));
    Invocation.orderId(orderId);
    return orderId;
  }

  private static String method(APIGatewayV2HTTPEvent event) {
    var ctx = event.getRequestContext();
    return ctx != null && ctx.getHttp() != null && ctx.getHttp().getMethod() != null
        ? ctx.getHttp().getMethod()
        : "GET";
  }

  /**
   * The path without the stage, for logs and the 404 message only: API Gateway keeps the stage in
   * rawPath for named stages.
   */
  private static String path(APIGatewayV2HTTPEvent event) {
    String raw = event.getRawPath() == null ? "/" : event.getRawPath();
    var ctx = event.getRequestContext();
    String stage = ctx == null ? null : ctx.getStage();
    if (stage != null && !stage.equals("$default") && raw.startsWith("/" + stage + "/")) {
      return raw.substring(stage.length() + 1);
    }
    return raw;
  }

  private static String requestId(Context context) {
    return context == null ? "-" : context.getAwsRequestId();
  }

  static APIGatewayV2HTTPResponse respond(int status, String body) {
    return APIGatewayV2HTTPResponse.builder()
        .withStatusCode(status)
        .withHeaders(Map.of("content-type", "application/json; charset=utf-8"))
        .withBody(body)
        .build();
  }

  /**
   * Lambda init: one set of clients per execution environment, built when the class is first used.
   */
  private static final class Init {
    static final OrderApi API = Components.fromEnvironment().orderApi();
  }
}
