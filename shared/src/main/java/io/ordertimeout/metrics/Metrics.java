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
    recorders
        .computeIfAbsent(name, k -> new Recorder(MAX_MILLIS, 3))
        .recordValue(Math.max(0, Math.min(millis, MAX_MILLIS)));
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
}
