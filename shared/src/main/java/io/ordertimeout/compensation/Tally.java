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
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The mutable record of one pass while it runs; {@link #report} seals it. It also holds the pass's
 * budgets: pages per category, WeChat queries, and the invocation's remaining time, which every
 * loop of the pass asks before each unit of work (a page, a WeChat query, a close).
 */
final class Tally {
  private static final Logger log = LoggerFactory.getLogger(Tally.class);

  private final int pageBudget;
  private final LongSupplier remainingMillis;
  private final long marginMillis;
  private final Set<String> skipped = new LinkedHashSet<>();
  private final Map<String, Long> counts = new TreeMap<>();
  private final Map<String, Integer> pages = new HashMap<>();
  private final List<Finding> repairs = new ArrayList<>();
  private final List<Finding> flags = new ArrayList<>();
  private final Set<String> exhausted = new LinkedHashSet<>();
  private final List<String> failures = new ArrayList<>();
  private long pagesScanned;
  private int wechatLeft;

  Tally(int pageBudget, int wechatBudget) {
    this(pageBudget, wechatBudget, () -> Long.MAX_VALUE, 0);
  }

  /**
   * @param remainingMillis the invocation's remaining time (Lambda's getRemainingTimeInMillis)
   * @param marginMillis no unit of work starts with less than this left: it covers the largest one
   *     (a page's close) at its worst, and the report and metrics flush after it
   */
  Tally(int pageBudget, int wechatBudget, LongSupplier remainingMillis, long marginMillis) {
    this.pageBudget = pageBudget;
    this.wechatLeft = wechatBudget;
    this.remainingMillis = remainingMillis;
    this.marginMillis = marginMillis;
  }

  /**
   * Whether one more unit of {@code category}'s work fits before the margin; false (and the
   * category noted in the report's {@code skipped}, the next run does it) once it does not.
   */
  boolean timeLeft(String category) {
    long left = remainingMillis.getAsLong();
    if (left >= marginMillis) {
      return true;
    }
    if (skipped.add(category)) {
      log.warn(
          "compensation category {} stopped: {} ms left, under the {} ms margin; the next run"
              + " continues it",
          category,
          left,
          marginMillis);
    }
    return false;
  }

  void add(String category, long n) {
    if (n != 0) {
      counts.merge(category, n, Long::sum);
    }
  }

  /** Takes one page of {@code category}'s budget; false (and noted) once it is spent. */
  boolean page(String category) {
    return page(category, category);
  }

  /**
   * Takes one page of the budget named {@code budget}, under {@code category}'s time check: the
   * deadline kinds run within the payment categories but each spends pages of its own.
   */
  boolean page(String category, String budget) {
    if (!timeLeft(category)) {
      return false;
    }
    int used = pages.merge(budget, 1, Integer::sum);
    if (used > pageBudget) {
      exhausted.add(budget);
      return false;
    }
    pagesScanned++;
    return true;
  }

  /**
   * Takes one WeChat query of the run's budget for {@code category}; false (and noted) once it is
   * spent or the time is short.
   */
  boolean wechatQuery(String category) {
    if (!timeLeft(category)) {
      return false;
    }
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
        List.copyOf(skipped),
        failures);
  }
}
