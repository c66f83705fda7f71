package io.ordertimeout.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The report: one table row per scenario and system with ratios against this system (report.md),
 * and the close-lag distributions on a log percentile axis as HdrHistogram plots them (lag.svg).
 */
final class Report {
  private static final String[] COLOURS = {
    "#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"
  };

  private Report() {}

  static String table(List<CellResult> results) {
    StringBuilder md = new StringBuilder();
    md.append(
        "| scenario | system | orders | closed | paid | lag p50 ms | p99 ms | p99.9 ms | max ms |"
            + " closes/s | drain s | tail s | CPU s | JIT s | CPU us/close w/o JIT | Redis CPU us/close | MariaDB CPU us/close | peak RSS MB | Redis B/order | invariants |"
            + " rate vs otc | p99 vs otc | alloc KB/close | GCs | GC ms | load |\n");
    md.append(
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|\n");
    for (CellResult r : results) {
      Optional<CellResult> otc =
          results.stream()
              .filter(o -> o.scenario().equals(r.scenario()) && o.system().equals("otc"))
              .findFirst();
      md.append(
          String.format(
              Locale.ROOT,
              "| %s | %s | %d | %d | %d | %s | %s | %s | %s | %.0f | %.2f | %.2f | %.2f | %s | %s |"
                  + " %s | %s | %.0f |"
                  + " %.0f | %s | %s | %s | %.1f | %d | %d | %.1f |\n",
              r.scenario(),
              r.system(),
              r.orders(),
              r.closedTimeout(),
              r.paid(),
              ms(r.lagMillis(50)),
              ms(r.lagMillis(99)),
              ms(r.lagMillis(99.9)),
              ms(r.maxLagMillis()),
              r.closesPerSecond(),
              r.drainSeconds(),
              r.tailSeconds(),
              r.cpuSeconds(),
              r.jvm().jitMillis() < 0
                  ? "-"
                  : String.format(Locale.ROOT, "%.2f", r.jvm().jitMillis() / 1000.0),
              Double.isNaN(r.cpuMicrosPerCloseWithoutJit())
                  ? "-"
                  : String.format(Locale.ROOT, "%.0f", r.cpuMicrosPerCloseWithoutJit()),
              Double.isNaN(r.redisCpuMicrosPerClose())
                  ? "-"
                  : String.format(Locale.ROOT, "%.0f", r.redisCpuMicrosPerClose()),
              Double.isNaN(r.dbCpuMicrosPerClose())
                  ? "-"
                  : String.format(Locale.ROOT, "%.0f", r.dbCpuMicrosPerClose()),
              r.peakRssKb() / 1024.0,
              r.redisBytesPerOrder(),
              r.invariantsOk() && r.drained() && r.unpaidLeft() == 0 && r.closedEarly() == 0
                  ? "OK"
                  : status(r),
              otc.map(o -> ratio(r.closesPerSecond(), o.closesPerSecond())).orElse("-"),
              otc.map(o -> ratio(r.lagMillis(99), o.lagMillis(99))).orElse("-"),
              r.allocatedBytesPerClose() / 1024,
              r.jvm().gcCount(),
              r.jvm().gcMillis(),
              r.loadAverage()));
    }
    return md.toString();
  }

  private static String status(CellResult r) {
    List<String> parts = new ArrayList<>();
    if (!r.invariantsOk()) {
      parts.add(r.invariants());
    }
    if (!r.drained() || r.unpaidLeft() > 0) {
      parts.add("NOT DRAINED: " + r.unpaidLeft() + " UNPAID left");
    }
    if (r.closedEarly() > 0) {
      parts.add(r.closedEarly() + " closed early");
    }
    return String.join("; ", parts);
  }

  private static String ms(double v) {
    if (Double.isNaN(v)) {
      return "-";
    }
    return v < 10 ? String.format(Locale.ROOT, "%.1f", v) : String.format(Locale.ROOT, "%.0f", v);
  }

  private static String ratio(double a, double b) {
    return b > 0 && !Double.isNaN(a) && !Double.isNaN(b)
        ? String.format(Locale.ROOT, "%.2fx", a / b)
        : "-";
  }

  static void write(
      Path dir, String header, List<CellResult> results, Map<String, String> descriptions)
      throws IOException {
    Files.createDirectories(dir);
    StringBuilder md = new StringBuilder(header).append("\n\n").append(table(results));
    md.append("\nSystems:\n");
    descriptions.forEach((k, v) -> md.append("- ").append(k).append(": ").append(v).append('\n'));
    md.append("\nNotes per run:\n");
    for (CellResult r : results) {
      if (!r.notes().isEmpty()) {
        md.append("- ").append(r.scenario()).append(' ').append(r.system()).append(": ");
        md.append(r.notes()).append('\n');
      }
    }
    md.append("\nClose-lag distributions: lag.svg\n");
    Files.writeString(dir.resolve("report.md"), md.toString());
    Files.writeString(dir.resolve("lag.svg"), svg(results));
  }

  /** One panel per scenario: lag (ms, log) against percentile (log of 1/(1-p)), one line each. */
  static String svg(List<CellResult> results) {
    Map<String, List<CellResult>> byScenario = new LinkedHashMap<>();
    results.forEach(r -> byScenario.computeIfAbsent(r.scenario(), k -> new ArrayList<>()).add(r));
    int w = 900;
    int ph = 320;
    StringBuilder s = new StringBuilder();
    s.append(
        String.format(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\""
                + " font-family=\"sans-serif\" font-size=\"12\">\n",
            w, ph * Math.max(1, byScenario.size())));
    s.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
    int panel = 0;
    for (Map.Entry<String, List<CellResult>> e : byScenario.entrySet()) {
      panel(s, e.getKey(), e.getValue(), 0, panel++ * ph, w, ph);
    }
    return s.append("</svg>\n").toString();
  }

  private static void panel(
      StringBuilder s, String scenario, List<CellResult> cells, int x0, int y0, int w, int h) {
    int left = 70;
    int right = 170;
    int top = 30;
    int bottom = 45;
    double xMax = 5; // 99.999th percentile
    double yMin = -1; // 0.1 ms
    double yMax = 1;
    for (CellResult c : cells) {
      if (c.lagMicros().getTotalCount() > 0) {
        yMax = Math.max(yMax, Math.ceil(Math.log10(Math.max(1, c.maxLagMillis()))));
      }
    }
    double pw = w - left - right;
    double ph = h - top - bottom;
    s.append(
        String.format(
            Locale.ROOT,
            "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">%s: close lag by percentile</text>\n",
            x0 + left,
            y0 + 18,
            scenario));
    for (int k = 0; k <= 5; k++) {
      double x = x0 + left + pw * k / xMax;
      String label = k == 0 ? "0%" : percentileLabel(k);
      s.append(line(x, y0 + top, x, y0 + top + ph, "#ddd"));
      s.append(text(x - 15, y0 + top + ph + 16, label));
    }
    for (int k = (int) yMin; k <= yMax; k++) {
      double y = y0 + top + ph - ph * (k - yMin) / (yMax - yMin);
      s.append(line(x0 + left, y, x0 + left + pw, y, "#ddd"));
      s.append(text(x0 + 5, y + 4, formatMs(Math.pow(10, k)) + " ms"));
    }
    s.append(text(x0 + left + pw / 2 - 30, y0 + h - 8, "percentile"));
    int i = 0;
    for (CellResult c : cells) {
      String colour = COLOURS[i % COLOURS.length];
      if (c.lagMicros().getTotalCount() > 0) {
        StringBuilder pts = new StringBuilder();
        for (int step = 0; step <= 100; step++) {
          double xv = xMax * step / 100;
          double p = 100 * (1 - Math.pow(10, -xv));
          double v = Math.max(0.1, c.lagMicros().getValueAtPercentile(p) / 1000.0);
          double yv = Math.min(yMax, Math.max(yMin, Math.log10(v)));
          pts.append(
              String.format(
                  Locale.ROOT,
                  "%.1f,%.1f ",
                  x0 + left + pw * xv / xMax,
                  y0 + top + ph - ph * (yv - yMin) / (yMax - yMin)));
        }
        s.append(
            String.format(
                "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%s\"/>\n",
                colour, pts.toString().trim()));
      }
      double ly = y0 + top + 14 + 18 * i;
      s.append(line(x0 + left + pw + 10, ly - 4, x0 + left + pw + 30, ly - 4, colour));
      s.append(text(x0 + left + pw + 35, ly, c.system()));
      i++;
    }
  }

  private static String percentileLabel(int nines) {
    return switch (nines) {
      case 1 -> "90%";
      case 2 -> "99%";
      case 3 -> "99.9%";
      case 4 -> "99.99%";
      default -> "99.999%";
    };
  }

  private static String formatMs(double v) {
    return v < 1 ? String.format(Locale.ROOT, "%.1f", v) : String.format(Locale.ROOT, "%.0f", v);
  }

  private static String line(double x1, double y1, double x2, double y2, String colour) {
    return String.format(
        Locale.ROOT,
        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%s\"/>\n",
        x1,
        y1,
        x2,
        y2,
        colour,
        colour.equals("#ddd") ? "1" : "2");
  }

  private static String text(double x, double y, String t) {
    return String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", x, y, t);
  }
}
