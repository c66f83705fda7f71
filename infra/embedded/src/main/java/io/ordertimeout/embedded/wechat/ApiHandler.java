package io.ordertimeout.embedded.wechat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The HTTP face of the simulator: checks the merchant's signature, applies latency and faults,
 * routes to the {@link TradeBook}, and signs every answer with the platform key.
 */
final class ApiHandler implements HttpHandler {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String TRADE_PREFIX = "/v3/pay/transactions/out-trade-no/";
  private static final String REFUND_PREFIX = "/v3/refund/domestic/refunds/";
  private static final String PARTNER_TRADE_PREFIX = "/v3/pay/partner/transactions/out-trade-no/";
  private static final Pattern AUTH_FIELD = Pattern.compile("(\\w+)=\"([^\"]*)\"");

  /** WeChat rejects requests signed more than 5 minutes away from its clock. */
  private static final Duration SIGNATURE_WINDOW = Duration.ofMinutes(5);

  private final WeChatPaySimulator simulator;
  private final TradeBook book;
  private final SubMerchants partner;
  private final Clock clock;

  ApiHandler(WeChatPaySimulator simulator, TradeBook book, SubMerchants partner, Clock clock) {
    this.simulator = simulator;
    this.book = book;
    this.partner = partner;
    this.clock = clock;
  }

  /**
   * @param partner a partner API ({@code /v3/pay/partner/...}), served by {@link SubMerchants}
   */
  private record Route(Endpoint endpoint, String pathParam, boolean partner) {
    Route(Endpoint endpoint, String pathParam) {
      this(endpoint, pathParam, false);
    }
  }

  @Override
  public void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      Route route = route(exchange.getRequestMethod(), exchange.getRequestURI().getPath());
      if (route == null) {
        send(
            exchange,
            ApiAnswer.error(404, "NOT_FOUND", "no such API: " + exchange.getRequestURI()));
        return;
      }
      simulator.recordCall(route.endpoint());
      String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      simulator.pause(simulator.latency(route.endpoint()));
      simulator.awaitGate(route.endpoint());
      send(exchange, answer(exchange, route, body));
    } catch (RuntimeException e) {
      send(exchange, ApiAnswer.error(500, "SYSTEM_ERROR", "simulator failure: " + e));
    }
  }

  private ApiAnswer answer(HttpExchange exchange, Route route, String body) {
    String authError = authenticate(exchange, body);
    if (authError != null) {
      return ApiAnswer.error(401, "SIGN_ERROR", authError);
    }
    Fault fault = simulator.nextFault(route.endpoint());
    if (fault == Fault.HANG) {
      simulator.pause(simulator.hangTime());
      return ApiAnswer.error(500, "SYSTEM_ERROR", "answered after hanging");
    }
    if (fault == Fault.NO_CONTENT) {
      return ApiAnswer.noContent();
    }
    if (fault != null) {
      return ApiAnswer.error(fault.status, fault.code, fault.message);
    }
    return dispatch(route, exchange.getRequestURI(), body);
  }

  private ApiAnswer dispatch(Route route, URI uri, String body) {
    JsonNode request;
    try {
      request = body.isEmpty() ? JSON.createObjectNode() : JSON.readTree(body);
    } catch (IOException e) {
      return ApiAnswer.error(400, "PARAM_ERROR", "request body is not JSON");
    }
    boolean refund =
        route.endpoint() == Endpoint.REFUND || route.endpoint() == Endpoint.REFUND_QUERY;
    if (route.partner()
        || refund && (request.has("sub_mchid") || queryParams(uri).containsKey("sub_mchid"))) {
      return partnerDispatch(route, queryParams(uri), request);
    }
    return switch (route.endpoint()) {
      case PREPAY -> book.prepay(request);
      case QUERY -> book.query(route.pathParam(), queryParams(uri).get("mchid"));
      case CLOSE -> book.close(route.pathParam(), request);
      case REFUND -> book.refund(request);
      case REFUND_QUERY -> book.queryRefund(route.pathParam());
    };
  }

  private ApiAnswer partnerDispatch(Route route, Map<String, String> params, JsonNode request) {
    return switch (route.endpoint()) {
      case PREPAY -> partner.prepay(request);
      case QUERY -> partner.query(route.pathParam(), params);
      case CLOSE -> partner.close(route.pathParam(), request);
      case REFUND -> partner.refund(request);
      case REFUND_QUERY -> partner.queryRefund(route.pathParam(), params.get("sub_mchid"));
    };
  }

  /** The partner APIs of a service provider: the same endpoints under /v3/pay/partner. */
  private static Route partnerRoute(boolean post, boolean get, String path) {
    if (post && path.equals("/v3/pay/partner/transactions/jsapi")) {
      return new Route(Endpoint.PREPAY, null, true);
    }
    if (post && path.startsWith(PARTNER_TRADE_PREFIX) && path.endsWith("/close")) {
      String no = path.substring(PARTNER_TRADE_PREFIX.length(), path.length() - "/close".length());
      return new Route(Endpoint.CLOSE, no, true);
    }
    if (get && path.startsWith(PARTNER_TRADE_PREFIX)) {
      return new Route(Endpoint.QUERY, path.substring(PARTNER_TRADE_PREFIX.length()), true);
    }
    return null;
  }

  private static Route route(String method, String path) {
    boolean post = "POST".equals(method);
    boolean get = "GET".equals(method);
    if (path.startsWith("/v3/pay/partner/")) {
      return partnerRoute(post, get, path);
    }
    if (post && path.equals("/v3/pay/transactions/jsapi")) {
      return new Route(Endpoint.PREPAY, null);
    }
    if (post && path.equals("/v3/refund/domestic/refunds")) {
      return new Route(Endpoint.REFUND, null);
    }
    if (get && path.startsWith(REFUND_PREFIX)) {
      return new Route(Endpoint.REFUND_QUERY, path.substring(REFUND_PREFIX.length()));
    }
    if (post && path.startsWith(TRADE_PREFIX) && path.endsWith("/close")) {
      return new Route(
          Endpoint.CLOSE, path.substring(TRADE_PREFIX.length(), path.length() - "/close".length()));
    }
    if (get && path.startsWith(TRADE_PREFIX)) {
      return new Route(Endpoint.QUERY, path.substring(TRADE_PREFIX.length()));
    }
    return null;
  }

  /**
   * Verifies "WECHATPAY2-SHA256-RSA2048
   * mchid=..,nonce_str=..,timestamp=..,serial_no=..,signature=.." over
   * "METHOD\nURL\nTIMESTAMP\nNONCE\nBODY\n"; answers null when valid, else the reason.
   */
  String authenticate(HttpExchange exchange, String body) {
    String header = exchange.getRequestHeaders().getFirst("Authorization");
    if (header == null || !header.startsWith(NotificationBuilder.SIGNATURE_TYPE + " ")) {
      return "Authorization header missing or not " + NotificationBuilder.SIGNATURE_TYPE;
    }
    Map<String, String> fields = new HashMap<>();
    Matcher m = AUTH_FIELD.matcher(header);
    while (m.find()) {
      fields.put(m.group(1), m.group(2));
    }
    if (!simulator.mchid().equals(fields.get("mchid"))) {
      return "mchid " + fields.get("mchid") + " is not " + simulator.mchid();
    }
    if (!simulator.merchantSerialNumber().equals(fields.get("serial_no"))) {
      return "serial_no " + fields.get("serial_no") + " is not the merchant certificate's";
    }
    String timestamp = fields.getOrDefault("timestamp", "");
    if (!fresh(timestamp)) {
      return "timestamp " + timestamp + " is more than 5 minutes off";
    }
    URI uri = exchange.getRequestURI();
    String url = uri.getRawPath() + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
    String message =
        exchange.getRequestMethod()
            + "\n"
            + url
            + "\n"
            + timestamp
            + "\n"
            + fields.get("nonce_str")
            + "\n"
            + body
            + "\n";
    PublicKey key = simulator.merchantPublicKey();
    return WeChatCrypto.verify(key, message, fields.getOrDefault("signature", "")) ? null : "签名错误";
  }

  private boolean fresh(String epochSeconds) {
    try {
      Instant signedAt = Instant.ofEpochSecond(Long.parseLong(epochSeconds));
      return Duration.between(signedAt, clock.instant()).abs().compareTo(SIGNATURE_WINDOW) <= 0;
    } catch (NumberFormatException e) {
      return false;
    }
  }

  /**
   * Signs "TIMESTAMP\nNONCE\nBODY\n" and sends. The JDK server rewrites header names to
   * "Wechatpay-timestamp" style on the wire; see the class comment of WeChatPaySimulator.
   */
  void send(HttpExchange exchange, ApiAnswer answer) throws IOException {
    String timestamp = String.valueOf(clock.instant().getEpochSecond());
    String nonce = WeChatCrypto.nonce(32);
    PrivateKey key = simulator.platformPrivateKey();
    Headers headers = exchange.getResponseHeaders();
    headers.set("Request-ID", UUID.randomUUID().toString());
    headers.set("Wechatpay-Timestamp", timestamp);
    headers.set("Wechatpay-Nonce", nonce);
    headers.set("Wechatpay-Serial", simulator.platformPublicKeyId());
    headers.set(
        "Wechatpay-Signature",
        WeChatCrypto.sign(key, timestamp + "\n" + nonce + "\n" + answer.body() + "\n"));
    byte[] bytes = answer.body().getBytes(StandardCharsets.UTF_8);
    if (bytes.length == 0) {
      exchange.sendResponseHeaders(answer.status(), -1);
      return;
    }
    headers.set("Content-Type", "application/json");
    exchange.sendResponseHeaders(answer.status(), bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  private static Map<String, String> queryParams(URI uri) {
    Map<String, String> params = new HashMap<>();
    String query = uri.getQuery();
    if (query != null) {
      for (String pair : query.split("&")) {
        int eq = pair.indexOf('=');
        params.put(eq < 0 ? pair : pair.substring(0, eq), eq < 0 ? "" : pair.substring(eq + 1));
      }
    }
    return params;
  }
}
