package io.ordertimeout.metrics;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * The metrics of one execution environment: counters and latency histograms (HdrHistogram), read by
 * the CloudWatch EMF flush on AWS, the Prometheus endpoint of the local stack, and tests.
 *
 * <p>Recording is lock-free (LongAdder, HdrHistogram Recorder), so the close path pays nanoseconds
 * for it.
 */
public final class Metrics {
  /** Latencies are recorded in milliseconds up to one day with 3 significant digits. */
  private static final long MAX_MILLIS = 86_400_000L;

  private final Map<String, LongAdder> counters = new ConcurrentHashMap<>();
  private final Map<String, Recorder> recorders = new ConcurrentHashMap<>();
  private final Map<String, Histogram> totals = new ConcurrentHashMap<>();
  private final Map<String, Long> gauges = new ConcurrentHashMap<>();

  /**
   * Series with a Tenant dimension (close lag, timer backlog), keyed by tenant label then name. The
   * labels are bounded by {@link TenantLabels}: at most 20 tenants and "(other)".
   */
  private final TenantLabels tenants = new TenantLabels();

  private final Map<String, Map<String, Recorder>> tenantRecorders = new ConcurrentHashMap<>();
  private final Map<String, Map<String, Histogram>> tenantTotals = new ConcurrentHashMap<>();
  private final Map<String, Map<String, Long>> tenantGauges = new ConcurrentHashMap<>();

  /** Makes a per-tenant gauge update (zero the others, set the measured) one step for readers. */
  private final Object tenantGaugeLock = new Object();

  public void count(String name, long delta) {
    counters.computeIfAbsent(name, k -> new LongAdder()).add(delta);
  }

  public long counter(String name) {
    LongAdder adder = counters.get(name);
    return adder == null ? 0 : adder.sum();
  }

  /**
   * Records a latency; negative values (clock noise) are recorded as 0, larger than a day as a day.
   */
  public void recordMillis(String name, long millis) {
    recorders.computeIfAbsent(name, k -> new Recorder(MAX_MILLIS, 3)).recordValue(clamp(millis));
  }

  /**
   * Records a latency of one tenant: into the undimensioned series, as {@link #recordMillis(String,
   * long)} (the alarms read it), and into the tenant's series, under its {@link TenantLabels}
   * label.
   */
  public void recordMillis(String name, String tenantId, long millis) {
    recordMillis(name, millis);
    tenantRecorders
        .computeIfAbsent(tenants.label(tenantId), k -> new ConcurrentHashMap<>())
        .computeIfAbsent(name, k -> new Recorder(MAX_MILLIS, 3))
        .recordValue(clamp(millis));
  }

  private static long clamp(long millis) {
    return Math.max(0, Math.min(millis, MAX_MILLIS));
  }

  /** All counters, sorted by name. */
  public Map<String, Long> counters() {
    Map<String, Long> out = new TreeMap<>();
    counters.forEach((k, v) -> out.put(k, v.sum()));
    return out;
  }

  /**
   * The distribution of every latency since this registry was created. Each call folds what was
   * recorded since the previous call into the running totals.
   */
  public synchronized Map<String, Histogram> histograms() {
    recorders.forEach(
        (name, recorder) ->
            totals
                .computeIfAbsent(name, k -> new Histogram(MAX_MILLIS, 3))
                .add(recorder.getIntervalHistogram()));
    return new TreeMap<>(totals);
  }

  /** Sets a gauge (a level such as the timer backlog): the last value set is the one published. */
  public void gauge(String name, long value) {
    gauges.put(name, value);
  }

  /** All gauges with their last value, sorted by name. */
  public Map<String, Long> gauges() {
    return new TreeMap<>(gauges);
  }

  /**
   * Sets a level measured per tenant: the undimensioned gauge to the sum over every tenant, each
   * label's gauge to the sum of its tenants (all tenants past the first 20 add up under "(other)").
   * A label not in {@code byTenant} is set to 0: a tenant whose backlog drained must not keep
   * publishing its last level.
   */
  public void gaugeByTenant(String name, Map<String, Long> byTenant) {
    Map<String, Long> byLabel = new TreeMap<>();
    long total = 0;
    for (Map.Entry<String, Long> e : byTenant.entrySet()) {
      byLabel.merge(tenants.label(e.getKey()), e.getValue(), Long::sum);
      total += e.getValue();
    }
    synchronized (tenantGaugeLock) {
      tenantGauges.forEach((label, values) -> values.computeIfPresent(name, (k, v) -> 0L));
      byLabel.forEach(
          (label, value) ->
              tenantGauges.computeIfAbsent(label, k -> new ConcurrentHashMap<>()).put(name, value));
    }
    gauge(name, total);
  }

  /** Per tenant label, every tenant-dimensioned gauge with its last value; sorted. */
  public Map<String, Map<String, Long>> tenantGauges() {
    Map<String, Map<String, Long>> out = new TreeMap<>();
    synchronized (tenantGaugeLock) {
      tenantGauges.forEach((label, values) -> out.put(label, new TreeMap<>(values)));
    }
    return out;
  }

  /**
   * Per tenant label, the distribution of every tenant-dimensioned latency since this registry was
   * created (folded in as {@link #histograms()} does); sorted.
   */
  public synchronized Map<String, Map<String, Histogram>> tenantHistograms() {
    Map<String, Map<String, Histogram>> out = new TreeMap<>();
    tenantRecorders.forEach(
        (label, byName) -> {
          Map<String, Histogram> totals =
              tenantTotals.computeIfAbsent(label, k -> new ConcurrentHashMap<>());
          byName.forEach(
              (name, recorder) ->
                  totals
                      .computeIfAbsent(name, k -> new Histogram(MAX_MILLIS, 3))
                      .add(recorder.getIntervalHistogram()));
          out.put(label, new TreeMap<>(totals));
        });
    return out;
  }
}
