package io.ordertimeout.aws;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ordertimeout.metrics.MetricNames;
import io.ordertimeout.metrics.Metrics;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The periodic EMF flush of long-running invocations, at a scaled interval (200 ms for 10 s): the
 * documents of a long run are spread over it, and a run killed mid-way has flushed all but its last
 * interval.
 */
class EmfFlusherTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration INTERVAL = Duration.ofMillis(200);

  /** What a loaded 2-core machine may add to an interval (a flush takes milliseconds). */
  private static final long SLACK_MILLIS = 800;

  // a published counter: a name no alarm, graph or runbook reads goes out without EMF metadata
  private static final String PASSES = "orders_closed_timeout";

  private final Metrics metrics = new Metrics();
  private final List<String> lines = Collections.synchronizedList(new ArrayList<>());
  private final AtomicBoolean alive = new AtomicBoolean(true);

  /** stdout of a process: once it is killed, nothing it would write arrives. */
  private final Consumer<String> stdout =
      line -> {
        if (alive.get()) {
          lines.add(line);
        }
      };

  private final EmfPublisher publisher =
      new EmfPublisher(metrics, stdout, System::currentTimeMillis);

  @Test
  void theDocumentsOfALongRunAreSpreadOverItAndAddUpToWhatItRecorded() throws Exception {
    long start = System.currentTimeMillis();

    long recorded = Invocation.run(null, publisher, INTERVAL, () -> work(2_000, null));
    long end = System.currentTimeMillis();

    List<Long> stamps = stamps(PASSES);
    assertThat(sum(PASSES)).isEqualTo(recorded);
    // 2 s at 200 ms: ~10 periodic flushes and the final one
    assertThat(stamps).hasSizeGreaterThanOrEqualTo(6);
    assertThat(stamps.get(0) - start)
        .isBetween(INTERVAL.toMillis(), INTERVAL.toMillis() + SLACK_MILLIS);
    for (int i = 1; i < stamps.size() - 1; i++) {
      // never more often than the interval, and never much less often
      assertThat(stamps.get(i) - stamps.get(i - 1))
          .as("gap before flush %d of %s", i, stamps)
          .isBetween(INTERVAL.toMillis(), INTERVAL.toMillis() + SLACK_MILLIS);
    }
    assertThat(stamps.get(stamps.size() - 1)).isBetween(end - SLACK_MILLIS, end);
    for (String line : lines) {
      assertWithinCloudWatchLimits(line);
    }
  }

  @Test
  void aRunKilledMidwayHasFlushedAllButItsLastInterval() throws Exception {
    List<Long> recordedAt = Collections.synchronizedList(new ArrayList<>());
    long killedAt;
    EmfFlusher flusher = EmfFlusher.start(publisher, "otc-sweep", INTERVAL);
    try {
      work(1_500, recordedAt);
      // killed: the process ends here, its final flush never runs and nothing more is written
      alive.set(false);
      killedAt = System.currentTimeMillis();
    } finally {
      flusher.close(); // stops the thread a dead process would not have
    }

    long flushed = sum(PASSES);
    long lastFlush = stamps(PASSES).get(stamps(PASSES).size() - 1);
    long beforeLastFlush = recordedAt.stream().filter(t -> t < lastFlush).count();
    long beforeLastInterval =
        recordedAt.stream().filter(t -> t < killedAt - INTERVAL.toMillis() - SLACK_MILLIS).count();
    assertThat(killedAt - lastFlush).isLessThanOrEqualTo(INTERVAL.toMillis() + SLACK_MILLIS);
    assertThat(flushed).isBetween(beforeLastFlush, (long) recordedAt.size());
    assertThat(flushed).isGreaterThanOrEqualTo(beforeLastInterval);
    assertThat(beforeLastInterval).isPositive();
  }

  @Test
  void aFlushEveryTenSecondsKeepsASixthOfTheSampleCap() throws Exception {
    for (int i = 0; i < 30_000; i++) {
      metrics.recordMillis(MetricNames.CLOSE_LAG_MS, i % 500);
    }

    publisher.flush("f", EmfFlusher.INTERVAL.toMillis() / 60_000.0);

    long values = 0;
    for (String line : lines) {
      assertWithinCloudWatchLimits(line);
      values += JSON.readTree(line).get(MetricNames.CLOSE_LAG_MS).size();
    }
    // 10,000 a minute in all, as one flush a minute published (rounding up keeps rare values)
    assertThat(values).isBetween(1_667L, 1_667L + 500);
  }

  /** Records one pass every 10 ms for {@code millis}; answers how many. */
  private long work(long millis, List<Long> recordedAt) {
    long end = System.currentTimeMillis() + millis;
    long n = 0;
    while (System.currentTimeMillis() < end) {
      if (recordedAt != null) {
        recordedAt.add(System.currentTimeMillis());
      }
      metrics.count(PASSES, 1);
      metrics.recordMillis(MetricNames.CLOSE_LAG_MS, n % 300);
      n++;
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    return n;
  }

  private List<Long> stamps(String metric) throws Exception {
    List<Long> out = new ArrayList<>();
    for (String line : snapshot()) {
      JsonNode doc = JSON.readTree(line);
      if (doc.has(metric)) {
        out.add(doc.at("/_aws/Timestamp").asLong());
      }
    }
    return out;
  }

  private long sum(String metric) throws Exception {
    long sum = 0;
    for (String line : snapshot()) {
      JsonNode doc = JSON.readTree(line);
      if (doc.has(metric)) {
        sum += doc.get(metric).asLong();
      }
    }
    return sum;
  }

  private List<String> snapshot() {
    synchronized (lines) {
      return new ArrayList<>(lines);
    }
  }

  /** At most 100 metrics per directive, 100 values per array; far under a log event's 256 KB. */
  private static void assertWithinCloudWatchLimits(String line) throws Exception {
    assertThat(line.getBytes(StandardCharsets.UTF_8).length).isLessThan(256 * 1024);
    JsonNode doc = JSON.readTree(line);
    JsonNode declared = doc.at("/_aws/CloudWatchMetrics/0/Metrics");
    assertThat(declared.size()).isBetween(1, 100);
    for (JsonNode m : declared) {
      JsonNode value = doc.get(m.get("Name").asText());
      if (value.isArray()) {
        assertThat(value.size()).isBetween(1, 100);
      }
    }
  }
}
