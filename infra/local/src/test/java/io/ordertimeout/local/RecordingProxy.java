package io.ordertimeout.local;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A test stand-in for API Gateway's edge in front of the local stack: records every request as it
 * arrived on the wire (the local gateway verifies no SigV4, so the tests check the headers here)
 * and forwards it, except the routes given canned answers, which it answers itself as API Gateway
 * would (e.g. 403 {"message":"Forbidden"} from an IAM authorizer). The forwarded exchanges are kept
 * with their answers, for the tests to check against docs/reference/openapi.yaml ({@link
 * ContractTest#conformance}).
 */
final class RecordingProxy implements AutoCloseable {

  /** A request as received: headers by lower-case name (first value), the raw body. */
  record Recorded(String method, String pathAndQuery, Map<String, String> headers, byte[] body) {
    String header(String name) {
      return headers.get(name.toLowerCase(Locale.ROOT));
    }
  }

  /** An answer the proxy gives itself instead of forwarding. */
  record Canned(int status, String body) {}

  /** A forwarded request with the local stack's answer. */
  record Answered(Recorded request, int status, String body) {}

  private static final Set<String> HOP_BY_HOP =
      Set.of("host", "content-length", "connection", "expect", "upgrade", "transfer-encoding");

  private final URI target;
  private final Map<String, Canned> canned;
  private final List<Recorded> recorded = new CopyOnWriteArrayList<>();
  private final List<Answered> answered = new CopyOnWriteArrayList<>();
  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private final HttpServer server;

  /** {@code canned}: "POST /wechatpay/notify" to the answer given instead of forwarding. */
  RecordingProxy(URI target, Map<String, Canned> canned) throws IOException {
    this.target = target;
    this.canned = Map.copyOf(canned);
    this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
    server.createContext("/", this::serve);
    server.start();
  }

  URI url() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
  }

  List<Recorded> requests() {
    return List.copyOf(recorded);
  }

  /** The forwarded exchanges (not the canned answers), in order. */
  List<Answered> exchanges() {
    return List.copyOf(answered);
  }

  private void serve(HttpExchange exchange) throws IOException {
    try (exchange) {
      Recorded r = record(exchange);
      recorded.add(r);
      Canned answer = canned.get(r.method() + " " + exchange.getRequestURI().getRawPath());
      if (answer == null) {
        answer = forward(r);
        answered.add(new Answered(r, answer.status(), answer.body()));
      }
      byte[] bytes = answer.body().getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().add("content-type", "application/json");
      exchange.sendResponseHeaders(answer.status(), bytes.length == 0 ? -1 : bytes.length);
      if (bytes.length > 0) {
        exchange.getResponseBody().write(bytes);
      }
    }
  }

  private static Recorded record(HttpExchange exchange) throws IOException {
    Map<String, String> headers = new TreeMap<>();
    exchange
        .getRequestHeaders()
        .forEach((name, values) -> headers.put(name.toLowerCase(Locale.ROOT), values.get(0)));
    return new Recorded(
        exchange.getRequestMethod(),
        exchange.getRequestURI().toString(),
        headers,
        exchange.getRequestBody().readAllBytes());
  }

  private Canned forward(Recorded r) throws IOException {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(target + r.pathAndQuery()))
            .timeout(Duration.ofSeconds(30))
            .method(r.method(), HttpRequest.BodyPublishers.ofByteArray(r.body()));
    r.headers()
        .forEach(
            (name, value) -> {
              if (!HOP_BY_HOP.contains(name)) {
                request.header(name, value);
              }
            });
    try {
      HttpResponse<String> response =
          http.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
      return new Canned(response.statusCode(), response.body());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(
          "forwarding " + r.method() + " " + r.pathAndQuery() + " interrupted", e);
    }
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
