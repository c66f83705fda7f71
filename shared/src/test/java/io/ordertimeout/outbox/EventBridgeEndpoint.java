package io.ordertimeout.outbox;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.ordertimeout.util.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * An in-process EventBridge endpoint that speaks PutEvents' wire protocol (AWS JSON 1.1, target
 * {@code AWSEvents.PutEvents}), so the real SDK client with its signing, retries and parsing runs
 * against it. Faults are injected per call and per entry: whole calls answered 400
 * ThrottlingException, and entries refused inside an accepted call (the partial failures PutEvents
 * reports per entry), and a brownout: every call hangs, then fails whole with 500. Accepted entries
 * are kept in order: the bus a subscriber reads. Calls are served concurrently, as the real service
 * does, so a hung call holds up no other.
 */
final class EventBridgeEndpoint implements AutoCloseable {
  /** One accepted entry. */
  record Delivered(String bus, String source, String detailType, JsonNode detail) {}

  private final HttpServer server;
  private final ExecutorService executor;
  private final List<Delivered> delivered = new ArrayList<>();
  private final AtomicInteger calls = new AtomicInteger();
  private final AtomicInteger throttleNextCalls = new AtomicInteger();
  private final Set<String> refusedOnce = new HashSet<>();
  private volatile Predicate<JsonNode> refuseFirstTry = d -> false;
  private volatile int maxEntriesSeen;
  private volatile long hangMillis;

  private EventBridgeEndpoint(HttpServer server, ExecutorService executor) {
    this.server = server;
    this.executor = executor;
  }

  static EventBridgeEndpoint start() {
    try {
      HttpServer server =
          HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
      ExecutorService executor =
          Executors.newCachedThreadPool(
              r -> {
                Thread t = new Thread(r, "eventbridge-endpoint");
                t.setDaemon(true);
                return t;
              });
      EventBridgeEndpoint endpoint = new EventBridgeEndpoint(server, executor);
      server.createContext("/", endpoint::handle);
      server.setExecutor(executor);
      server.start();
      return endpoint;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start the EventBridge endpoint", e);
    }
  }

  URI uri() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
  }

  /** The next {@code n} calls are refused whole with 400 ThrottlingException. */
  void throttleNextCalls(int n) {
    throttleNextCalls.set(n);
  }

  /**
   * From now on every call waits {@code millis} before answering 500 InternalException (a brownout:
   * the client's own timeouts end the call first when shorter); 0 ends it.
   */
  void hangAndFail(long millis) {
    hangMillis = millis;
  }

  /** Entries whose detail matches are refused (ThrottlingException) the first time they come. */
  void refuseFirstTry(Predicate<JsonNode> which) {
    refuseFirstTry = which;
  }

  synchronized List<Delivered> delivered() {
    return new ArrayList<>(delivered);
  }

  int calls() {
    return calls.get();
  }

  int maxEntriesPerCall() {
    return maxEntriesSeen;
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      calls.incrementAndGet();
      String target = exchange.getRequestHeaders().getFirst("X-Amz-Target");
      if (!"AWSEvents.PutEvents".equals(target)) {
        answer(exchange, 400, error("UnknownOperationException", "not emulated: " + target));
        return;
      }
      if (hangMillis > 0) {
        hang(hangMillis);
        answer(exchange, 500, error("InternalException", "the service is unavailable"));
        return;
      }
      if (throttleNextCalls.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
        answer(exchange, 400, error("ThrottlingException", "Rate exceeded"));
        return;
      }
      JsonNode request =
          Json.MAPPER.readTree(
              new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
      answer(exchange, 200, putEvents(request.path("Entries")));
    }
  }

  private synchronized String putEvents(JsonNode entries) throws IOException {
    maxEntriesSeen = Math.max(maxEntriesSeen, entries.size());
    if (entries.size() > 10) {
      return error("ValidationException", "more than 10 entries");
    }
    ObjectNode response = Json.object();
    ArrayNode results = response.putArray("Entries");
    int failed = 0;
    for (JsonNode e : entries) {
      JsonNode detail = Json.MAPPER.readTree(e.path("Detail").asText());
      String id = detail.path("id").asText();
      if (refuseFirstTry.test(detail) && refusedOnce.add(id)) {
        failed++;
        results
            .addObject()
            .put("ErrorCode", "ThrottlingException")
            .put("ErrorMessage", "Rate exceeded for " + id);
      } else {
        delivered.add(
            new Delivered(
                e.path("EventBusName").asText(),
                e.path("Source").asText(),
                e.path("DetailType").asText(),
                detail));
        results.addObject().put("EventId", UUID.randomUUID().toString());
      }
    }
    response.put("FailedEntryCount", failed);
    return Json.write(response);
  }

  private static void hang(long millis) throws IOException {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("endpoint stopped", e);
    }
  }

  private static String error(String type, String message) {
    return Json.write(Json.object().put("__type", type).put("message", message));
  }

  private static void answer(HttpExchange exchange, int status, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "application/x-amz-json-1.1");
    exchange.getResponseHeaders().set("x-amzn-RequestId", UUID.randomUUID().toString());
    exchange.sendResponseHeaders(status, bytes.length);
    exchange.getResponseBody().write(bytes);
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
