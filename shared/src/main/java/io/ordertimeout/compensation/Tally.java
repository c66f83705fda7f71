package io.ordertimeout.compensation;

import io.ordertimeout.compensation.CompensationReport.Finding;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/** The mutable record of one pass while it runs; {@link #report} seals it. */
final class Tally {
  private final int pageBudget;
  private final Map<String, Long> counts = new TreeMap<>();
  private final Map<String, Integer> pages = new HashMap<>();
  private final List<Finding> repairs = new ArrayList<>();
  private final List<Finding> flags = new ArrayList<>();
  private final Set<String> exhausted = new LinkedHashSet<>();
  private final List<String> failures = new ArrayList<>();
  private long pagesScanned;
  private int wechatLeft;

  Tally(int pageBudget, int wechatBudget) {
    this.pageBudget = pageBudget;
    this.wechatLeft = wechatBudget;
  }

  void add(String category, long n) {
    if (n != 0) {
      counts.merge(category, n, Long::sum);
    }
  }

  /** Takes one page of {@code category}'s budget; false (and noted) once it is spent. */
  boolean page(String category) {
    int used = pages.merge(category, 1, Integer::sum);
    if (used > pageBudget) {
      exhausted.add(category);
      return false;
    }
    pagesScanned++;
    return true;
  }

  /** Takes one WeChat query of the run's budget; false (and noted) once it is spent. */
  boolean wechatQuery() {
    if (wechatLeft <= 0) {
      exhausted.add("wechat_queries");
      return false;
    }
    wechatLeft--;
    add("wechat_queries", 1);
    return true;
  }

  void repaired(Finding repair) {
    repairs.add(repair);
  }

  void flagged(Finding flag) {
    flags.add(flag);
  }

  void failed(String category, RuntimeException e) {
    failures.add(category + ": " + e);
  }

  CompensationReport report(Instant startedAt, long durationMs) {
    return new CompensationReport(
        startedAt.toString(),
        durationMs,
        pagesScanned,
        counts,
        repairs,
        flags,
        List.copyOf(exhausted),
        failures);
  }
}
