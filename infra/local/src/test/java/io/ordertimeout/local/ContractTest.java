package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.ordertimeout.embedded.wechat.SignedNotification;
import io.ordertimeout.testing.Await;
import java.io.IOException;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every route of the local stack driven with valid requests and with the inputs a caller should not
 * send (bad JSON, an oversize body, an unknown or missing field, a bad id), each exchange checked
 * against docs/reference/openapi.yaml: a valid request matches its operation's schemas and a
 * refused one is refused by the document too; the answered status is documented for the operation,
 * the body matches that status's schema, and an error code is one of its enum.
 */
class ContractTest {
  private static final OpenApi API = OpenApi.read();
  private static final String RUN = Long.toString(System.currentTimeMillis() % 1_000_000, 36);

  private static LocalStack stack;
  private static final HttpClient HTTP =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  /**
   * One exchange as the client saw it; {@code valid}: whether the request was meant to be, null
   * when the caller does not say (then a 2xx answer says it was).
   */
  record Exchange(
      String routeKey,
      String method,
      String path,
      Map<String, String> pathParams,
      Map<String, String> query,
      Map<String, String> headers,
      String requestBody,
      Boolean valid,
      int status,
      String responseBody) {}

  private static final List<Exchange> EXCHANGES = new ArrayList<>();

  @BeforeAll
  static void startStack() {
    stack =
        LocalStack.start(
            new LocalStack.Options(Main.templatePath(), "127.0.0.1", 0, 1.0), System.getenv());
  }

  @AfterAll
  static void stopStack() {
    stack.close();
  }

  @Test
  void everyRouteAnswersAsTheDocumentSays() throws Exception {
    String coupon = "cp-ct-" + RUN;
    String paid = "ct" + RUN + "paid";
    String cancelled = "ct" + RUN + "cncl";
    String closed = "ct" + RUN + "forc";
    String validUntil = Instant.now().plus(Duration.ofHours(1)).toString();

    // coupons
    String couponBody =
        "{\"couponId\":\""
            + coupon
            + "\",\"userId\":\"user-ct\",\"validUntil\":\""
            + validUntil
            + "\"}";
    expect(call("POST", "/coupons", couponBody, true), 201);
    expect(call("POST", "/coupons", couponBody, true), 200);
    expect(
        call(
            "POST",
            "/coupons",
            "{\"couponId\":\""
                + coupon
                + "\",\"userId\":\"other\",\"validUntil\":\""
                + validUntil
                + "\"}",
            true),
        409);
    expect(call("POST", "/coupons", "{\"couponId\":\"c1\",\"userId\":\"u\"}", false), 400);
    expect(call("POST", "/coupons", couponBody.replace("}", ",\"x\":1}"), false), 400);
    expect(
        call("POST", "/coupons", couponBody.replace(validUntil, "2026-12-31T16:00:00"), false),
        400);
    expect(call("GET", "/coupons/" + coupon, null, true), 200);
    expect(call("GET", "/coupons/cp-ct-none-" + RUN, null, true), 404);
    expect(call("GET", "/coupons/" + "c".repeat(65), null, false), 400);

    // placing
    String order = place(paid, coupon);
    expect(call("POST", "/orders", order, true), 201);
    expect(call("POST", "/orders", order, true), 200);
    expect(
        call("POST", "/orders", order.replace("\"amountFen\":1000", "\"amountFen\":999"), true),
        409);
    expect(call("POST", "/orders", place(cancelled, null), true), 201);
    expect(call("POST", "/orders", place(closed, null), true), 201);
    expect(
        call(
            "POST",
            "/orders",
            place("ct" + RUN + "sku", null).replace("sku-0001", "sku-none"),
            true),
        400);
    expect(call("POST", "/orders", "{\"orderId\":", false), 400);
    expect(call("POST", "/orders", "", false), 400);
    expect(call("POST", "/orders", oversize(64 * 1024), false), 400);
    expect(
        call("POST", "/orders", place("ct" + RUN + "unk", null).replace("}]", ",\"x\":1}]"), false),
        400);
    expect(
        call(
            "POST",
            "/orders",
            place("ct" + RUN + "unk", null).replace("\"userId\":\"user-ct\",", ""),
            false),
        400);
    expect(call("POST", "/orders", place("ab", null), false), 400);
    expect(
        call(
            "POST",
            "/orders",
            place("ct" + RUN + "qty", null).replace("\"quantity\":1", "\"quantity\":1000"),
            false),
        400);
    expect(
        call(
            "POST",
            "/orders",
            order.replace("\"couponId\"", "\"tenantId\":\"Shop A\",\"couponId\""),
            false),
        400);

    // reading
    expect(call("GET", "/orders/" + paid, null, true), 200);
    expect(call("GET", "/orders/ct" + RUN + "none", null, true), 404);
    expect(call("GET", "/orders/ab", null, false), 400);
    expect(call("GET", "/orders/" + paid + "/events", null, true), 200);
    expect(call("GET", "/orders/ct" + RUN + "none/events", null, true), 404);

    // prepay and payment
    expect(
        call("POST", "/orders/" + paid + "/prepay", "{\"openId\":\"oUpF8uMuAJO_ct\"}", true), 200);
    expect(call("POST", "/orders/" + paid + "/prepay", "{\"openId\":\"o u\"}", false), 400);
    expect(call("POST", "/orders/" + paid + "/prepay", "{\"openId\":\"o\",\"x\":1}", false), 400);
    expect(call("POST", "/orders/" + paid + "/prepay", "{\"openId\":", false), 400);
    expect(call("POST", "/orders/" + paid + "/prepay", oversize(4 * 1024), false), 400);
    expect(
        call(
            "POST",
            "/orders/" + paid + "/prepay",
            "{\"openId\":\"o\",\"description\":\"" + "d".repeat(128) + "\"}",
            false),
        400);
    expect(call("POST", "/orders/ct" + RUN + "none/prepay", "{\"openId\":\"o\"}", true), 404);
    expect(
        call(
            "POST",
            "/orders/" + closed + "/ship",
            "{\"carrier\":\"SF\",\"trackingNo\":\"SF1\"}",
            true),
        409);
    stack.simulator().pay(paid);
    Await.until("order " + paid + " PAID", () -> status(paid), "PAID"::equals);
    SignedNotification again = stack.simulator().notification(paid).build();
    expect(notify("/wechatpay/notify", again.body(), again.headers(), true), 204);
    expect(notify("/wechatpay/notify", again.body(), Map.of(), false), 400);
    expect(notify("/wechatpay/notify/Shop-A", again.body(), again.headers(), false), 400);
    expect(notify("/wechatpay/notify/ct-none", again.body(), again.headers(), true), 401);
    // a service provider's URL: no tenant here is a sub-merchant of this one
    expect(
        notify("/wechatpay/notify/provider/1900000999", again.body(), again.headers(), true), 401);
    expect(notify("/wechatpay/notify/provider/abc", again.body(), again.headers(), false), 400);
    expect(
        notify(
            "/wechatpay/notify",
            "{\"id\":\"" + "x".repeat(17 * 1024) + "\"}",
            again.headers(),
            false),
        413);
    // the refund route: verified like the payment's; a genuine payment notification is no refund
    expect(notify("/wechatpay/refund-notify/default", again.body(), again.headers(), true), 400);
    expect(notify("/wechatpay/refund-notify/ct-none", again.body(), again.headers(), true), 401);
    expect(notify("/wechatpay/refund-notify/Shop-A", again.body(), again.headers(), false), 400);

    // the order's life
    String ship = "/orders/" + paid + "/ship";
    expect(call("POST", ship, "{\"carrier\":\"SF\"}", false), 400);
    expect(call("POST", ship, "{\"carrier\":\"SF\",\"trackingNo\":\"SF1\",\"x\":1}", false), 400);
    expect(call("POST", ship, "{\"carrier\":\"SF\",\"trackingNo\":\"SF 1\"}", false), 400);
    expect(call("POST", ship, "", false), 400);
    expect(call("POST", ship, "{\"carrier\":\"SF\",\"trackingNo\":\"SF1234567890\"}", true), 200);
    expect(call("POST", ship, "{\"carrier\":\"SF\",\"trackingNo\":\"SF1234567890\"}", true), 200);
    expect(
        call("POST", "/orders/ab/ship", "{\"carrier\":\"SF\",\"trackingNo\":\"SF1\"}", false), 400);
    expect(call("POST", "/orders/" + paid + "/receipt/extend", "{}", true), 200);
    expect(call("POST", "/orders/" + paid + "/receipt/extend", "", true), 409);
    expect(call("POST", "/orders/" + paid + "/receipt", "{\"x\":1}", false), 400);
    expect(call("POST", "/orders/" + paid + "/receipt", "[", false), 400);
    expect(call("POST", "/orders/" + paid + "/receipt", oversize(4 * 1024), false), 400);
    expect(call("POST", "/orders/" + paid + "/receipt", "", true), 200);
    expect(call("POST", "/orders/" + paid + "/after-sale/resolve", "", true), 409);
    expect(call("POST", "/orders/" + paid + "/after-sale", "{}", true), 200);
    expect(call("POST", "/orders/" + paid + "/after-sale/resolve", "{}", true), 200);
    expect(call("POST", "/orders/" + paid + "/after-sale/resolve", "", true), 200);
    expect(call("GET", "/orders/" + paid, null, true), 200);

    // cancel
    expect(call("POST", "/orders/" + cancelled + "/cancel", null, true), 202);
    expect(call("POST", "/orders/" + cancelled + "/cancel", null, true), 202);
    expect(call("POST", "/orders/" + paid + "/cancel", null, true), 409);
    expect(call("POST", "/orders/ab/cancel", null, false), 400);

    // admin
    expect(call("GET", "/admin/dead-letters", null, true), 200);
    expect(call("GET", "/admin/dead-letters?limit=0", null, false), 400);
    expect(call("GET", "/admin/dead-letters?status=gone", null, false), 400);
    expect(call("GET", "/admin/dead-letters/987654321", null, true), 404);
    expect(call("GET", "/admin/dead-letters/abc", null, false), 400);
    expect(call("POST", "/admin/dead-letters/987654321/redrive", null, true), 404);
    expect(call("POST", "/admin/dead-letters/redrive", "{\"ids\":[]}", false), 400);
    expect(call("POST", "/admin/dead-letters/redrive", "{}", false), 400);
    expect(call("POST", "/admin/dead-letters/redrive", "{\"ids\":[987654321]}", true), 404);
    expect(call("POST", "/admin/dead-letters/redrive", "{\"all\":true}", true), 200);
    expect(call("GET", "/admin/orders/" + paid, null, true), 200);
    expect(call("GET", "/admin/orders/ct" + RUN + "none", null, true), 404);
    expect(call("GET", "/admin/orders/" + paid + "?tenantId=Bad%20Tenant", null, false), 400);
    String forceClose = "/admin/orders/" + closed + "/force-close";
    expect(call("POST", forceClose, "{}", false), 400);
    expect(
        call("POST", forceClose, "{\"reason\":\"contract\",\"disownTrade\":\"no\"}", false), 400);
    expect(call("POST", forceClose, "{\"reason\":\"" + "r".repeat(513) + "\"}", false), 400);
    expect(call("POST", forceClose, "{\"reason\":\"contract test\"}", true), 200);
    expect(
        call("POST", "/admin/orders/" + paid + "/force-close", "{\"reason\":\"contract\"}", true),
        409);
    expect(call("GET", "/admin/pauses", null, true), 200);
    expect(
        call("POST", "/admin/pause", "{\"job\":\"nothing\",\"reason\":\"contract\"}", false), 400);
    expect(call("POST", "/admin/pause", "{\"job\":\"sweep\"}", false), 400);
    expect(
        call("POST", "/admin/pause", "{\"job\":\"sweep\",\"reason\":\"contract test\"}", true),
        200);
    expect(call("POST", "/admin/resume", "{\"job\":\"sweep\"}", true), 200);
    expect(call("POST", "/admin/resume", "{\"job\":1}", false), 400);
    expect(call("POST", "/admin/compensation", null, true), 200);
    String today = java.time.LocalDate.now(java.time.ZoneId.of("Asia/Shanghai")).toString();
    expect(call("POST", "/admin/reconciliation", "{\"date\":\"" + today + "\"}", true), 200);
    expect(call("POST", "/admin/reconciliation", "{}", false), 400);
    expect(call("POST", "/admin/reconciliation", "{\"date\":1}", false), 400);
    expect(call("GET", "/admin/reconciliation?date=" + today, null, true), 200);
    expect(call("GET", "/admin/reconciliation?date=2001-01-01", null, true), 404);

    Set<String> driven = new TreeSet<>();
    EXCHANGES.forEach(e -> driven.add(e.routeKey()));
    assertThat(driven).isEqualTo(new TreeSet<>(API.operations().keySet()));

    Map<String, List<String>> problems = new TreeMap<>();
    for (Exchange e : EXCHANGES) {
      List<String> found = check(e);
      if (!found.isEmpty()) {
        problems.put(
            e.method()
                + " "
                + e.path()
                + " "
                + shorten(e.requestBody())
                + " -> "
                + e.status()
                + " "
                + shorten(e.responseBody()),
            found);
      }
    }
    assertThat(problems).isEmpty();
  }

  /** What the document says is wrong with one exchange; empty: it is as documented. */
  static List<String> check(Exchange e) {
    List<String> problems = new ArrayList<>();
    List<String> refusals = requestRefusals(e);
    boolean valid = e.valid() == null ? e.status() / 100 == 2 : e.valid();
    boolean invalid = Boolean.FALSE.equals(e.valid());
    if (valid && !refusals.isEmpty()) {
      problems.add("the document refuses this request: " + refusals);
    }
    if (invalid && refusals.isEmpty()) {
      problems.add("the document accepts this request, which the test sent as invalid");
    }
    if (invalid && e.status() / 100 != 4) {
      problems.add("an invalid request answered " + e.status());
    }
    problems.addAll(API.responseErrors(e.routeKey(), e.status(), e.responseBody()));
    return problems;
  }

  /**
   * What the document says is wrong with exchanges another test recorded (RecordingProxy), by
   * exchange; empty: every one is as documented.
   */
  static Map<String, List<String>> conformance(List<RecordingProxy.Answered> exchanges) {
    Map<String, List<String>> problems = new TreeMap<>();
    for (RecordingProxy.Answered a : exchanges) {
      RecordingProxy.Recorded r = a.request();
      String body = new String(r.body(), StandardCharsets.UTF_8);
      Exchange e =
          exchange(r.method(), r.pathAndQuery(), r.headers(), body, null, a.status(), a.body());
      List<String> found = check(e);
      if (!found.isEmpty()) {
        problems.put(r.method() + " " + r.pathAndQuery() + " -> " + a.status(), found);
      }
    }
    return problems;
  }

  /**
   * What the document says is wrong with one exchange another test had with the local stack (its
   * request as sent, its body, the answer); empty: it is as documented.
   */
  static List<String> conformance(HttpRequest sent, String body, HttpResponse<String> response) {
    Map<String, String> headers = new TreeMap<>();
    sent.headers().map().forEach((k, v) -> headers.put(k.toLowerCase(Locale.ROOT), v.get(0)));
    String raw = sent.uri().getRawPath();
    if (raw.startsWith("/_local/")) {
      return List.of(); // the local stack's own routes (./local tenant), not the API's
    }
    String pathAndQuery =
        sent.uri().getRawQuery() == null ? raw : raw + "?" + sent.uri().getRawQuery();
    return check(
        exchange(
            sent.method(),
            pathAndQuery,
            headers,
            body,
            null,
            response.statusCode(),
            response.body()));
  }

  /** Why the document refuses the request: its path parameters, its size, its body. */
  private static List<String> requestRefusals(Exchange e) {
    List<String> out = new ArrayList<>();
    for (JsonNode p : API.parameters(e.routeKey())) {
      String name = p.path("name").asText();
      String in = p.path("in").asText();
      String value =
          switch (in) {
            case "path" -> e.pathParams().get(name);
            case "query" -> e.query().get(name);
            case "header" -> e.headers().get(name.toLowerCase(Locale.ROOT));
            default -> null;
          };
      if (value == null) {
        if (p.path("required").asBoolean(false)) {
          out.add(in + " parameter " + name + " is required");
        }
      } else if (!matches(p.path("schema"), value)) {
        out.add(in + " parameter " + name + " '" + value + "'");
      }
    }
    var body = API.requestBody(e.routeKey());
    String sent = e.requestBody() == null ? "" : e.requestBody();
    if (body.isEmpty()) {
      return out;
    }
    int max = body.get().path("x-max-body-bytes").asInt(Integer.MAX_VALUE);
    if (sent.getBytes(StandardCharsets.UTF_8).length > max) {
      out.add("over " + max + " bytes");
      return out;
    }
    if (sent.isEmpty()) {
      if (body.get().path("required").asBoolean(false)) {
        out.add("the body is required");
      }
      return out;
    }
    try {
      OpenApi.JSON.readTree(sent);
    } catch (IOException notJson) {
      out.add("not JSON");
      return out;
    }
    out.addAll(API.requestErrors(e.routeKey(), sent));
    return out;
  }

  /**
   * A parameter's value against its schema: an integer's form and range, a string's enum, pattern
   * and length.
   */
  private static boolean matches(JsonNode schema, String value) {
    if ("integer".equals(schema.path("type").asText())) {
      if (!value.matches("-?[0-9]{1,18}")) {
        return false;
      }
      long n = Long.parseLong(value);
      return (!schema.has("minimum") || n >= schema.get("minimum").asLong())
          && (!schema.has("maximum") || n <= schema.get("maximum").asLong());
    }
    if (schema.has("enum")) {
      boolean listed = false;
      for (JsonNode v : schema.get("enum")) {
        listed |= v.asText().equals(value);
      }
      if (!listed) {
        return false;
      }
    }
    if (schema.has("maxLength") && value.length() > schema.get("maxLength").asInt()) {
      return false;
    }
    String pattern = schema.path("pattern").asText(null);
    return pattern == null || Pattern.compile(pattern).matcher(value).find();
  }

  private static void expect(Exchange e, int status) {
    assertThat(e.status())
        .as(e.method() + " " + e.path() + " " + shorten(e.requestBody()) + ": " + e.responseBody())
        .isEqualTo(status);
  }

  private static String status(String orderId) throws Exception {
    Exchange e = call("GET", "/orders/" + orderId, null, true);
    return OpenApi.JSON.readTree(e.responseBody()).path("status").asText();
  }

  private static Exchange call(String method, String pathAndQuery, String body, boolean valid)
      throws Exception {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(stack.apiUrl() + pathAndQuery))
            .header("content-type", "application/json")
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body));
    return send(request, method, pathAndQuery, body, valid);
  }

  private static Exchange notify(
      String path, String body, Map<String, String> headers, boolean valid) throws Exception {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(stack.apiUrl() + path))
            .header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    headers.forEach(request::header);
    return send(request, "POST", path, body, valid);
  }

  private static Exchange send(
      HttpRequest.Builder request, String method, String pathAndQuery, String body, boolean valid)
      throws Exception {
    HttpRequest sent = request.build();
    HttpResponse<String> response = HTTP.send(sent, HttpResponse.BodyHandlers.ofString());
    Map<String, String> headers = new TreeMap<>();
    sent.headers().map().forEach((k, v) -> headers.put(k.toLowerCase(Locale.ROOT), v.get(0)));
    Exchange e =
        exchange(
            method, pathAndQuery, headers, body, valid, response.statusCode(), response.body());
    EXCHANGES.add(e);
    return e;
  }

  /** An exchange resolved to the document's operation by its method and path. */
  static Exchange exchange(
      String method,
      String pathAndQuery,
      Map<String, String> headers,
      String body,
      Boolean valid,
      int status,
      String responseBody) {
    String path = pathAndQuery.replaceFirst("\\?.*$", "");
    Map<String, String> query = new TreeMap<>();
    if (pathAndQuery.contains("?")) {
      for (String pair : pathAndQuery.substring(pathAndQuery.indexOf('?') + 1).split("&")) {
        String[] kv = pair.split("=", 2);
        query.put(
            URLDecoder.decode(kv[0], StandardCharsets.UTF_8),
            kv.length == 1 ? "" : URLDecoder.decode(kv[1], StandardCharsets.UTF_8));
      }
    }
    Map.Entry<String, Map<String, String>> route = route(method, path);
    return new Exchange(
        route.getKey(),
        method,
        pathAndQuery,
        route.getValue(),
        query,
        headers,
        body,
        valid,
        status,
        responseBody);
  }

  /**
   * The document's operation for a method and a concrete path, by its path templates (a literal
   * segment before a parameter), with the path parameters' values.
   */
  static Map.Entry<String, Map<String, String>> route(String method, String path) {
    String[] segments = path.split("/", -1);
    Map.Entry<String, Map<String, String>> best = null;
    int bestParams = Integer.MAX_VALUE;
    for (String key : API.operations().keySet()) {
      String[] parts = key.split(" ", 2);
      if (!parts[0].equals(method.toUpperCase(Locale.ROOT))) {
        continue;
      }
      String[] template = parts[1].split("/", -1);
      if (template.length != segments.length) {
        continue;
      }
      Map<String, String> params = new TreeMap<>();
      boolean match = true;
      for (int i = 0; i < template.length && match; i++) {
        if (template[i].startsWith("{") && template[i].endsWith("}")) {
          params.put(
              template[i].substring(1, template[i].length() - 1),
              URLDecoder.decode(segments[i], StandardCharsets.UTF_8));
        } else {
          match = template[i].equals(segments[i]);
        }
      }
      if (match && params.size() < bestParams) {
        best = Map.entry(key, params);
        bestParams = params.size();
      }
    }
    assertThat(best).as("an operation of the document for " + method + " " + path).isNotNull();
    return best;
  }

  private static String place(String orderId, String coupon) {
    return "{\"orderId\":\""
        + orderId
        + "\",\"userId\":\"user-ct\",\"items\":[{\"skuId\":\"sku-0001\",\"quantity\":1}],"
        + (coupon == null ? "" : "\"couponId\":\"" + coupon + "\",")
        + "\"amountFen\":1000,\"timeoutSeconds\":600}";
  }

  /** A JSON object just over {@code limit} bytes. */
  private static String oversize(int limit) {
    return "{\"openId\":\"" + "o".repeat(limit) + "\"}";
  }

  private static String shorten(String s) {
    return s == null ? "" : s.length() <= 120 ? s : s.substring(0, 120) + "...";
  }
}
