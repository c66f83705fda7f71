package io.ordertimeout.load;

import io.ordertimeout.load.OpenLoopBench.Options;
import io.ordertimeout.load.OpenLoopBench.Step;
import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.HdrHistogram.Histogram;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/** The open-loop run's Markdown report and its plot. */
final class Report {

  private Report() {}

  static String markdown(
      Options o, Step first, Step steady, Capacity capacity, List<Step> table, List<Step> all) {
    StringBuilder md = new StringBuilder();
    md.append("Open loop: Gatling's open model (users injected at a fixed rate), ")
        .append(o.timeoutSeconds())
        .append(" s order timeout, 1 in ")
        .append(o.payEvery())
        .append(" paid, 1 in ")
        .append(o.cancelEvery())
        .append(
            " cancelled; latency in ms; stack CPU is µs per order of the step (JVM / MariaDB / Redis),"
                + " the step and the 15 s after it; load is the 1-minute load average before / after.\n\n");
    md.append(capacity.describe(o.sloMs())).append("\n\n");
    md.append(
        "| % of capacity | users/s | placement p50 / p99 / p99.9 / max | close lag p50 / p99 / p99.9 /"
            + " max | orders (paid, closed) | stack CPU µs per order (JVM / MariaDB / Redis) | check |"
            + " load |\n");
    md.append("|---:|---:|---|---|---|---|---|---|\n");
    for (Step s : table) {
      row(
          md,
          s.label().replace("% of capacity", ""),
          OpenLoopBench.fmt(s.rate()),
          percentiles(s.place()),
          percentiles(s.closeLag()),
          orders(s),
          s.cpu().perOrder(s.placed()),
          s.ok() ? "OK" : "FAILED",
          s.load());
    }
    md.append("\nEvery step, in order:\n\n");
    md.append(
        "| step | users/s | s | placement p50 / p99 / p99.9 / max | unexpected answers |"
            + " close lag p50 / p99 / p99.9 / max | orders (paid, closed) | stack CPU µs per order |"
            + " check | load |\n");
    md.append("|---|---:|---:|---|---:|---|---|---|---|---|\n");
    for (Step s : all) {
      row(
          md,
          s.label(),
          OpenLoopBench.fmt(s.rate()),
          Integer.toString(s.seconds()),
          percentiles(s.place()),
          Long.toString(s.placeUnexpected()),
          percentiles(s.closeLag()),
          orders(s),
          s.cpu().perOrder(s.placed()),
          s.ok() ? "OK" : "FAILED: " + String.join("; ", head(s.violations())),
          s.load());
    }
    md.append('\n');
    md.append(targets(o, first, steady, table));
    return md.toString();
  }

  private static void row(StringBuilder md, String... cells) {
    md.append("| ").append(String.join(" | ", cells)).append(" |\n");
  }

  /** The steps measured at a steady rate: the capacity search's and the fractions of it. */
  static boolean steadyState(String label) {
    return label.matches("search .+|[\\d.]+% of capacity");
  }

  private static String targets(Options o, Step first, Step steady, List<Step> table) {
    StringBuilder md = new StringBuilder("Targets:\n\n");
    table.stream()
        .filter(s -> s.label().startsWith("75%"))
        .findFirst()
        .ifPresent(
            s -> {
              long p99 = p(s.closeLag(), 99);
              md.append(
                  String.format(
                      Locale.ROOT,
                      "- close lag p99 at most 50 ms at 75%% of capacity: %s (%d ms at %s/s)%n",
                      p99 <= 50 ? "met" : "missed",
                      p99,
                      OpenLoopBench.fmt(s.rate())));
            });
    long firstLag = p(first.closeLag(), 99);
    long steadyLag = p(steady.closeLag(), 99);
    long firstPlace = p(first.place(), 99);
    long steadyPlace = p(steady.place(), 99);
    boolean met =
        firstLag <= 2 * Math.max(1, steadyLag) && firstPlace <= 2 * Math.max(1, steadyPlace);
    md.append(
        String.format(
            Locale.ROOT,
            "- the first minute after start no worse than twice the steady state (%s/s): %s"
                + " (placement p99 %d against %d ms, close lag p99 %d against %d ms)%n",
            OpenLoopBench.fmt(o.firstRate()),
            met ? "met" : "missed",
            firstPlace,
            steadyPlace,
            firstLag,
            steadyLag));
    return md.toString();
  }

  private static List<String> head(List<String> violations) {
    return violations.subList(0, Math.min(3, violations.size()));
  }

  private static String orders(Step s) {
    return s.placed() + " (" + s.paid() + ", " + s.closed() + ")";
  }

  static String percentiles(Histogram h) {
    if (h.getTotalCount() == 0) {
      return "-";
    }
    return String.format(
        Locale.ROOT,
        "%d / %d / %d / %d",
        h.getValueAtPercentile(50),
        h.getValueAtPercentile(99),
        h.getValueAtPercentile(99.9),
        h.getMaxValue());
  }

  private static long p(Histogram h, double percentile) {
    return h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(percentile);
  }

  /** One steady-state step's figures, at its arrival rate. */
  record Point(double rate, long placeP50, long placeP99, long lagP50, long lagP99) {

    static Point of(Step s) {
      return new Point(
          s.rate(), p(s.place(), 50), p(s.place(), 99), p(s.closeLag(), 50), p(s.closeLag(), 99));
    }
  }

  /**
   * The steady-state points of an {@code open-loop.md} ("Every step": the search steps and the
   * fractions of the capacity), to draw a run's plot again.
   */
  static List<Point> points(String markdown) {
    List<Point> points = new ArrayList<>();
    for (String line : markdown.split("\n")) {
      String[] cells = line.split("\\|");
      if (cells.length < 8) {
        continue;
      }
      String label = cells[1].trim();
      if (!steadyState(label)) {
        continue;
      }
      String[] place = cells[4].trim().split(" / ");
      String[] lag = cells[6].trim().split(" / ");
      if (place.length < 2 || lag.length < 2) {
        continue;
      }
      points.add(
          new Point(
              Double.parseDouble(cells[2].trim()),
              Long.parseLong(place[0]),
              Long.parseLong(place[1]),
              Long.parseLong(lag[0]),
              Long.parseLong(lag[1])));
    }
    return points;
  }

  /**
   * Placement and close-lag p50 and p99 against the arrival rate (every steady-state step: the
   * search and the fractions of the capacity), on a log scale from 1 ms to at least 1 s, with the
   * two targets drawn.
   */
  static void plot(Capacity capacity, List<Point> points, Path png) throws IOException {
    XYSeries placeP50 = new XYSeries("placement p50");
    XYSeries placeP99 = new XYSeries("placement p99");
    XYSeries lagP50 = new XYSeries("close lag p50");
    XYSeries lagP99 = new XYSeries("close lag p99");
    long highest = 1_000;
    for (Point pt : points) {
      // a log axis has no 0: a percentile under 1 ms is drawn at 1 ms
      placeP50.add(pt.rate(), Math.max(1, pt.placeP50()));
      placeP99.add(pt.rate(), Math.max(1, pt.placeP99()));
      lagP50.add(pt.rate(), Math.max(1, pt.lagP50()));
      lagP99.add(pt.rate(), Math.max(1, pt.lagP99()));
      highest = Math.max(highest, Math.max(pt.placeP99(), pt.lagP99()));
    }
    XYSeriesCollection data = new XYSeriesCollection();
    data.addSeries(placeP50);
    data.addSeries(placeP99);
    data.addSeries(lagP50);
    data.addSeries(lagP99);
    JFreeChart chart =
        ChartFactory.createXYLineChart(
            "Open loop: placement and close lag; capacity "
                + OpenLoopBench.fmt(capacity.rate())
                + " orders/s",
            "arrival rate (orders/s)",
            "ms",
            data,
            PlotOrientation.VERTICAL,
            true,
            false,
            false);
    XYPlot plot = chart.getXYPlot();
    LogAxis ms = new LogAxis("ms (log scale)");
    ms.setBase(10);
    ms.setSmallestValue(1);
    ms.setRange(1, highest * 1.5);
    ms.setNumberFormatOverride(new DecimalFormat("#,##0"));
    plot.setRangeAxis(ms);
    plot.setBackgroundPaint(Color.WHITE);
    plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
    plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
    XYLineAndShapeRenderer lines = new XYLineAndShapeRenderer(true, true);
    Color[] colors = {
      new Color(0x1f77b4), new Color(0x1f77b4), new Color(0xd62728), new Color(0xd62728)
    };
    for (int i = 0; i < colors.length; i++) {
      lines.setSeriesPaint(i, colors[i]);
      lines.setSeriesStroke(
          i,
          i % 2 == 0
              ? new BasicStroke(
                  1.5f, BasicStroke.CAP_ROUND, BasicStroke.JOIN_ROUND, 1f, new float[] {4f, 4f}, 0f)
              : new BasicStroke(2.5f));
    }
    plot.setRenderer(lines);
    ValueMarker slo = new ValueMarker(100, Color.DARK_GRAY, new BasicStroke(1f));
    slo.setLabel("100 ms: placement p99 defines the capacity");
    slo.setLabelAnchor(RectangleAnchor.TOP_LEFT);
    slo.setLabelTextAnchor(TextAnchor.BOTTOM_LEFT);
    plot.addRangeMarker(slo);
    ValueMarker lagTarget = new ValueMarker(50, Color.GRAY, new BasicStroke(1f));
    lagTarget.setLabel("50 ms: close-lag p99 target at 75%");
    lagTarget.setLabelAnchor(RectangleAnchor.BOTTOM_LEFT);
    lagTarget.setLabelTextAnchor(TextAnchor.TOP_LEFT);
    plot.addRangeMarker(lagTarget);
    if (capacity.rate() > 0) {
      ValueMarker cap = new ValueMarker(capacity.rate(), Color.DARK_GRAY, new BasicStroke(1f));
      cap.setLabel("capacity");
      cap.setLabelAnchor(RectangleAnchor.TOP_RIGHT);
      cap.setLabelTextAnchor(TextAnchor.TOP_LEFT);
      plot.addDomainMarker(cap);
    }
    ChartUtils.saveChartAsPNG(png.toFile(), chart, 800, 450);
  }
}
