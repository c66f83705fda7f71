package io.ordertimeout.local;

import com.sun.net.httpserver.Filter;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Records every exchange a running {@link LocalStack}'s HTTP API has, in place, for code that calls
 * {@link LocalStack#apiUrl()} itself (the demo, WeChat's notifications), where a {@link
 * RecordingProxy} cannot stand in between: the API's "/" context is served again by the same
 * handler behind a filter that keeps each request and its answer. The local-only routes ({@code
 * /metrics}, {@code /_local/...}) are left out. The exchanges are checked with {@link
 * ContractTest#conformance(List)}.
 */
final class ApiWireTap {
  private final List<RecordingProxy.Answered> exchanges = new CopyOnWriteArrayList<>();

  private ApiWireTap() {}

  /** Taps {@code stack}'s API from now on; what it served before is not recorded. */
  static ApiWireTap attach(LocalStack stack) {
    ApiWireTap tap = new ApiWireTap();
    try {
      Field field = LocalStack.class.getDeclaredField("api");
      field.setAccessible(true);
      ApiGatewayServer api = (ApiGatewayServer) field.get(stack);
      Method serve = ApiGatewayServer.class.getDeclaredMethod("serve", HttpExchange.class);
      serve.setAccessible(true);
      HttpServer server = api.httpServer();
      server.removeContext("/");
      server
          .createContext("/", exchange -> invoke(serve, api, exchange))
          .getFilters()
          .add(tap.filter());
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("the local API's handler could not be tapped", e);
    }
    return tap;
  }

  /** The recorded exchanges, in the order they were answered. */
  List<RecordingProxy.Answered> exchanges() {
    return List.copyOf(exchanges);
  }

  private static void invoke(Method serve, ApiGatewayServer api, HttpExchange exchange)
      throws IOException {
    try {
      serve.invoke(api, exchange);
    } catch (InvocationTargetException e) {
      if (e.getCause() instanceof IOException io) {
        throw io;
      }
      throw new IllegalStateException(e.getCause());
    } catch (IllegalAccessException e) {
      throw new IllegalStateException(e);
    }
  }

  private Filter filter() {
    return new Filter() {
      @Override
      public void doFilter(HttpExchange exchange, Chain chain) throws IOException {
        String path = exchange.getRequestURI().getRawPath();
        if (path.equals("/metrics") || path.startsWith("/_local/")) {
          chain.doFilter(exchange);
          return;
        }
        byte[] body = exchange.getRequestBody().readAllBytes();
        ByteArrayOutputStream answer = new ByteArrayOutputStream();
        OutputStream out = exchange.getResponseBody();
        exchange.setStreams(
            new ByteArrayInputStream(body),
            new FilterOutputStream(out) {
              @Override
              public void write(int b) throws IOException {
                answer.write(b);
                out.write(b);
              }

              @Override
              public void write(byte[] b, int off, int len) throws IOException {
                answer.write(b, off, len);
                out.write(b, off, len);
              }
            });
        Map<String, String> headers = new TreeMap<>();
        exchange
            .getRequestHeaders()
            .forEach((name, values) -> headers.put(name.toLowerCase(Locale.ROOT), values.get(0)));
        String pathAndQuery = exchange.getRequestURI().toString();
        chain.doFilter(exchange);
        exchanges.add(
            new RecordingProxy.Answered(
                new RecordingProxy.Recorded(
                    exchange.getRequestMethod(), pathAndQuery, headers, body),
                exchange.getResponseCode(),
                answer.toString(StandardCharsets.UTF_8)));
      }

      @Override
      public String description() {
        return "records each exchange for the contract check";
      }
    };
  }
}
