package io.ordertimeout.http;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.fasterxml.jackson.databind.JsonNode;
import io.ordertimeout.admin.AdminOps;
import io.ordertimeout.admin.AdminRefusal;
import io.ordertimeout.admin.DeadLetterAdmin;
import io.ordertimeout.admin.OrderIds;
import io.ordertimeout.admin.Pauses;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.util.Json;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The admin API's routes (template.yaml, AdminFunction: all AWS_IAM, under /admin), dispatched on
 * API Gateway's {@code routeKey} and {@code pathParameters}. Answers JSON; a refused request is
 * 400/404/409/503 with {@code {"error":{"code","message"}}} and changed nothing.
 */
public final class AdminRoutes {
  /** Every route this class serves; template.yaml declares exactly these (a test compares). */
  public static final List<String> ROUTES =
      List.of(
          "GET /admin/dead-letters",
          "GET /admin/dead-letters/{id}",
          "POST /admin/dead-letters/{id}/redrive",
          "POST /admin/dead-letters/redrive",
          "GET /admin/orders/{id}",
          "POST /admin/orders/{id}/force-close",
          "GET /admin/pauses",
          "POST /admin/pause",
          "POST /admin/resume",
          "POST /admin/compensation");

  /** An answer: HTTP status and JSON body. */
  public record Answer(int status, String body) {}

  private final AdminOps ops;

  public AdminRoutes(AdminOps ops) {
    this.ops = ops;
  }

  public AdminOps ops() {
    return ops;
  }

  /** One request's answer; a refusal is mapped here, other failures are the caller's to map. */
  public Answer handle(APIGatewayV2HTTPEvent event) {
    try {
      return new Answer(200, Json.write(Json.MAPPER.valueToTree(route(event))));
    } catch (AdminRefusal e) {
      return new Answer(status(e.kind()), Json.error(e.code(), e.getMessage()));
    }
  }

  private Object route(APIGatewayV2HTTPEvent event) {
    Request r = new Request(event);
    if (!ROUTES.contains(r.routeKey)) {
      throw new AdminRefusal(
          AdminRefusal.Kind.NOT_FOUND, "ROUTE_NOT_FOUND", "no admin route '" + r.routeKey + "'");
    }
    String operator = operator(event);
    return switch (r.routeKey) {
      case "GET /admin/dead-letters" -> ops.deadLetters().list(filter(r));
      case "GET /admin/dead-letters/{id}" -> ops.deadLetters().show(r.longPath("id"));
      case "POST /admin/dead-letters/{id}/redrive" ->
          ops.deadLetters().redrive(List.of(r.longPath("id")), operator);
      case "POST /admin/dead-letters/redrive" -> redrive(r, operator);
      case "GET /admin/orders/{id}" ->
          ops.stories().of(tenant(r), r.path("id"), "true".equals(r.query("wechat")));
      case "POST /admin/orders/{id}/force-close" ->
          ops.forceClose().close(tenant(r), r.path("id"), r.bodyText("reason"), operator);
      case "GET /admin/pauses" -> ops.pauses().state();
      case "POST /admin/pause" ->
          ops.pauses().pause(Pauses.jobs(r.bodyText("job")), operator, reason(r));
      case "POST /admin/resume" -> ops.pauses().resume(Pauses.jobs(r.bodyText("job")), operator);
      case "POST /admin/compensation" -> ops.compensateNow(operator);
      default ->
          throw new AdminRefusal(
              AdminRefusal.Kind.NOT_FOUND, "ROUTE_NOT_FOUND", "no admin route " + r.routeKey);
    };
  }

  /** One of {"ids":[..]}, {"filter":{orderId, eventType, limit}} or {"all":true}. */
  private Map<String, Object> redrive(Request r, String operator) {
    JsonNode body = r.body();
    int given =
        (body.has("ids") ? 1 : 0) + (body.has("filter") ? 1 : 0) + (body.has("all") ? 1 : 0);
    if (given != 1) {
      throw AdminRefusal.badRequest(
          "INVALID_REDRIVE", "give exactly one of \"ids\", \"filter\" or \"all\": true");
    }
    if (body.has("ids")) {
      return ops.deadLetters().redrive(ids(body.get("ids")), operator);
    }
    if (body.has("all")) {
      if (!body.get("all").asBoolean(false)) {
        throw AdminRefusal.badRequest("INVALID_REDRIVE", "\"all\" must be true");
      }
      return ops.deadLetters().redrive(DeadLetterAdmin.Filter.open(), operator);
    }
    JsonNode f = body.get("filter");
    return ops.deadLetters()
        .redrive(
            new DeadLetterAdmin.Filter(
                "open",
                text(f, "tenantId"),
                text(f, "orderId"),
                text(f, "eventType"),
                f.path("limit").asInt(DeadLetterAdmin.MAX_ROWS)),
            operator);
  }

  private static List<Long> ids(JsonNode ids) {
    if (!ids.isArray()) {
      throw AdminRefusal.badRequest("INVALID_IDS", "\"ids\" must be an array of dead letter ids");
    }
    List<Long> out = new ArrayList<>();
    for (JsonNode id : ids) {
      if (!id.canConvertToLong() || !id.isIntegralNumber()) {
        throw AdminRefusal.badRequest("INVALID_IDS", "dead letter id " + id + " is not a number");
      }
      out.add(id.asLong());
    }
    return out;
  }

  private static DeadLetterAdmin.Filter filter(Request r) {
    String limit = r.query("limit");
    int n;
    try {
      n = limit == null ? 100 : Integer.parseInt(limit);
    } catch (NumberFormatException e) {
      throw AdminRefusal.badRequest("INVALID_LIMIT", "limit must be a number, was '" + limit + "'");
    }
    return new DeadLetterAdmin.Filter(
        r.query("status"), r.query("tenantId"), r.query("orderId"), r.query("eventType"), n);
  }

  /**
   * The tenant an order route acts on: the {@code tenantId} query parameter, else the default
   * tenant (operators act for every tenant; an order id alone no longer names one order).
   */
  private static String tenant(Request r) {
    String tenant = r.query("tenantId");
    return tenant == null ? TenantIds.DEFAULT : OrderIds.requireTenant(tenant);
  }

  private static String reason(Request r) {
    String reason = r.bodyText("reason");
    if (reason == null || reason.isBlank()) {
      throw AdminRefusal.badRequest("MISSING_REASON", "a pause needs the operator's \"reason\"");
    }
    return reason;
  }

  private static String text(JsonNode node, String field) {
    JsonNode v = node.get(field);
    return v == null || v.isNull() ? null : v.asText();
  }

  /** The IAM principal API Gateway authenticated; every admin route requires one. */
  static String operator(APIGatewayV2HTTPEvent event) {
    var ctx = event.getRequestContext();
    var iam = ctx == null || ctx.getAuthorizer() == null ? null : ctx.getAuthorizer().getIam();
    if (iam == null || iam.getUserArn() == null) {
      throw new AdminRefusal(
          AdminRefusal.Kind.BAD_REQUEST,
          "NO_IAM_CALLER",
          "admin routes need an IAM-signed request (no IAM caller in the request context)");
    }
    return iam.getUserArn();
  }

  private static int status(AdminRefusal.Kind kind) {
    return switch (kind) {
      case BAD_REQUEST -> 400;
      case NOT_FOUND -> 404;
      case CONFLICT -> 409;
      case UNAVAILABLE -> 503;
    };
  }

  /** The parts of the event a route reads, each refusing bad input with a 400. */
  private static final class Request {
    final String routeKey;
    final APIGatewayV2HTTPEvent event;
    private JsonNode body;

    Request(APIGatewayV2HTTPEvent event) {
      this.event = event;
      this.routeKey = event.getRouteKey() == null ? "" : event.getRouteKey();
    }

    String path(String name) {
      Map<String, String> params = event.getPathParameters();
      String v = params == null ? null : params.get(name);
      if (v == null || v.isEmpty()) {
        throw AdminRefusal.badRequest("MISSING_PATH_PARAMETER", "path parameter {" + name + "}");
      }
      return v;
    }

    long longPath(String name) {
      String v = path(name);
      try {
        return Long.parseLong(v);
      } catch (NumberFormatException e) {
        throw AdminRefusal.badRequest(
            "INVALID_ID", "{" + name + "} must be a dead letter id (a number), was '" + v + "'");
      }
    }

    String query(String name) {
      Map<String, String> q = event.getQueryStringParameters();
      return q == null ? null : q.get(name);
    }

    JsonNode body() {
      if (body == null) {
        String raw = event.getBody();
        if (raw == null || raw.isBlank()) {
          body = Json.object();
        } else {
          String text =
              new String(HttpBodies.bytes(raw, event.getIsBase64Encoded()), StandardCharsets.UTF_8);
          try {
            body = Json.MAPPER.readTree(text);
          } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw AdminRefusal.badRequest(
                "INVALID_JSON", "body is not JSON: " + e.getOriginalMessage());
          }
          if (body == null || !body.isObject()) {
            throw AdminRefusal.badRequest("INVALID_JSON", "body must be a JSON object");
          }
        }
      }
      return body;
    }

    String bodyText(String field) {
      JsonNode v = body().get(field);
      if (v != null && !v.isNull() && !v.isTextual()) {
        throw AdminRefusal.badRequest("INVALID_FIELD", "\"" + field + "\" must be a string");
      }
      return v == null || v.isNull() ? null : v.asText();
    }
  }
}
