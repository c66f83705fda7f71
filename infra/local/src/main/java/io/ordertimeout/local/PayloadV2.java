package io.ordertimeout.local;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

/**
 * Builds the HTTP API payload format 2.0 event API Gateway would send for a request: header names
 * lower-cased and repeated values joined with commas, cookies split out, query parameters decoded,
 * the body base64-encoded unless its content type is text, and a requestContext with the route key,
 * stage {@code $default}, request id, source IP and, for AWS_IAM routes, the caller's identity.
 */
final class PayloadV2 {

  /** One request as the local server received it. */
  record Request(
      String method,
      String rawPath,
      String rawQuery,
      Map<String, List<String>> headers,
      byte[] body,
      String sourceIp) {}

  private static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("dd/MMM/yyyy:HH:mm:ss Z", Locale.ENGLISH)
          .withZone(ZoneOffset.UTC);

  /** The local caller: API Gateway verified a SigV4 signature on AWS; nothing is verified here. */
  static final String LOCAL_ACCOUNT = "000000000000";

  /** The IAM caller every request of the local gateway carries (OTC_TENANT_PRINCIPALS maps it). */
  static final String LOCAL_CALLER = "arn:aws:iam::" + LOCAL_ACCOUNT + ":user/local-mall-backend";

  private PayloadV2() {}

  static APIGatewayV2HTTPEvent event(Request request, RouteTable.Match match) {
    Map<String, String> headers = headers(request.headers());
    APIGatewayV2HTTPEvent event = new APIGatewayV2HTTPEvent();
    event.setVersion("2.0");
    event.setRouteKey(match.entry().route().routeKey());
    event.setRawPath(request.rawPath());
    event.setRawQueryString(request.rawQuery() == null ? "" : request.rawQuery());
    event.setHeaders(headers);
    List<String> cookies = cookies(headers.remove("cookie"));
    event.setCookies(cookies.isEmpty() ? null : cookies);
    Map<String, String> query = query(request.rawQuery());
    event.setQueryStringParameters(query.isEmpty() ? null : query);
    event.setPathParameters(match.pathParameters().isEmpty() ? null : match.pathParameters());
    setBody(event, request.body(), headers.get("content-type"));
    event.setRequestContext(context(request, headers, match.entry().route()));
    return event;
  }

  private static APIGatewayV2HTTPEvent.RequestContext context(
      Request request, Map<String, String> headers, SamTemplate.HttpRoute route) {
    Instant now = Instant.now();
    APIGatewayV2HTTPEvent.RequestContext.Http http =
        new APIGatewayV2HTTPEvent.RequestContext.Http();
    http.setMethod(request.method());
    http.setPath(request.rawPath());
    http.setProtocol("HTTP/1.1");
    http.setSourceIp(request.sourceIp());
    http.setUserAgent(headers.get("user-agent"));
    APIGatewayV2HTTPEvent.RequestContext ctx = new APIGatewayV2HTTPEvent.RequestContext();
    ctx.setAccountId(LOCAL_ACCOUNT);
    ctx.setApiId("local");
    String host = headers.getOrDefault("host", "localhost");
    ctx.setDomainName(host);
    ctx.setDomainPrefix(host.split("[.:]")[0]);
    ctx.setHttp(http);
    ctx.setRequestId(UUID.randomUUID().toString());
    ctx.setRouteKey(route.routeKey());
    ctx.setStage("$default");
    ctx.setTime(TIME.format(now));
    ctx.setTimeEpoch(now.toEpochMilli());
    if ("AWS_IAM".equals(route.auth())) {
      ctx.setAuthorizer(iamCaller());
    }
    return ctx;
  }

  private static APIGatewayV2HTTPEvent.RequestContext.Authorizer iamCaller() {
    APIGatewayV2HTTPEvent.RequestContext.IAM iam = new APIGatewayV2HTTPEvent.RequestContext.IAM();
    iam.setAccountId(LOCAL_ACCOUNT);
    iam.setUserArn(LOCAL_CALLER);
    iam.setUserId("LOCAL");
    iam.setAccessKey("LOCAL");
    iam.setCallerId("LOCAL");
    APIGatewayV2HTTPEvent.RequestContext.Authorizer authorizer =
        new APIGatewayV2HTTPEvent.RequestContext.Authorizer();
    authorizer.setIam(iam);
    return authorizer;
  }

  static Map<String, String> headers(Map<String, List<String>> raw) {
    Map<String, String> headers = new LinkedHashMap<>();
    raw.forEach(
        (name, values) ->
            headers.merge(
                name.toLowerCase(Locale.ROOT), String.join(",", values), (a, b) -> a + "," + b));
    return headers;
  }

  private static List<String> cookies(String header) {
    List<String> cookies = new ArrayList<>();
    if (header != null) {
      for (String c : header.split(";")) {
        if (!c.isBlank()) {
          cookies.add(c.trim());
        }
      }
    }
    return cookies;
  }

  static Map<String, String> query(String rawQuery) {
    Map<String, String> query = new LinkedHashMap<>();
    if (rawQuery == null || rawQuery.isEmpty()) {
      return query;
    }
    for (String pair : rawQuery.split("&")) {
      int eq = pair.indexOf('=');
      String name = decode(eq < 0 ? pair : pair.substring(0, eq));
      String value = eq < 0 ? "" : decode(pair.substring(eq + 1));
      query.merge(name, value, (a, b) -> a + "," + b);
    }
    return query;
  }

  private static String decode(String s) {
    return URLDecoder.decode(s, StandardCharsets.UTF_8);
  }

  private static void setBody(APIGatewayV2HTTPEvent event, byte[] body, String contentType) {
    if (body == null || body.length == 0) {
      event.setIsBase64Encoded(false);
      return;
    }
    if (isText(contentType)) {
      event.setBody(new String(body, StandardCharsets.UTF_8));
      event.setIsBase64Encoded(false);
    } else {
      event.setBody(Base64.getEncoder().encodeToString(body));
      event.setIsBase64Encoded(true);
    }
  }

  /** API Gateway passes text bodies as they are and base64-encodes everything else. */
  static boolean isText(String contentType) {
    if (contentType == null) {
      return false;
    }
    String type = contentType.toLowerCase(Locale.ROOT);
    return type.startsWith("text/")
        || type.contains("json")
        || type.contains("xml")
        || type.contains("javascript")
        || type.startsWith("application/x-www-form-urlencoded");
  }
}
