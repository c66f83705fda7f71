package io.ordertimeout.bench;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import io.ordertimeout.functions.orders.OrderApiHandler;
import io.ordertimeout.wiring.Components;
import io.ordertimeout.wiring.Priming;
import java.util.Map;

/**
 * The child JVM of {@link FirstRequestBench}: one order-created environment. It runs the function's
 * init ({@code Components.fromEnvironment()} and the handler, as the no-argument constructor does),
 * then, with {@code prime}, what SnapStart's beforeCheckpoint runs ({@link Priming#prime}, called
 * directly: a JVM without CRaC never checkpoints), and then times the first requests the
 * environment serves: a GET of an existing order, a placement, then the same two again (warm). It
 * prints one {@code first-request} line: init ms, and per request its status and ms.
 *
 * <p>Run only by FirstRequestBench: {@code java <Lambda-like flags> -cp <bench classpath>
 * io.ordertimeout.bench.FirstRequestChild <prime true|false> <existing order id> <new order id>}.
 */
public final class FirstRequestChild {
  static final String RESULT = "first-request";

  private FirstRequestChild() {}

  public static void main(String[] args) {
    boolean prime = Boolean.parseBoolean(args[0]);
    String existing = args[1];
    String placed = args[2];
    long t0 = System.nanoTime();
    int status = 0;
    try (Components app = Components.fromEnvironment()) {
      OrderApiHandler handler = new OrderApiHandler(app.orderApi());
      long initNanos = System.nanoTime() - t0;
      long primeNanos = 0;
      if (prime) {
        long p = System.nanoTime();
        Priming.prime(app);
        primeNanos = System.nanoTime() - p;
      }
      StringBuilder line =
          new StringBuilder(RESULT)
              .append(" prime=")
              .append(prime)
              .append(" initMs=")
              .append(initNanos / 1_000_000)
              .append(" primeMs=")
              .append(primeNanos / 1_000_000);
      String[][] requests = {
        {"get1", "GET /orders/{id}", existing, null},
        {"place1", "POST /orders", null, placeBody(placed + "a")},
        {"get2", "GET /orders/{id}", existing, null},
        {"place2", "POST /orders", null, placeBody(placed + "b")}
      };
      for (String[] r : requests) {
        long s = System.nanoTime();
        APIGatewayV2HTTPResponse response =
            handler.handleRequest(
                event(r[1], r[2], r[3]),
                FootprintChild.context("order-created", System.currentTimeMillis() + 29_000));
        long micros = (System.nanoTime() - s) / 1_000;
        line.append(' ')
            .append(r[0])
            .append('=')
            .append(response.getStatusCode())
            .append('/')
            .append(micros);
      }
      System.out.println(line);
      System.out.flush();
    } catch (RuntimeException | Error e) {
      e.printStackTrace();
      status = 2;
    }
    // Lettuce's and Hikari's threads would keep the JVM alive past the report
    System.exit(status);
  }

  static String placeBody(String orderId) {
    return "{\"orderId\":\""
        + orderId
        + "\",\"userId\":\"u-first\",\"amountFen\":1000,\"timeoutSeconds\":900,"
        + "\"items\":[{\"skuId\":\"sku-first\",\"quantity\":1}]}";
  }

  /** A payload 2.0 event as API Gateway passes it once the route matched. */
  static APIGatewayV2HTTPEvent event(String routeKey, String id, String body) {
    String method = routeKey.substring(0, routeKey.indexOf(' '));
    String template = routeKey.substring(routeKey.indexOf(' ') + 1);
    String path = id == null ? template : template.replace("{id}", id);
    return APIGatewayV2HTTPEvent.builder()
        .withVersion("2.0")
        .withRouteKey(routeKey)
        .withRawPath(path)
        .withHeaders(Map.of("content-type", "application/json"))
        .withPathParameters(id == null ? null : Map.of("id", id))
        .withBody(body)
        .withIsBase64Encoded(false)
        .withRequestContext(
            APIGatewayV2HTTPEvent.RequestContext.builder()
                .withRouteKey(routeKey)
                .withRequestId("first-request-" + System.nanoTime())
                .withStage("$default")
                .withHttp(
                    APIGatewayV2HTTPEvent.RequestContext.Http.builder()
                        .withMethod(method)
                        .withPath(path)
                        .withProtocol("HTTP/1.1")
                        .withSourceIp("127.0.0.1")
                        .build())
                .build())
        .build();
  }
}
