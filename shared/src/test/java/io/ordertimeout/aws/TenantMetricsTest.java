package io.ordertimeout.aws;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.PlaceOrderCommand;
import io.ordertimeout.metrics.MetricNames;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.metrics.TenantLabels;
import io.ordertimeout.redis.TimerBacklog;
import io.ordertimeout.sweep.SweepStats;
import io.ordertimeout.testing.Await;
import io.ordertimeout.testing.TestStack;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.Test;

/**
 * Close lag and timer backlog carry a Tenant dimension, for at most {@link
 * TenantLabels#MAX_TENANTS} tenants per environment (the rest under "(other)"), beside the
 * undimensioned series that template.yaml's alarms read.
 */
class TenantMetricsTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final long NOW = 1_796_000_000_000L;

  private final Metrics metrics = new Metrics();
  private final List<String> lines = new ArrayList<>();
  private final EmfPublisher publisher = new EmfPublisher(metrics, lines::add, () -> NOW);

  @Test
  void closeLagAndBacklogOfTwoTenantsCarryTheTenantDimensionBesideTheAggregate() throws Exception {
    metrics.recordMillis(MetricNames.CLOSE_LAG_MS, "shop-a", 12);
    metrics.recordMillis(MetricNames.CLOSE_LAG_MS, "shop-a", 14);
    metrics.recordMillis(MetricNames.CLOSE_LAG_MS, "shop-b", 900);
    metrics.gaugeByTenant(MetricNames.TIMER_BACKLOG, Map.of("shop-a", 5_000L, "shop-b", 3L));

    publisher.flush("otc-sweep");

    // the series the alarms read: no dimension, every tenant's values
    JsonNode aggregate = only(MetricNames.CLOSE_LAG_MS, null);
    assertThat(dimensions(aggregate)).isEqualTo("[[]]");
    assertThat(longs(aggregate.get(MetricNames.CLOSE_LAG_MS))).containsExactly(12L, 14L, 900L);
    assertThat(only(MetricNames.TIMER_BACKLOG, null).get(MetricNames.TIMER_BACKLOG).asLong())
        .isEqualTo(5_003);
    // each tenant's own, with the Tenant dimension alone
    JsonNode a = only(MetricNames.CLOSE_LAG_MS, "shop-a");
    assertThat(dimensions(a)).isEqualTo("[[\"Tenant\"]]");
    assertThat(longs(a.get(MetricNames.CLOSE_LAG_MS))).containsExactly(12L, 14L);
    assertThat(longs(only(MetricNames.CLOSE_LAG_MS, "shop-b").get(MetricNames.CLOSE_LAG_MS)))
        .containsExactly(900L);
    JsonNode backlogA = only(MetricNames.TIMER_BACKLOG, "shop-a");
    assertThat(dimensions(backlogA)).isEqualTo("[[\"Tenant\"]]");
    assertThat(backlogA.get(MetricNames.TIMER_BACKLOG).asLong()).isEqualTo(5_000);
    assertThat(only(MetricNames.TIMER_BACKLOG, "shop-b").get(MetricNames.TIMER_BACKLOG).asLong())
        .isEqualTo(3);
  }

  @Test
  void theTenantAfterTheFirstTwentyIsPublishedAsOther() throws Exception {
    for (int i = 0; i <= TenantLabels.MAX_TENANTS + 1; i++) {
      metrics.recordMillis(MetricNames.CLOSE_LAG_MS, String.format("t%02d", i), 100 + i);
    }
    // a tenant seen first keeps its own series when it comes back after the cap is reached
    metrics.recordMillis(MetricNames.CLOSE_LAG_MS, "t00", 7);

    publisher.flush("otc-sweep");

    Map<String, List<Long>> byTenant = new TreeMap<>();
    for (JsonNode doc : documents(MetricNames.CLOSE_LAG_MS)) {
      if (doc.has("Tenant")) {
        byTenant
            .computeIfAbsent(doc.get("Tenant").asText(), k -> new ArrayList<>())
            .addAll(longs(doc.get(MetricNames.CLOSE_LAG_MS)));
      }
    }
    assertThat(byTenant).hasSize(TenantLabels.MAX_TENANTS + 1);
    assertThat(byTenant).containsKeys("t00", "t19", TenantLabels.OTHER).doesNotContainKeys("t20");
    // tenants 21 and 22 (t20, t21) share the "(other)" series
    assertThat(byTenant.get(TenantLabels.OTHER)).containsExactly(120L, 121L);
    assertThat(byTenant.get("t00")).containsExactly(7L, 100L);
    assertThat(longs(only(MetricNames.CLOSE_LAG_MS, null).get(MetricNames.CLOSE_LAG_MS)))
        .hasSize(TenantLabels.MAX_TENANTS + 3);
  }

  @Test
  void aTenantWhoseBacklogDrainedPublishesZeroNotItsLastLevel() throws Exception {
    metrics.gaugeByTenant(MetricNames.TIMER_BACKLOG, Map.of("shop-a", 40L, "shop-b", 2L));
    publisher.flush("f");
    lines.clear();

    metrics.gaugeByTenant(MetricNames.TIMER_BACKLOG, Map.of("shop-b", 1L));
    publisher.flush("f");

    assertThat(only(MetricNames.TIMER_BACKLOG, "shop-a").get(MetricNames.TIMER_BACKLOG).asLong())
        .isZero();
    assertThat(only(MetricNames.TIMER_BACKLOG, "shop-b").get(MetricNames.TIMER_BACKLOG).asLong())
        .isOne();
    assertThat(only(MetricNames.TIMER_BACKLOG, null).get(MetricNames.TIMER_BACKLOG).asLong())
        .isOne();
  }

  /**
   * The alarms on close lag and backlog name no dimension: they read the series whose documents
   * declare the empty dimension set, which tenant-recorded values still reach.
   */
  @Test
  void theAlarmsOnCloseLagAndBacklogStillWatchTheUndimensionedSeries() throws Exception {
    String template = TemplateFiles.text(TemplateFiles.root());
    for (String alarm : List.of("CloseLagP99Alarm:", "TimerBacklogAlarm:")) {
      int at = template.indexOf("\n  " + alarm);
      int end = template.indexOf("\n  ", template.indexOf("AlarmActions", at));
      String block = template.substring(at, end);
      assertThat(block).as(alarm).contains("Namespace: OrderTimeout");
      assertThat(block).as(alarm).doesNotContain("Dimensions");
    }
    metrics.recordMillis(MetricNames.CLOSE_LAG_MS, "shop-a", 12);
    metrics.gaugeByTenant(MetricNames.TIMER_BACKLOG, Map.of("shop-a", 4L));
    publisher.flush("f");
    for (String name : List.of(MetricNames.CLOSE_LAG_MS, MetricNames.TIMER_BACKLOG)) {
      assertThat(dimensions(only(name, null))).as(name).contains("[]");
      assertThat(dimensions(only(name, "shop-a"))).as(name).doesNotContain("[]");
    }
  }

  /**
   * Through the real sweep on MariaDB and Redis: two tenants' orders closed by SweepJob (what the
   * timeout-sweep function runs), their backlog measured before, and one EMF flush.
   */
  @Test
  void theSweepPublishesEachTenantsCloseLagAndBacklog() throws Exception {
    try (TestStack stack = TestStack.create("tenant-metrics")) {
      for (String tenant : List.of("shop-a", "shop-b")) {
        stack.app().tenants().onboard(tenant);
        stack.update(
            "INSERT INTO stock (tenant_id, sku_id, available, total) VALUES (?, 'sku-1', 10, 10)",
            tenant);
      }
      place(stack, "shop-a", "wx0001", "wx0002", "wx0003");
      place(stack, "shop-b", "wx0001", "wx0002");
      var app = stack.app();
      EmfPublisher emf = new EmfPublisher(app.metrics(), lines::add, () -> NOW);
      // 5 s ahead: every order (due in 1 s) is backlog then
      TimerBacklog.record(
          app.metrics(),
          app.redis().sync(),
          app.timers(),
          app.tenants().all(),
          app.time().nowMillis() + 5_000);
      emf.flush("otc-sweep");

      assertThat(only(MetricNames.TIMER_BACKLOG, "shop-a").get(MetricNames.TIMER_BACKLOG).asLong())
          .isEqualTo(3);
      assertThat(only(MetricNames.TIMER_BACKLOG, "shop-b").get(MetricNames.TIMER_BACKLOG).asLong())
          .isEqualTo(2);
      assertThat(only(MetricNames.TIMER_BACKLOG, null).get(MetricNames.TIMER_BACKLOG).asLong())
          .isEqualTo(5);

      lines.clear();
      AtomicBoolean stop = new AtomicBoolean();
      ExecutorService thread = Executors.newSingleThreadExecutor();
      CompletableFuture<SweepStats> run =
          CompletableFuture.supplyAsync(
              () -> app.sweepJob().run(() -> stop.get() ? 0 : 60_000), thread);
      Await.reached(
          Await.await("5 orders closed", Duration.ofSeconds(30))
              .pollInterval(Duration.ofMillis(100)),
          () -> stack.count("SELECT COUNT(*) FROM orders WHERE status = 'CLOSED'") == 5);
      stop.set(true);
      assertThat(run.get().closed()).isEqualTo(5);
      thread.shutdown();
      emf.flush("otc-sweep");

      assertThat(longs(only(MetricNames.CLOSE_LAG_MS, "shop-a").get(MetricNames.CLOSE_LAG_MS)))
          .hasSize(3);
      assertThat(longs(only(MetricNames.CLOSE_LAG_MS, "shop-b").get(MetricNames.CLOSE_LAG_MS)))
          .hasSize(2);
      assertThat(longs(only(MetricNames.CLOSE_LAG_MS, null).get(MetricNames.CLOSE_LAG_MS)))
          .hasSize(5);
      // the run's end measured the backlog again: both drained
      assertThat(only(MetricNames.TIMER_BACKLOG, "shop-a").get(MetricNames.TIMER_BACKLOG).asLong())
          .isZero();
      assertThat(only(MetricNames.TIMER_BACKLOG, "shop-b").get(MetricNames.TIMER_BACKLOG).asLong())
          .isZero();
      stack.assertInvariants();
    }
  }

  private static void place(TestStack stack, String tenant, String... orderIds) {
    for (String id : orderIds) {
      stack
          .app()
          .placeOrders()
          .place(
              new PlaceOrderCommand(
                  id, tenant, "u1", List.of(new OrderItem("sku-1", 1)), null, 100, 1));
    }
  }

  /** The documents declaring {@code name}. */
  private List<JsonNode> documents(String name) throws IOException {
    List<JsonNode> out = new ArrayList<>();
    for (String line : lines) {
      JsonNode doc = JSON.readTree(line);
      for (JsonNode m : doc.at("/_aws/CloudWatchMetrics/0/Metrics")) {
        if (m.get("Name").asText().equals(name)) {
          out.add(doc);
        }
      }
    }
    return out;
  }

  /** The one document declaring {@code name} for {@code tenant} (null: without the dimension). */
  private JsonNode only(String name, String tenant) throws IOException {
    List<JsonNode> found =
        documents(name).stream()
            .filter(
                d -> tenant == null ? !d.has("Tenant") : tenant.equals(d.path("Tenant").asText()))
            .toList();
    assertThat(found).as(name + " for " + tenant).hasSize(1);
    return found.get(0);
  }

  private static String dimensions(JsonNode doc) {
    return doc.at("/_aws/CloudWatchMetrics/0/Dimensions").toString();
  }

  private static List<Long> longs(JsonNode array) {
    return StreamSupport.stream(array.spliterator(), false).map(JsonNode::asLong).toList();
  }
}
