package io.ordertimeout.aws;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ordertimeout.metrics.MetricNames;
import io.ordertimeout.metrics.Metrics;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;

/**
 * Publishes a {@link Metrics} registry as CloudWatch Embedded Metric Format: JSON lines on stdout
 * that CloudWatch Logs turns into metrics, so no PutMetricData call, no permission and no latency.
 *
 * <p>Written here, not with aws-embedded-metrics: that library buffers single values per metric
 * (its 100-value arrays), brings its own sink threads and environment detection, and cannot take a
 * pre-aggregated HdrHistogram. This class is the spec's three rules: a {@code _aws} metadata
 * object, at most 100 metrics per directive and at most 100 values per metric array.
 *
 * <p>Each flush publishes what happened since the previous one: counter deltas, the gauges' last
 * values, and the latencies recorded since (as value arrays, from which CloudWatch computes p99).
 * Every metric goes out with two dimension sets: per function, and service-wide (no dimension),
 * which is what the alarms in template.yaml read.
 */
public final class EmfPublisher {
  /** EMF: a metric directive holds at most 100 metrics, and a value array at most 100 values. */
  static final int MAX_PER_DOCUMENT = 100;

  /**
   * Latency samples published per histogram per flush. Above it counts are scaled down (rounded up,
   * so rare tail values survive): 100 documents of ~800 bytes, 80 KB of log per flush at most.
   */
  static final int MAX_SAMPLES = 10_000;

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final Metrics metrics;
  private final Consumer<String> sink;
  private final LongSupplier clock;
  private final Map<String, Long> lastCounters = new HashMap<>();
  private final Map<String, Histogram> lastHistograms = new HashMap<>();

  public EmfPublisher(Metrics metrics, Consumer<String> sink, LongSupplier clock) {
    this.metrics = metrics;
    this.sink = sink;
    this.clock = clock;
  }

  /** Writes the EMF documents for everything since the last flush; returns how many. */
  public synchronized int flush(String functionName) {
    List<String> documents = documents(functionName, clock.getAsLong());
    documents.forEach(sink);
    return documents.size();
  }

  private List<String> documents(String functionName, long timestamp) {
    List<String> out = new ArrayList<>();
    List<Map.Entry<String, Long>> scalars = new ArrayList<>(scalars().entrySet());
    for (int i = 0; i < scalars.size(); i += MAX_PER_DOCUMENT) {
      ObjectNode doc = document(functionName, timestamp);
      for (var e : scalars.subList(i, Math.min(scalars.size(), i + MAX_PER_DOCUMENT))) {
        declare(doc, e.getKey(), "Count");
        doc.put(e.getKey(), e.getValue());
      }
      out.add(doc.toString());
    }
    histogramDeltas()
        .forEach((name, delta) -> out.addAll(histogram(functionName, timestamp, name, delta)));
    return out;
  }

  /** Counter deltas since the last flush, then every gauge's last value. */
  private Map<String, Long> scalars() {
    Map<String, Long> out = new TreeMap<>();
    metrics
        .counters()
        .forEach(
            (name, total) -> {
              Long previous = lastCounters.put(name, total);
              out.put(name, total - (previous == null ? 0 : previous));
            });
    out.putAll(metrics.gauges());
    return out;
  }

  private Map<String, Histogram> histogramDeltas() {
    Map<String, Histogram> out = new TreeMap<>();
    metrics
        .histograms()
        .forEach(
            (name, total) -> {
              Histogram delta = total.copy();
              Histogram previous = lastHistograms.put(name, total.copy());
              if (previous != null) {
                delta.subtract(previous);
              }
              if (delta.getTotalCount() > 0) {
                out.put(name, delta);
              }
            });
    return out;
  }

  private List<String> histogram(String functionName, long timestamp, String name, Histogram h) {
    List<Long> samples = samples(h);
    List<String> out = new ArrayList<>();
    for (int i = 0; i < samples.size(); i += MAX_PER_DOCUMENT) {
      ObjectNode doc = document(functionName, timestamp);
      declare(doc, name, "Milliseconds");
      ArrayNode values = doc.putArray(name);
      samples.subList(i, Math.min(samples.size(), i + MAX_PER_DOCUMENT)).forEach(values::add);
      out.add(doc.toString());
    }
    return out;
  }

  /** The recorded values, each repeated by its count (scaled to at most ~MAX_SAMPLES in all). */
  static List<Long> samples(Histogram h) {
    long total = h.getTotalCount();
    List<Long> out = new ArrayList<>();
    for (HistogramIterationValue v : h.recordedValues()) {
      long count = v.getCountAtValueIteratedTo();
      long scaled = total <= MAX_SAMPLES ? count : ceilDiv(count * MAX_SAMPLES, total);
      long value = h.medianEquivalentValue(v.getValueIteratedTo());
      for (long i = 0; i < scaled; i++) {
        out.add(value);
      }
    }
    return out;
  }

  private static long ceilDiv(long a, long b) {
    return (a + b - 1) / b;
  }

  private static ObjectNode document(String functionName, long timestamp) {
    ObjectNode doc = MAPPER.createObjectNode();
    ObjectNode directive =
        doc.putObject("_aws").put("Timestamp", timestamp).putArray("CloudWatchMetrics").addObject();
    directive.put("Namespace", MetricNames.NAMESPACE);
    ArrayNode dimensions = directive.putArray("Dimensions");
    dimensions.addArray().add("FunctionName");
    dimensions.addArray();
    directive.putArray("Metrics");
    doc.put("FunctionName", functionName);
    return doc;
  }

  private static void declare(ObjectNode doc, String name, String unit) {
    ArrayNode declared = (ArrayNode) doc.get("_aws").get("CloudWatchMetrics").get(0).get("Metrics");
    declared.addObject().put("Name", name).put("Unit", unit);
  }
}
