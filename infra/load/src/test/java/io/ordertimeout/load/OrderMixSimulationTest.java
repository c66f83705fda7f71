package io.ordertimeout.load;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The simulation, run by Gatling for real against a stub of the API and the simulator: the rate,
 * the mix and the order of each user's requests, and what a refusal stops.
 */
class OrderMixSimulationTest {

  @TempDir Path results;

  private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
  private final Set<String> placed = ConcurrentHashMap.newKeySet();
  private final Set<String> outOfOrder = ConcurrentHashMap.newKeySet();
  private HttpServer stub;
  private ExecutorService threads;

  @AfterEach
  void stop() {
    stub.stop(0);
    threads.shutdownNow();
  }

  @Test
  void usersArriveAtTheRateAndFollowTheMix() throws IOException {
    String url = start(() -> 201);
    new LoadSettings(url, url, "gtest", 50, 4, 5, 4, 10).toSystemProperties();
    Latencies latencies = run();

    // 50 users a second for 4 s: exactly 200 placements, whatever the answers' times
    assertThat(calls.get("place").get()).isEqualTo(200);
    assertThat(latencies.of("place").getTotalCount()).isEqualTo(200);
    assertThat(latencies.unexpected("place")).isZero();
    // 1 in 4 pays (prepay on the API, then pay on the simulator), 1 in 10 cancels: random, so
    // bounds
    int prepaid = calls.get("prepay").get();
    assertThat(prepaid).isBetween(25, 80);
    assertThat(calls.get("pay").get()).isEqualTo(prepaid);
    assertThat(OrderMixSimulation.PAID_AT_WECHAT).hasSize(prepaid).allMatch(placed::contains);
    assertThat(calls.get("cancel").get()).isBetween(5, 40);
    assertThat(prepaid + calls.get("cancel").get()).isLessThan(200);
    assertThat(outOfOrder).as("requests for an order never placed").isEmpty();
    assertThat(placed).allMatch(id -> id.matches("gtest\\d{10}"));
  }

  @Test
  void aRefusedPlacementIsCountedAndGoesNoFurther() throws IOException {
    String url = start(() -> 409);
    new LoadSettings(url, url, "grefused", 20, 2, 5, 1, 0).toSystemProperties();
    Latencies latencies = run();

    assertThat(calls.get("place").get()).isEqualTo(40);
    assertThat(latencies.unexpected("place")).isEqualTo(40);
    assertThat(calls).doesNotContainKeys("prepay", "pay", "cancel");
    assertThat(OrderMixSimulation.PAID_AT_WECHAT).isEmpty();
  }

  private Latencies run() {
    Latencies latencies = new Latencies();
    OrderMixSimulation.latencies = latencies;
    OrderMixSimulation.PAID_AT_WECHAT.clear();
    io.gatling.app.Gatling$.MODULE$.fromArgs(
        new String[] {"-s", OrderMixSimulation.class.getName(), "-rf", results.toString(), "-nr"});
    return latencies;
  }

  /** The API and the simulator on one port; placements answer {@code placeStatus}. */
  private String start(IntSupplier placeStatus) throws IOException {
    stub = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    threads = Executors.newFixedThreadPool(4);
    stub.setExecutor(threads);
    stub.createContext(
        "/",
        exchange -> {
          String path = exchange.getRequestURI().getPath();
          String body =
              new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
          String[] parts = path.split("/");
          String route;
          int status;
          if (path.equals("/orders")) {
            route = "place";
            status = placeStatus.getAsInt();
            int start = body.indexOf("\"orderId\":\"") + 11;
            placed.add(body.substring(start, body.indexOf('"', start)));
          } else {
            route = path.endsWith("/prepay") ? "prepay" : path.endsWith("/pay") ? "pay" : "cancel";
            status = route.equals("cancel") ? 202 : 200;
            if (!placed.contains(parts[2]) && !placed.contains(parts[3])) {
              outOfOrder.add(path);
            }
          }
          calls.computeIfAbsent(route, r -> new AtomicInteger()).incrementAndGet();
          exchange.sendResponseHeaders(status, -1);
          exchange.close();
        });
    stub.start();
    return "http://127.0.0.1:" + stub.getAddress().getPort();
  }
}
