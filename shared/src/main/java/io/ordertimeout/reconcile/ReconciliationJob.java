package io.ordertimeout.reconcile;

import io.ordertimeout.metrics.MetricNames;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.redis.TimeSource;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The scheduled side of reconciliation, run at the end of each compensation pass: for every tenant
 * and every day of the last {@code lookbackDays} whose bill is published (yesterday only from
 * {@code hour} on, Asia/Shanghai) and that has no report yet, one {@link Reconciler} run. A day is
 * reconciled once; a failed one (WeChat unreachable, the bill still being prepared) has no report
 * and is tried again on the next pass, five minutes later. An operator re-runs a day on purpose
 * through the admin API, which reconciles whether or not a report exists.
 */
public final class ReconciliationJob {
  private static final Logger log = LoggerFactory.getLogger(ReconciliationJob.class);

  /**
   * A run starts only with this much of the invocation left: one tenant's day of 100,000 lines took
   * seconds on the benchmark (docs/benchmarks), a minute leaves room for a slow WeChat download.
   */
  static final long MARGIN_MILLIS = 60_000;

  private final Reconciler reconciler;
  private final Supplier<List<String>> tenants;
  private final ReconciliationSettings settings;
  private final TimeSource time;
  private final Metrics metrics;

  public ReconciliationJob(
      Reconciler reconciler,
      Supplier<List<String>> tenants,
      ReconciliationSettings settings,
      TimeSource time,
      Metrics metrics) {
    this.reconciler = reconciler;
    this.tenants = tenants;
    this.settings = settings;
    this.time = time;
    this.metrics = metrics;
  }

  /** The days whose bill is published by now and within the look-back, oldest first. */
  List<LocalDate> dueDays() {
    ZonedDateTime now = Instant.ofEpochMilli(time.nowMillis()).atZone(Reconciler.SHANGHAI);
    LocalDate today = now.toLocalDate();
    List<LocalDate> days = new ArrayList<>();
    for (int back = settings.lookbackDays(); back >= 1; back--) {
      if (back > 1 || now.getHour() >= settings.hour()) {
        days.add(today.minusDays(back));
      }
    }
    return days;
  }

  /** Reconciles every due day without a report; answers the reports made by this call. */
  public List<ReconciliationReport> runDue(LongSupplier remainingMillis) {
    List<ReconciliationReport> made = new ArrayList<>();
    for (LocalDate day : dueDays()) {
      for (String tenant : tenants.get()) {
        if (remainingMillis.getAsLong() < MARGIN_MILLIS) {
          return made;
        }
        runOne(tenant, day, made);
      }
    }
    return made;
  }

  private void runOne(String tenant, LocalDate day, List<ReconciliationReport> made) {
    try {
      if (reconciler.report(tenant, day) != null) {
        return;
      }
      ReconciliationReport report = reconciler.reconcile(tenant, day);
      log.info(
          "reconciled tenant {} for {}: {} bill lines, {} flags, {}",
          tenant,
          day,
          report.billLines(),
          report.flags(),
          report.counts());
      made.add(report);
    } catch (RuntimeException e) {
      // the next pass tries the day again; one tenant's failure does not stop the others
      metrics.count(MetricNames.RECONCILIATION_FAILURES, 1);
      log.warn("reconciliation of tenant {} for {} failed: {}", tenant, day, e.toString());
    }
  }
}
