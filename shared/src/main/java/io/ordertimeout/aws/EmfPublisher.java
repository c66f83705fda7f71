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
 * Only the names of {@link MetricNames#PUBLISHED} (what an alarm, the dashboard or an operator's
 * step reads) are declared as metrics, with one dimension set, service-wide (no dimension), which
 * is what the alarms and the dashboard read: each is one custom metric, not one per function plus
 * one. Every other value is written into the same lines as a plain field (the {@code FunctionName}
 * field says which function), for Logs Insights, and costs no metric; a document that declares
 * nothing carries no {@code _aws} metadata at all.
 *
 * <p>Close lag and timer backlog are also recorded per tenant ({@link Metrics#recordMillis(String,
 * String, long)}, {@link Metrics#gaugeByTenant}): those go out in documents of their own, with the
 * one dimension set {@code [Tenant]} (at most 20 tenants and "(other)" per environment,
 * metrics.TenantLabels). Those documents do not declare the empty set, so the service-wide series
 * the alarms read counts each value once, from the undimensioned documents.
 */
public final class EmfPublisher {
  /** EMF: a metric directive holds at most 100 metrics, and a value array at most 100 values. */
  static final int MAX_PER_DOCUMENT = 100;

  /**
   * Latency samples published per histogram per flush. Above it counts are scaled down (rounded up,
   * so rare tail values survive): 100 documents of ~800 bytes, 80 KB of log per flush at most.
   */
  static final int MAX_SAMPLES = 10_000;

  /**
   * The same per tenant label and histogram: up to 21 labels x 10 documents, ~170 KB of log per
   * flush at most on top of the undimensioned series. 1,000 samples keep a p99 to within a sample.
   */
  static final int MAX_TENANT_SAMPLES = 1_000;

  /**
   * The least a shortened cap ({@link #flush(String, double)}) keeps: one document's worth (100
   * values); a 10 s flush keeps 1,667 of {@link #MAX_SAMPLES} and 167 of {@link
   * #MAX_TENANT_SAMPLES}, six of them a minute as many as one flush a minute kept.
   */
  static final int MIN_SAMPLES = 100;

  /** The dimension of the per-tenant series. */
  static final String TENANT = "Tenant";

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final Metrics metrics;
  private final Consumer<String> sink;
  private final LongSupplier clock;
  private final Map<String, Long> lastCounters = new HashMap<>();
  private final Map<String, Histogram> lastHistograms = new HashMap<>();
  private final Map<String, Map<String, Histogram>> lastTenantHistograms = new HashMap<>();

  public EmfPublisher(Metrics metrics, Consumer<String> sink, LongSupplier clock) {
    this.metrics = metrics;
    this.sink = sink;
    this.clock = clock;
  }

  /** Writes the EMF documents for everything since the last flush; returns how many. */
  public int flush(String functionName) {
    return flush(functionName, 1.0);
  }

  /**
   * As {@link #flush(String)} for a flush that covers {@code shareOfMinute} of a minute (a periodic
   * flush every 10 s: 1/6): the latency sample caps are cut to that share (at least {@link
   * #MIN_SAMPLES}), so flushing six times a minute writes no more log than flushing once did.
   */
  public synchronized int flush(String functionName, double shareOfMinute) {
    double share = Math.max(0.0, Math.min(1.0, shareOfMinute));
    List<String> documents =
        documents(
            functionName,
            clock.getAsLong(),
            capped(MAX_SAMPLES, share),
            capped(MAX_TENANT_SAMPLES, share));
    documents.forEach(sink);
    return documents.size();
  }

  private static int capped(int cap, double share) {
    return Math.max(MIN_SAMPLES, (int) Math.ceil(cap * share));
  }

  private List<String> documents(
      String functionName, long timestamp, int sampleCap, int tenantSampleCap) {
    List<String> out = new ArrayList<>();
    List<Map.Entry<String, Long>> scalars = new ArrayList<>(scalars().entrySet());
    for (int i = 0; i < scalars.size(); i += MAX_PER_DOCUMENT) {
      ObjectNode doc = document(functionName, timestamp);
      for (var e : scalars.subList(i, Math.min(scalars.size(), i + MAX_PER_DOCUMENT))) {
        declare(doc, e.getKey(), "Count");
        doc.put(e.getKey(), e.getValue());
      }
      out.add(finish(doc));
    }
    histogramDeltas()
        .forEach(
            (name, delta) ->
                out.addAll(histogram(functionName, timestamp, null, name, delta, sampleCap)));
    metrics
        .tenantGauges()
        .forEach(
            (tenant, gauges) -> {
              ObjectNode doc = document(functionName, timestamp, tenant);
              // a handful of tenant gauges (the backlog), far under the 100 a directive holds
              gauges.forEach(
                  (name, value) -> {
                    declare(doc, name, "Count");
                    doc.put(name, value);
                  });
              out.add(finish(doc));
            });
    metrics
        .tenantHistograms()
        .forEach(
            (tenant, byName) ->
                byName.forEach(
                    (name, total) -> {
                      Histogram delta =
                          delta(
                              lastTenantHistograms.computeIfAbsent(tenant, k -> new HashMap<>()),
                              name,
                              total);
                      if (delta.getTotalCount() > 0) {
                        out.addAll(
                            histogram(
                                functionName, timestamp, tenant, name, delta, tenantSampleCap));
                      }
                    }));
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
              Histogram delta = delta(lastHistograms, name, total);
              if (delta.getTotalCount() > 0) {
                out.put(name, delta);
              }
            });
    return out;
  }

  /** What {@code total} holds beyond the copy kept at the last flush; keeps a copy of it. */
  private static Histogram delta(Map<String, Histogram> last, String name, Histogram total) {
    Histogram delta = total.copy();
    Histogram previous = last.put(name, total.copy());
    if (previous != null) {
      delta.subtract(previous);
    }
    return delta;
  }

  private List<String> histogram(
      String functionName, long timestamp, String tenant, String name, Histogram h, int cap) {
    List<Long> samples = samples(h, cap);
    List<String> out = new ArrayList<>();
    for (int i = 0; i < samples.size(); i += MAX_PER_DOCUMENT) {
      ObjectNode doc = document(functionName, timestamp, tenant);
      declare(doc, name, "Milliseconds");
      ArrayNode values = doc.putArray(name);
      samples.subList(i, Math.min(samples.size(), i + MAX_PER_DOCUMENT)).forEach(values::add);
      out.add(finish(doc));
    }
    return out;
  }

  /** The recorded values, each repeated by its count (scaled to at most ~MAX_SAMPLES in all). */
  static List<Long> samples(Histogram h) {
    return samples(h, MAX_SAMPLES);
  }

  /** The recorded values, each repeated by its count (scaled to at most ~{@code cap} in all). */
  static List<Long> samples(Histogram h, int cap) {
    long total = h.getTotalCount();
    List<Long> out = new ArrayList<>();
    for (HistogramIterationValue v : h.recordedValues()) {
      long count = v.getCountAtValueIteratedTo();
      long scaled = total <= cap ? count : ceilDiv(count * cap, total);
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
    return document(functionName, timestamp, null);
  }

  /**
   * A document's metadata: {@code tenant} null gives the service-wide set (no dimension), a tenant
   * label the {@code [Tenant]} set alone.
   */
  private static ObjectNode document(String functionName, long timestamp, String tenant) {
    ObjectNode doc = MAPPER.createObjectNode();
    ObjectNode directive =
        doc.putObject("_aws").put("Timestamp", timestamp).putArray("CloudWatchMetrics").addObject();
    directive.put("Namespace", MetricNames.NAMESPACE);
    ArrayNode dimensions = directive.putArray("Dimensions");
    if (tenant == null) {
      dimensions.addArray();
    } else {
      dimensions.addArray().add(TENANT);
      doc.put(TENANT, tenant);
    }
    directive.putArray("Metrics");
    doc.put("FunctionName", functionName);
    return doc;
  }

  /** The document's line; without the EMF metadata when it declares no metric. */
  private static String finish(ObjectNode doc) {
    if (doc.get("_aws").get("CloudWatchMetrics").get(0).get("Metrics").isEmpty()) {
      doc.remove("_aws");
    }
    return doc.toString();
  }

  /** Declares {@code name} as a metric of the document if it is one of the published names. */
  private static void declare(ObjectNode doc, String name, String unit) {
    if (!MetricNames.PUBLISHED.contains(name)) {
      return;
    }
    ArrayNode declared = (ArrayNode) doc.get("_aws").get("CloudWatchMetrics").get(0).get("Metrics");
    declared.addObject().put("Name", name).put("Unit", unit);
  }
}
