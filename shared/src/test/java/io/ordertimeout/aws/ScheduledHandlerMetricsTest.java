package io.ordertimeout.aws;

import static org.assertj.core.api.Assertions.assertThat;

import com.amazonaws.services.lambda.runtime.Context;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ordertimeout.metrics.MetricNames;
import io.ordertimeout.metrics.Metrics;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * A scheduled function's metrics reach CloudWatch while it runs, not only when it ends: a run of
 * one interval and 2 s that is killed before its end (its last lines never written, as at a Lambda
 * timeout) has still published its first interval. Through the handler base every scheduled
 * function extends, at a 2 s interval instead of the functions' 10 s (the same slack around it as
 * at 10 s: 500 ms before, 1.5 s after); the functions' interval is checked on its own.
 */
// alone in its JVM while it runs (the fast tier runs classes in parallel): it captures the root
// logger's lines
@Isolated
class ScheduledHandlerMetricsTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Metrics metrics = new Metrics();
  private final List<String> lines = Collections.synchronizedList(new ArrayList<>());
  private final AtomicBoolean alive = new AtomicBoolean(true);
  private final List<Long> recordedAt = Collections.synchronizedList(new ArrayList<>());

  /** The flush interval of the run below (the functions': {@link EmfFlusher#INTERVAL}, 10 s). */
  private static final long INTERVAL_MILLIS = 2_000;

  /**
   * Records a pass every 50 ms for the interval and 2 s; "killed" 1.5 s after the interval: stdout
   * writes nothing more.
   */
  private final class LongLoop extends ScheduledHandler {
    LongLoop() {
      super(metrics, Duration.ofMillis(INTERVAL_MILLIS));
    }

    @Override
    protected String handle(Map<String, Object> event, Context context) {
      long start = System.currentTimeMillis();
      while (System.currentTimeMillis() - start < INTERVAL_MILLIS + 2_000) {
        if (System.currentTimeMillis() - start > INTERVAL_MILLIS + 1_500) {
          alive.set(false);
        }
        recordedAt.add(System.currentTimeMillis());
        metrics.count(MetricNames.DEAD_LETTERS, 1);
        try {
          Thread.sleep(50);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
      return "{}";
    }
  }

  /** A scheduled function of the product: the base's one-argument constructor. */
  private static final class Function extends ScheduledHandler {
    Function() {
      super(new Metrics());
    }

    @Override
    protected String handle(Map<String, Object> event, Context context) {
      return "{}";
    }
  }

  @Test
  void everyScheduledFunctionFlushesEveryTenSeconds() {
    assertThat(new Function().flushEvery())
        .isEqualTo(EmfFlusher.INTERVAL)
        .isEqualTo(Duration.ofSeconds(10));
  }

  @Tag("integration")
  @Test
  void aRunKilledBeforeItsEndHasPublishedItsFirstInterval() throws Exception {
    Invocation.publishTo(
        metrics,
        line -> {
          if (alive.get()) {
            lines.add(line);
          }
        });
    long start = System.currentTimeMillis();

    new LongLoop().handleRequest(Map.of(), null);

    long flushed = 0;
    List<Long> stamps = new ArrayList<>();
    for (String line : lines) {
      JsonNode doc = JSON.readTree(line);
      if (doc.has(MetricNames.DEAD_LETTERS)) {
        flushed += doc.get(MetricNames.DEAD_LETTERS).asLong();
        stamps.add(doc.at("/_aws/Timestamp").asLong());
      }
    }
    long firstInterval = recordedAt.stream().filter(t -> t < start + INTERVAL_MILLIS - 500).count();
    assertThat(stamps).as("flushes before the kill").isNotEmpty();
    assertThat(stamps.get(0) - start).isBetween(INTERVAL_MILLIS - 500, INTERVAL_MILLIS + 1_500);
    assertThat(flushed).isGreaterThanOrEqualTo(firstInterval).isLessThan(recordedAt.size());
  }
}
