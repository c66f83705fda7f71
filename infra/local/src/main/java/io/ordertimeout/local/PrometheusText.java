package io.ordertimeout.local;

import io.ordertimeout.metrics.Metrics;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.HdrHistogram.Histogram;

/**
 * The shared {@link Metrics} registry in Prometheus text exposition format 0.0.4, under the metric
 * names that go to CloudWatch prefixed with {@code otc_}: counters as {@code otc_<name>_total},
 * gauges (the timer backlog) as {@code otc_<name>}, latency histograms as summaries with quantiles
 * 0.5/0.9/0.99/0.999, {@code _sum}, {@code _count}, and a {@code _max} gauge.
 *
 * <p>The local stack keeps one registry per wiring (the API's, and one per scheduled function, as
 * each Lambda function has its own): they are shown as one, counters summed and histograms merged;
 * a gauge is sampled by one function (the sweep the timer backlog, the relay the stream lag), so
 * where two registries hold it the larger value is shown.
 */
final class PrometheusText {
  private static final double[] QUANTILES = {0.5, 0.9, 0.99, 0.999};

  private PrometheusText() {}

  static String render(Metrics metrics) {
    return render(List.of(metrics));
  }

  static String render(List<Metrics> registries) {
    Map<String, Long> counters = new TreeMap<>();
    Map<String, Long> gauges = new TreeMap<>();
    Map<String, Histogram> histograms = new TreeMap<>();
    for (Metrics m : registries) {
      m.counters().forEach((k, v) -> counters.merge(k, v, Long::sum));
      m.gauges().forEach((k, v) -> gauges.merge(k, v, Math::max));
      m.histograms()
          .forEach(
              (k, v) -> {
                Histogram merged = histograms.computeIfAbsent(k, x -> empty(v));
                merged.add(v);
              });
    }
    StringBuilder out = new StringBuilder();
    for (Map.Entry<String, Long> c : counters.entrySet()) {
      String name = "otc_" + sanitize(c.getKey()) + "_total";
      out.append("# TYPE ").append(name).append(" counter\n");
      out.append(name).append(' ').append(c.getValue()).append('\n');
    }
    for (Map.Entry<String, Long> g : gauges.entrySet()) {
      String name = "otc_" + sanitize(g.getKey());
      out.append("# TYPE ").append(name).append(" gauge\n");
      out.append(name).append(' ').append(g.getValue()).append('\n');
    }
    for (Map.Entry<String, Histogram> h : histograms.entrySet()) {
      summary(out, "otc_" + sanitize(h.getKey()), h.getValue());
    }
    return out.toString();
  }

  /** An empty histogram with {@code like}'s range and precision, to merge copies into. */
  private static Histogram empty(Histogram like) {
    return new Histogram(like.getHighestTrackableValue(), like.getNumberOfSignificantValueDigits());
  }

  private static void summary(StringBuilder out, String name, Histogram h) {
    out.append("# TYPE ").append(name).append(" summary\n");
    for (double q : QUANTILES) {
      long value = h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(q * 100);
      out.append(name).append("{quantile=\"").append(q).append("\"} ").append(value).append('\n');
    }
    out.append(name).append("_sum ").append(format(h.getMean() * h.getTotalCount())).append('\n');
    out.append(name).append("_count ").append(h.getTotalCount()).append('\n');
    out.append("# TYPE ").append(name).append("_max gauge\n");
    out.append(name).append("_max ").append(h.getTotalCount() == 0 ? 0 : h.getMaxValue());
    out.append('\n');
  }

  static String sanitize(String name) {
    String s = name.replaceAll("[^a-zA-Z0-9_]", "_");
    return Character.isDigit(s.charAt(0)) ? "_" + s : s;
  }

  private static String format(double v) {
    return String.format(Locale.ROOT, "%.1f", v);
  }
}
