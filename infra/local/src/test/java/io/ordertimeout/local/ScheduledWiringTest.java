package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.ordertimeout.metrics.MetricNames;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.wiring.Components;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * As on AWS, a function that only runs on a schedule (sweep, stream consumer, compensation) has a
 * wiring of its own in the local stack: its own DB pool and Redis connection, so its round trips do
 * not queue behind the API's. An order placed over HTTP is closed by the sweep's wiring, and {@code
 * GET /metrics} still shows that close's lag; the registries are merged for it.
 */
class ScheduledWiringTest {
  private static LocalStack stack;
  private final HttpClient http = HttpClient.newHttpClient();

  @BeforeAll
  static void start() {
    stack =
        LocalStack.start(
            new LocalStack.Options(Main.templatePath(), "127.0.0.1", 0, 1.0), System.getenv());
  }

  @AfterAll
  static void stop() {
    stack.close();
  }

  @Test
  void scheduledFunctionsHaveTheirOwnPoolAndRedisConnectionTheApiFunctionsShareOne() {
    Components api = stack.app();
    Components sweep = stack.wiringOf("TimeoutSweepFunction");
    Components consumer = stack.wiringOf("StreamConsumerFunction");

    assertThat(stack.wiringOf("OrderCreatedFunction")).isSameAs(api);
    assertThat(stack.wiringOf("PaymentNotifyFunction")).isSameAs(api);
    assertThat(sweep).isNotSameAs(api).isNotSameAs(consumer);
    assertThat(sweep.dataSource()).isNotSameAs(api.dataSource());
    assertThat(sweep.redis()).isNotSameAs(api.redis());
    assertThat(consumer.dataSource()).isNotSameAs(api.dataSource());
    // the same schema and key prefix: one system, several environments
    assertThat(sweep.config().mysqlUrl()).isEqualTo(api.config().mysqlUrl());
    assertThat(sweep.config().keyPrefix()).isEqualTo(api.config().keyPrefix());
  }

  @Test
  void anOrderPlacedOverHttpIsClosedByTheSweepsWiringAndMetricsShowsItsLag() throws Exception {
    String orderId = place();

    await()
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(100))
        .until(() -> "CLOSED TIMEOUT".equals(row(orderId)));

    Metrics sweep = stack.wiringOf("TimeoutSweepFunction").metrics();
    // recorded by the closer after its commit: the row can be read CLOSED a moment before
    await()
        .atMost(Duration.ofSeconds(5))
        .pollInterval(Duration.ofMillis(10))
        .untilAsserted(() -> assertThat(sweep.histograms()).containsKey(MetricNames.CLOSE_LAG_MS));
    assertThat(stack.app().metrics().histograms()).doesNotContainKey(MetricNames.CLOSE_LAG_MS);
    String metrics =
        http.send(
                HttpRequest.newBuilder(URI.create(stack.apiUrl() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString())
            .body();
    assertThat(metrics)
        .contains("otc_close_lag_ms_count 1\n")
        .contains("otc_orders_placed_total 1\n");
  }

  @Test
  void prometheusTextSumsCountersMergesHistogramsAndShowsTheLargerGauge() {
    Metrics a = new Metrics();
    Metrics b = new Metrics();
    a.count("orders_placed", 3);
    b.count("orders_placed", 4);
    b.count("orders_closed_timeout", 2);
    a.recordMillis("close_lag_ms", 10);
    b.recordMillis("close_lag_ms", 1_000);
    a.gauge("timer_backlog", 7);
    b.gauge("timer_backlog", 5);

    String text = PrometheusText.render(List.of(a, b));

    assertThat(text)
        .contains("otc_orders_placed_total 7\n")
        .contains("otc_orders_closed_timeout_total 2\n")
        .contains("otc_close_lag_ms_count 2\n")
        .contains("otc_close_lag_ms_max 1000\n")
        .contains("otc_close_lag_ms{quantile=\"0.5\"} 10\n")
        .contains("otc_timer_backlog 7\n");
  }

  private String place() throws Exception {
    byte[] random = new byte[4];
    ThreadLocalRandom.current().nextBytes(random);
    String orderId = "sw-" + HexFormat.of().formatHex(random);
    String order =
        "{\"orderId\":\""
            + orderId
            + "\",\"userId\":\""
            + DemoCatalog.user(5)
            + "\",\"items\":[{\"skuId\":\""
            + DemoCatalog.sku(5)
            + "\",\"quantity\":1}],\"amountFen\":1000,\"timeoutSeconds\":1}";
    HttpResponse<String> placed =
        http.send(
            HttpRequest.newBuilder(URI.create(stack.apiUrl() + "/orders"))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(order))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(placed.statusCode()).as(placed.body()).isEqualTo(201);
    return orderId;
  }

  private static String row(String orderId) throws Exception {
    try (Connection c = stack.app().dataSource().getConnection();
        PreparedStatement s =
            c.prepareStatement("SELECT status, close_reason FROM orders WHERE order_id = ?")) {
      s.setString(1, orderId);
      try (ResultSet rs = s.executeQuery()) {
        return rs.next() ? rs.getString(1) + " " + rs.getString(2) : null;
      }
    }
  }
}
