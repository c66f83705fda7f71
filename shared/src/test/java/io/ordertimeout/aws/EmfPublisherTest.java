package io.ordertimeout.aws;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ordertimeout.metrics.MetricNames;
import io.ordertimeout.metrics.Metrics;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.Test;

class EmfPublisherTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final long NOW = 1_796_000_000_000L;

  private final Metrics metrics = new Metrics();
  private final List<String> lines = new ArrayList<>();
  private final EmfPublisher publisher = new EmfPublisher(metrics, lines::add, () -> NOW);

  @Test
  void documentFollowsTheEmbeddedMetricFormat() throws Exception {
    metrics.count(MetricNames.PAID_AFTER_CLOSE, 2);
    metrics.gauge(MetricNames.TIMER_BACKLOG, 42);

    assertThat(publisher.flush("otc-sweep")).isOne();

    JsonNode doc = JSON.readTree(lines.get(0));
    JsonNode directive = doc.at("/_aws/CloudWatchMetrics/0");
    assertThat(doc.at("/_aws/Timestamp").asLong()).isEqualTo(NOW);
    assertThat(directive.get("Namespace").asText()).isEqualTo("OrderTimeout");
    // service-wide only: the alarms and the dashboard read that series, one metric per name
    assertThat(directive.get("Dimensions").toString()).isEqualTo("[[]]");
    assertThat(names(directive)).containsExactly("paid_after_close", "timer_backlog");
    assertThat(doc.get("FunctionName").asText()).isEqualTo("otc-sweep");
    assertThat(doc.get("paid_after_close").asLong()).isEqualTo(2);
    assertThat(doc.get("timer_backlog").asLong()).isEqualTo(42);
  }

  @Test
  void namesNoAlarmDashboardOrRunbookReadsAreLogFieldsNotMetrics() throws Exception {
    metrics.count(MetricNames.PAID_AFTER_CLOSE, 1);
    metrics.count("sweep_shard_errors", 3);
    metrics.recordMillis("compensation_duration_ms", 40);
    metrics.count("stream_acked", 9);

    publisher.flush("otc-sweep");

    // counters and gauges share one document: the published one declared, the others plain fields
    JsonNode scalars = JSON.readTree(lines.get(0));
    assertThat(names(scalars.at("/_aws/CloudWatchMetrics/0"))).containsExactly("paid_after_close");
    assertThat(scalars.get("sweep_shard_errors").asLong()).isEqualTo(3);
    assertThat(scalars.get("stream_acked").asLong()).isEqualTo(9);
    // a document that declares nothing is a plain log line: no EMF metadata, no metric
    JsonNode latency = JSON.readTree(lines.get(1));
    assertThat(latency.has("_aws")).isFalse();
    assertThat(longs(latency.get("compensation_duration_ms"))).containsExactly(40L);
    assertThat(latency.get("FunctionName").asText()).isEqualTo("otc-sweep");
    assertThat(lines).hasSize(2);
  }

  @Test
  void countersPublishTheirDeltaSinceTheLastFlush() throws Exception {
    metrics.count(MetricNames.DEAD_LETTERS, 3);
    publisher.flush("f");
    metrics.count(MetricNames.DEAD_LETTERS, 4);
    publisher.flush("f");
    publisher.flush("f");

    assertThat(lines).hasSize(3);
    assertThat(JSON.readTree(lines.get(0)).get("dead_letters").asLong()).isEqualTo(3);
    assertThat(JSON.readTree(lines.get(1)).get("dead_letters").asLong()).isEqualTo(4);
    assertThat(JSON.readTree(lines.get(2)).get("dead_letters").asLong()).isZero();
  }

  @Test
  void latenciesAreValueArraysOfTheFlushIntervalOnly() throws Exception {
    metrics.recordMillis(MetricNames.CLOSE_LAG_MS, 12);
    metrics.recordMillis(MetricNames.CLOSE_LAG_MS, 12);
    metrics.recordMillis(MetricNames.CLOSE_LAG_MS, 180);
    publisher.flush("f");
    metrics.recordMillis(MetricNames.CLOSE_LAG_MS, 7);
    publisher.flush("f");
    publisher.flush("f");

    assertThat(lines).hasSize(2);
    JsonNode first = JSON.readTree(lines.get(0));
    assertThat(first.at("/_aws/CloudWatchMetrics/0/Metrics/0/Unit").asText())
        .isEqualTo("Milliseconds");
    assertThat(longs(first.get("close_lag_ms"))).containsExactly(12L, 12L, 180L);
    assertThat(longs(JSON.readTree(lines.get(1)).get("close_lag_ms"))).containsExactly(7L);
  }

  @Test
  void largeIntervalsSplitIntoDocumentsOfAtMostOneHundredValues() throws Exception {
    for (int i = 0; i < 250; i++) {
      metrics.recordMillis(MetricNames.CLOSE_LAG_MS, i);
    }
    publisher.flush("f");

    assertThat(lines).hasSize(3);
    List<Long> all = new ArrayList<>();
    for (String line : lines) {
      JsonNode values = JSON.readTree(line).get("close_lag_ms");
      assertThat(values.size()).isLessThanOrEqualTo(100);
      all.addAll(longs(values));
    }
    assertThat(all).hasSize(250).contains(0L, 100L, 249L);
  }

  @Test
  void moreThanTheSampleCapIsScaledKeepingTheTail() throws Exception {
    for (int i = 0; i < 50_000; i++) {
      metrics.recordMillis(MetricNames.CLOSE_LAG_MS, 20);
    }
    metrics.recordMillis(MetricNames.CLOSE_LAG_MS, 900);
    publisher.flush("f");

    List<Long> all = new ArrayList<>();
    for (String line : lines) {
      all.addAll(longs(JSON.readTree(line).get("close_lag_ms")));
    }
    assertThat(all.size()).isBetween(EmfPublisher.MAX_SAMPLES, EmfPublisher.MAX_SAMPLES + 1);
    assertThat(all).contains(900L);
    assertThat(lines.size()).isLessThanOrEqualTo(EmfPublisher.MAX_SAMPLES / 100 + 1);
  }

  @Test
  void moreThanOneHundredValuesSplitIntoDocumentsOfAtMostOneHundred() throws Exception {
    metrics.count(MetricNames.DEAD_LETTERS, 1);
    for (int i = 0; i < 130; i++) {
      metrics.count("counter_" + i, i);
    }
    publisher.flush("f");

    assertThat(lines).hasSize(2);
    JsonNode first = JSON.readTree(lines.get(0));
    JsonNode second = JSON.readTree(lines.get(1));
    assertThat(valueFields(first) + valueFields(second)).isEqualTo(131);
    assertThat(valueFields(first)).isEqualTo(100);
    // the one published name is declared where it went; the rest are plain fields
    JsonNode declaring = first.has("dead_letters") ? first : second;
    assertThat(names(declaring.at("/_aws/CloudWatchMetrics/0"))).containsExactly("dead_letters");
    assertThat((first.has("dead_letters") ? second : first).has("_aws")).isFalse();
  }

  private static int valueFields(JsonNode doc) {
    int n = 0;
    for (var it = doc.fieldNames(); it.hasNext(); ) {
      String f = it.next();
      if (!f.equals("_aws") && !f.equals("FunctionName")) {
        n++;
      }
    }
    return n;
  }

  @Test
  void nothingRecordedWritesNothing() {
    assertThat(publisher.flush("f")).isZero();
    assertThat(lines).isEmpty();
  }

  private static List<String> names(JsonNode directive) {
    return StreamSupport.stream(directive.get("Metrics").spliterator(), false)
        .map(m -> m.get("Name").asText())
        .toList();
  }

  private static List<Long> longs(JsonNode array) {
    return StreamSupport.stream(array.spliterator(), false).map(JsonNode::asLong).toList();
  }
}
