package io.ordertimeout.local;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import io.ordertimeout.embedded.wechat.HttpServers;
import io.ordertimeout.metrics.Metrics;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP API on localhost: every template route goes to its real handler as a payload 2.0 event;
 * {@code GET /metrics} serves the metrics in Prometheus text. Unknown routes answer as API Gateway
 * does (404 {"message":"Not Found"}); a route whose function is not loaded answers 501 naming it.
 */
final class ApiGatewayServer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ApiGatewayServer.class);

  /** API Gateway's HTTP API refuses payloads over 10 MB before the function sees them. */
  private static final int MAX_BODY_BYTES = 10 * 1024 * 1024;

  /**
   * 32 request threads: a mall backend's pool may keep up to 32 requests in flight, as many
   * concurrent Lambda environments would; each shares the one OrderTimeout and its DB pool.
   */
  private static final int THREADS = 32;

  private final RouteTable routes;
  private final List<Metrics> metrics;
  private final BooleanSupplier stopping;
  private final HttpServer server;
  private final ExecutorService threads;

  ApiGatewayServer(
      RouteTable routes, Metrics metrics, BooleanSupplier stopping, String host, int port) {
    this(routes, List.of(metrics), stopping, host, port);
  }

  /** As above, {@code GET /metrics} showing {@code metrics} (one registry per wiring) as one. */
  ApiGatewayServer(
      RouteTable routes, List<Metrics> metrics, BooleanSupplier stopping, String host, int port) {
    this.routes = routes;
    this.metrics = List.copyOf(metrics);
    this.stopping = stopping;
    AtomicInteger n = new AtomicInteger();
    this.threads =
        Executors.newFixedThreadPool(
            THREADS,
            r -> {
              Thread t = new Thread(r, "local-api-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    try {
      // TCP_NODELAY: without it every answer after the first on a kept-alive connection (a mall
      // backend's pool, the simulator's notifications) waits 40 ms for the client's delayed ACK
      this.server = HttpServers.create(new InetSocketAddress(host, port), 256);
    } catch (IOException e) {
      throw new UncheckedIOException("could not listen on " + host + ":" + port, e);
    }
    server.setExecutor(threads);
    server.createContext("/", this::serve);
    server.start();
  }

  /**
   * A local-only control under {@code prefix} (the longest matching prefix wins over "/"), e.g.
   * {@link LocalTenants#PATH}; no template route starts with "/_local".
   */
  void control(String prefix, HttpHandler handler) {
    server.createContext(prefix, handler);
  }

  URI baseUrl() {
    InetSocketAddress a = server.getAddress();
    return URI.create("http://" + a.getAddress().getHostAddress() + ":" + a.getPort());
  }

  /** The JDK server itself, for the test that reads its sockets' options. */
  HttpServer httpServer() {
    return server;
  }

  private void serve(HttpExchange exchange) throws IOException {
    try (exchange) {
      String method = exchange.getRequestMethod().toUpperCase();
      String path = exchange.getRequestURI().getRawPath();
      byte[] body = readBody(exchange.getRequestBody());
      if (method.equals("GET") && path.equals("/metrics")) {
        send(exchange, 200, "text/plain; version=0.0.4", PrometheusText.render(metrics));
        return;
      }
      var match = routes.match(method, path);
      if (match.isEmpty()) {
        send(exchange, 404, "application/json", "{\"message\":\"Not Found\"}");
        return;
      }
      invoke(exchange, match.get(), method, path, body);
    } catch (RuntimeException e) {
      // a handler that throws is a Lambda invocation error: API Gateway answers 500
      log.error("local API {} failed", exchange.getRequestURI(), e);
      send(exchange, 500, "application/json", "{\"message\":\"Internal Server Error\"}");
    }
  }

  private void invoke(
      HttpExchange exchange, RouteTable.Match match, String method, String path, byte[] body)
      throws IOException {
    LocalFunction function = match.entry().function();
    if (function == null) {
      send(
          exchange,
          501,
          "application/json",
          "{\"message\":\"route "
              + match.entry().route().routeKey()
              + " is declared in template.yaml but its function is not built locally\"}");
      return;
    }
    PayloadV2.Request request =
        new PayloadV2.Request(
            method,
            path,
            exchange.getRequestURI().getRawQuery(),
            exchange.getRequestHeaders(),
            body,
            exchange.getRemoteAddress().getAddress().getHostAddress());
    APIGatewayV2HTTPEvent event = PayloadV2.event(request, match);
    Object result =
        function.invoke(
            event, new LocalContext(function.name(), function.timeoutMillis(), stopping));
    respond(exchange, (APIGatewayV2HTTPResponse) result);
  }

  private static void respond(HttpExchange exchange, APIGatewayV2HTTPResponse response)
      throws IOException {
    if (response.getHeaders() != null) {
      response.getHeaders().forEach((k, v) -> exchange.getResponseHeaders().add(k, v));
    }
    if (response.getMultiValueHeaders() != null) {
      response.getMultiValueHeaders().forEach((k, v) -> exchange.getResponseHeaders().put(k, v));
    }
    if (response.getCookies() != null) {
      response.getCookies().forEach(c -> exchange.getResponseHeaders().add("set-cookie", c));
    }
    byte[] bytes = responseBody(response);
    int status = response.getStatusCode() == 0 ? 200 : response.getStatusCode();
    // 204 and 304 carry no body; -1 tells the JDK server to send no Content-Length body
    exchange.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
    if (bytes.length > 0) {
      exchange.getResponseBody().write(bytes);
    }
  }

  private static byte[] responseBody(APIGatewayV2HTTPResponse response) {
    String body = response.getBody();
    if (body == null) {
      return new byte[0];
    }
    return response.getIsBase64Encoded()
        ? Base64.getDecoder().decode(body)
        : body.getBytes(StandardCharsets.UTF_8);
  }

  private static void send(HttpExchange exchange, int status, String type, String body)
      throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().put("content-type", List.of(type));
    exchange.sendResponseHeaders(status, bytes.length);
    exchange.getResponseBody().write(bytes);
  }

  private static byte[] readBody(InputStream in) throws IOException {
    byte[] body = in.readNBytes(MAX_BODY_BYTES + 1);
    if (body.length > MAX_BODY_BYTES) {
      throw new IllegalArgumentException("request body over " + MAX_BODY_BYTES + " bytes");
    }
    return body;
  }

  @Override
  public void close() {
    server.stop(0);
    threads.shutdownNow();
  }
}
