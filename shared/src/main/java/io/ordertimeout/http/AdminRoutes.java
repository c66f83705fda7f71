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
 * 400/403/404/409/503 with {@code {"error":{"code","message"}}} and changed nothing.
 *
 * <p>Every route first checks its IAM caller against OTC_ADMIN_PRINCIPALS ({@link AdminAccess}),
 * before the body is read: the order routes and the dead-letter list and filter-redrive act for the
 * one tenant they name ({@code ?tenantId=}, the filter's {@code tenantId}) and need it in the
 * caller's list (so do both reconciliation routes, for their {@code tenantId}); everything else
 * (pause, resume, the pauses, compensation, a dead letter by id, redrive of ids or of all) acts for
 * every tenant and needs {@code "*"}.
 *
 * <p>Over 300 lines: the route table, the per-route authorization and the request parsing of every
 * admin route are read together when a route is added; split, a route could miss its check.
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
          "POST /admin/compensation",
          "POST /admin/reconciliation",
          "GET /admin/reconciliation");

  /** An answer: HTTP status and JSON body. */
  public record Answer(int status, String body) {}

  private final AdminOps ops;
  private final AdminAccess access;

  public AdminRoutes(AdminOps ops, AdminAccess access) {
    this.ops = ops;
    this.access = access;
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
    // before the body, and before any tenant or id in it is looked at
    access.requireMapped(operator);
    return switch (r.routeKey) {
      case "GET /admin/dead-letters" -> ops.deadLetters().list(filter(r, operator));
      case "GET /admin/dead-letters/{id}" -> {
        access.requireAll(operator, "a dead letter by id");
        yield ops.deadLetters().show(r.longPath("id"));
      }
      case "POST /admin/dead-letters/{id}/redrive" -> {
        access.requireAll(operator, "a redrive by dead letter id");
        yield ops.deadLetters().redrive(List.of(r.longPath("id")), operator);
      }
      case "POST /admin/dead-letters/redrive" -> redrive(r, operator);
      case "GET /admin/orders/{id}" ->
          ops.stories().of(tenant(r, operator), r.path("id"), "true".equals(r.query("wechat")));
      case "POST /admin/orders/{id}/force-close" -> forceClose(r, operator);
      case "GET /admin/pauses" -> {
        access.requireAll(operator, "the pauses");
        yield ops.pauses().state();
      }
      case "POST /admin/pause" -> {
        access.requireAll(operator, "a pause");
        yield ops.pauses().pause(Pauses.jobs(r.bodyText("job")), operator, reason(r));
      }
      case "POST /admin/resume" -> {
        access.requireAll(operator, "a resume");
        yield ops.pauses().resume(Pauses.jobs(r.bodyText("job")), operator);
      }
      case "POST /admin/compensation" -> {
        access.requireAll(operator, "a compensation pass");
        yield ops.compensateNow(operator);
      }
      case "POST /admin/reconciliation" -> {
        String tenant = bodyTenant(r, operator);
        yield ops.reconciliation().run(tenant, r.bodyText("date"), operator);
      }
      case "GET /admin/reconciliation" ->
          ops.reconciliation().show(tenant(r, operator), r.query("date"));
      default ->
          throw new AdminRefusal(
              AdminRefusal.Kind.NOT_FOUND, "ROUTE_NOT_FOUND", "no admin route " + r.routeKey);
    };
  }

  /**
   * {"reason": ..., "disownTrade": true|false}: disowning a trade (TradeDisowning) decides between
   * two tenants' orders of one WeChat trade, so it is for "*" operators only.
   */
  private Map<String, Object> forceClose(Request r, String operator) {
    String tenant = tenant(r, operator);
    JsonNode disown = r.body().get("disownTrade");
    if (disown != null && !disown.isBoolean()) {
      throw AdminRefusal.badRequest("INVALID_DISOWN", "\"disownTrade\" must be true or false");
    }
    if (disown != null && disown.booleanValue()) {
      access.requireAll(operator, "disowning a WeChat trade");
      return ops.forceClose()
          .closeDisowningTrade(tenant, r.path("id"), r.bodyText("reason"), operator);
    }
    return ops.forceClose().close(tenant, r.path("id"), r.bodyText("reason"), operator);
  }

  /**
   * One of {"ids":[..]} or {"all":true} (every tenant's letters: "*" only), or {"filter":{tenantId,
   * orderId, eventType, limit}} (the filter's tenant; without one, every tenant's).
   */
  private Map<String, Object> redrive(Request r, String operator) {
    JsonNode body = r.body();
    int given =
        (body.has("ids") ? 1 : 0) + (body.has("filter") ? 1 : 0) + (body.has("all") ? 1 : 0);
    if (given != 1) {
      throw AdminRefusal.badRequest(
          "INVALID_REDRIVE", "give exactly one of \"ids\", \"filter\" or \"all\": true");
    }
    if (body.has("ids")) {
      access.requireAll(operator, "a redrive by dead letter id");
      return ops.deadLetters().redrive(ids(body.get("ids")), operator);
    }
    if (body.has("all")) {
      access.requireAll(operator, "a redrive of all dead letters");
      if (!body.get("all").asBoolean(false)) {
        throw AdminRefusal.badRequest("INVALID_REDRIVE", "\"all\" must be true");
      }
      return ops.deadLetters().redrive(DeadLetterAdmin.Filter.open(), operator);
    }
    JsonNode f = body.get("filter");
    if (!f.isObject()) {
      throw AdminRefusal.badRequest("INVALID_REDRIVE", "\"filter\" must be an object");
    }
    String tenant = text(f, "tenantId");
    requireTenantOrAll(operator, tenant, "a redrive filter without a tenantId");
    return ops.deadLetters()
        .redrive(
            new DeadLetterAdmin.Filter(
                "open",
                tenant,
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

  /** {@code tenant}'s access; without a tenant, {@code what} acts for every tenant. */
  private void requireTenantOrAll(String operator, String tenant, String what) {
    if (tenant == null) {
      access.requireAll(operator, what);
    } else {
      access.requireTenant(operator, tenant);
    }
  }

  private DeadLetterAdmin.Filter filter(Request r, String operator) {
    requireTenantOrAll(operator, r.query("tenantId"), "a dead-letter list without ?tenantId=");
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
   * tenant (an order id alone no longer names one order), which the caller must administer.
   */
  private String tenant(Request r, String operator) {
    String named = r.query("tenantId");
    String tenant = named == null ? TenantIds.DEFAULT : OrderIds.requireTenant(named);
    access.requireTenant(operator, tenant);
    return tenant;
  }

  /** The body's {@code tenantId}, else the default tenant; the caller must administer it. */
  private String bodyTenant(Request r, String operator) {
    String named = r.bodyText("tenantId");
    String tenant = named == null ? TenantIds.DEFAULT : OrderIds.requireTenant(named);
    access.requireTenant(operator, tenant);
    return tenant;
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
      case FORBIDDEN -> 403;
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
