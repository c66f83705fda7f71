package io.ordertimeout.aws;

import static org.assertj.core.api.Assertions.assertThat;

import com.amazonaws.services.lambda.runtime.Context;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ordertimeout.metrics.MetricNames;
import io.ordertimeout.metrics.Metrics;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * A scheduled function's metrics reach CloudWatch while it runs, not only when it ends: a 12 s run
 * that is killed before its end (its last lines never written, as at a Lambda timeout) has still
 * published its first 10 s. At the real 10 s interval, through the handler base every scheduled
 * function extends.
 */
class ScheduledHandlerMetricsTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Metrics metrics = new Metrics();
  private final List<String> lines = Collections.synchronizedList(new ArrayList<>());
  private final AtomicBoolean alive = new AtomicBoolean(true);
  private final List<Long> recordedAt = Collections.synchronizedList(new ArrayList<>());

  /** Records a pass every 50 ms for 12 s; "killed" after 11.5 s: stdout writes nothing more. */
  private final class LongLoop extends ScheduledHandler {
    LongLoop() {
      super(metrics);
    }

    @Override
    protected String handle(Map<String, Object> event, Context context) {
      long start = System.currentTimeMillis();
      while (System.currentTimeMillis() - start < 12_000) {
        if (System.currentTimeMillis() - start > 11_500) {
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

  @Test
  void aRunKilledBeforeItsEndHasPublishedItsFirstTenSeconds() throws Exception {
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
    long firstTenSeconds = recordedAt.stream().filter(t -> t < start + 9_500).count();
    assertThat(stamps).as("flushes before the kill").isNotEmpty();
    assertThat(stamps.get(0) - start).isBetween(9_500L, 11_500L);
    assertThat(flushed).isGreaterThanOrEqualTo(firstTenSeconds).isLessThan(recordedAt.size());
  }
}
