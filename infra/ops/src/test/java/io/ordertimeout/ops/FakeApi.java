package io.ordertimeout.ops;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/**
 * An HTTP API on a free loopback port that answers each request from the test's function and
 * records what came over the wire: the commands' own HTTP and signing run unchanged against it.
 */
final class FakeApi implements AutoCloseable {

  /** A request as it arrived; header names lower-case. */
  record Request(
      String method, String pathAndQuery, Map<String, List<String>> headers, String body) {
    String header(String name) {
      List<String> values = headers.get(name.toLowerCase(Locale.ROOT));
      return values == null || values.isEmpty() ? null : values.get(0);
    }
  }

  /** The answer to send. */
  record Answer(int status, String body) {}

  private final HttpServer server;
  private final List<Request> requests = new CopyOnWriteArrayList<>();

  FakeApi(Function<Request, Answer> answers) throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext(
        "/",
        exchange -> {
          Request request = request(exchange);
          requests.add(request);
          Answer answer = answers.apply(request);
          byte[] body = answer.body().getBytes(StandardCharsets.UTF_8);
          exchange.getResponseHeaders().add("content-type", "application/json");
          exchange.sendResponseHeaders(answer.status(), body.length == 0 ? -1 : body.length);
          try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
          }
        });
    server.start();
  }

  URI url() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
  }

  List<Request> requests() {
    return List.copyOf(requests);
  }

  @Override
  public void close() {
    server.stop(0);
  }

  private static Request request(HttpExchange exchange) throws IOException {
    Map<String, List<String>> headers = new java.util.HashMap<>();
    exchange
        .getRequestHeaders()
        .forEach((name, values) -> headers.put(name.toLowerCase(Locale.ROOT), List.copyOf(values)));
    String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
    return new Request(
        exchange.getRequestMethod(),
        exchange.getRequestURI().getRawPath()
            + (exchange.getRequestURI().getRawQuery() == null
                ? ""
                : "?" + exchange.getRequestURI().getRawQuery()),
        Map.copyOf(headers),
        body);
  }
}
