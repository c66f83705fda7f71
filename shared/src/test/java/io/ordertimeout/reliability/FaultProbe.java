package io.ordertimeout.reliability;

import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.metrics.MetricNames;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.mysql.DbTime;
import io.ordertimeout.testing.TestStack;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;

/**
 * Measures one fault run: canary orders with a 1 s deadline placed every 250 ms from the start of
 * the workload until 5 s after the fault ends, so there are closes to time during and after the
 * fault; and a sampler that reads, every 200 ms, the metrics the alarms of template.yaml watch (as
 * the code emits them: the stack's {@link Metrics}, the workers' failed invocations as Lambda's
 * Errors, failed placements as the API's 5xx) and notes when each first crosses its template
 * threshold.
 *
 * <p>Recovery time: from the fault's end until the last TIMEOUT close whose lag (closed_at -
 * expire_at, MariaDB's own columns) is above normal; 0 if no close after the fault's end was
 * abnormal. Normal is measured by {@link ReliabilityTable#normalLagMs()} in a no-fault run of the
 * same JVM.
 *
 * <p>Detection delay: from the fault's start until the first 1 s window (CloudWatch's are 60 or 300
 * s; the faults here last seconds) in which a watched metric crosses its alarm's threshold. The
 * alarm itself fires only after its evaluation time (period x datapoints), printed beside it. An
 * alarm whose metric already crossed before the fault in the same run (a loaded machine's noise,
 * e.g. close lag over 1 s while 40 orders are placed) detects nothing and is reported apart.
 */
final class FaultProbe implements AutoCloseable {
  static final int CANARY_DEADLINE_SECONDS = 1;
  static final long CANARY_EVERY_MS = 250;
  static final long CANARY_AFTER_FAULT_MS = 5_000;
  static final long SAMPLE_EVERY_MS = 200;
  static final long WINDOW_MS = 1_000;

  /**
   * The backlog gauge is published after every sweep invocation (2 s in these tests); no report for
   * 3 s is the TimerBacklogAlarm's missing data, which it treats as breaching.
   */
  static final long BACKLOG_SILENCE_MS = 3_000;

  private final TestStack stack;
  private final AlarmRules rules;
  private final String tag;
  private final List<String> canaries = new CopyOnWriteArrayList<>();
  private final AtomicLong canaryAttempts = new AtomicLong();
  private final AtomicLong canaryFailures = new AtomicLong();
  private final AtomicLong canariesRescheduled = new AtomicLong();
  private final java.util.Set<String> compensated =
      java.util.concurrent.ConcurrentHashMap.newKeySet();
  private final Map<String, Long> firstCrossing = new LinkedHashMap<>();
  private final Map<String, Long> crossedBeforeFault = new LinkedHashMap<>();
  private final Deque<Sample> samples = new ArrayDeque<>();
  private final Thread canaryThread;
  private final Thread samplerThread;
  private volatile Workers workers;
  private volatile long faultStart = Long.MAX_VALUE;
  private volatile long faultEnd = Long.MAX_VALUE;
  private volatile boolean stopping;
  private long lastBacklogReport = System.currentTimeMillis();
  private long lastBacklogReports;

  private record Sample(
      long at,
      Histogram lag,
      Map<String, Long> counters,
      long failedSweeps,
      long failedConsumes,
      long attempts,
      long failures) {}

  FaultProbe(TestStack stack, AlarmRules rules, boolean withCanaries) {
    this.stack = stack;
    this.rules = rules;
    this.tag = stack.app().config().keyPrefix();
    canaryThread = new Thread(this::placeCanaries, "fault-canaries");
    canaryThread.setDaemon(true);
    samplerThread = new Thread(this::sample, "fault-sampler");
    samplerThread.setDaemon(true);
    if (withCanaries) {
      canaryThread.start();
    }
    samplerThread.start();
  }

  void watch(Workers w) {
    this.workers = w;
    lastBacklogReport = System.currentTimeMillis();
  }

  void faultStarts() {
    faultStart = System.currentTimeMillis();
  }

  /**
   * Marks the fault's end; the first mark wins. The harness marks again after the fault step
   * returns, which must not move the end of a fault that marked its own and then did more (the
   * failovers' compensation pass, the clients' wait for the new topology): recovery is timed from
   * the first mark, and moving it to after those seconds hid them (0.0 s instead of 4.6 s).
   */
  void faultEnds() {
    if (faultEnd != Long.MAX_VALUE) {
      return;
    }
    faultEnd = System.currentTimeMillis();
    if (faultStart == Long.MAX_VALUE) {
      faultStart = faultEnd;
    }
  }

  long faultStart() {
    return faultStart;
  }

  long faultEnd() {
    return faultEnd;
  }

  /** Waits until the last canary is placed (5 s after the fault's end). */
  void awaitCanaries() {
    try {
      canaryThread.join(120_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void placeCanaries() {
    int n = 0;
    while (!stopping
        && (faultEnd == Long.MAX_VALUE
            || System.currentTimeMillis() < faultEnd + CANARY_AFTER_FAULT_MS)) {
      String id = tag + "-canary-" + n++;
      canaryAttempts.incrementAndGet();
      try {
        stack.place(
            id, "canary", CANARY_DEADLINE_SECONDS, null, new OrderItem(FaultWorkload.SKU, 1));
        canaries.add(id);
      } catch (RuntimeException apiAnswers5xx) {
        canaryFailures.incrementAndGet();
        canaries.add(id); // it may have committed before the failure: tracked if its row exists
      }
      // pacing the canaries, not a wait for an outcome: one placement every 250 ms
      Workers.pause(CANARY_EVERY_MS);
    }
  }

  /**
   * Compensation's scan for canaries: an UNPAID canary 2 s past its deadline with no timer (its
   * placement committed but the ZADD failed, or Redis lost it) gets its timer back.
   */
  void compensateCanaries() {
    var redis = stack.app().redis().sync();
    var timers = stack.app().timers();
    for (String id : canaries) {
      List<String> row =
          stack.dump(
              "SELECT status, expire_at < TIMESTAMPADD(SECOND, -2, NOW(3)) FROM orders"
                  + " WHERE order_id = '"
                  + id
                  + "'");
      if (row.size() == 1
          && row.get(0).startsWith("UNPAID|1")
          && redis.zscore(
                  timers.timersKey(
                      TenantIds.DEFAULT, timers.shardOf(id), DeadlineKind.PAYMENT_TIMEOUT),
                  id)
              == null) {
        timers.schedule(
            TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, id, stack.app().time().nowMillis());
        canariesRescheduled.incrementAndGet();
        compensated.add(id);
      }
    }
  }

  /**
   * Orders whose timers compensation gave back (the test ran its pass): left out of recovery, as
   * {@link #compensateCanaries()}'s are, since compensation's period bounds them.
   */
  void restoredByCompensation(java.util.Collection<String> orderIds) {
    compensated.addAll(orderIds);
  }

  /** Canary placements that failed (the API's 5xx): proof a fault reached the place path. */
  long canaryFailures() {
    return canaryFailures.get();
  }

  long canariesRescheduled() {
    return canariesRescheduled.get();
  }

  /** Canaries whose row exists and that are not CLOSED TIMEOUT at the end. */
  List<String> canariesLost() {
    List<String> lost = new ArrayList<>();
    for (String id : canaries) {
      List<String> row =
          stack.dump("SELECT status, close_reason FROM orders WHERE order_id = '" + id + "'");
      if (!row.isEmpty() && !row.get(0).equals("CLOSED|TIMEOUT|")) {
        lost.add(id + " is " + row.get(0));
      }
    }
    return lost;
  }

  private void sample() {
    while (!stopping) {
      try {
        takeSample();
      } catch (RuntimeException e) {
        // a metric read never fails; a Redis-backed one may not exist: the next sample tries again
      }
      // the sampling period, not a wait for an outcome
      Workers.pause(SAMPLE_EVERY_MS);
    }
  }

  private synchronized void takeSample() {
    long now = System.currentTimeMillis();
    Metrics metrics = stack.app().metrics();
    Histogram lag = metrics.histograms().get(MetricNames.CLOSE_LAG_MS);
    Workers w = workers;
    Sample s =
        new Sample(
            now,
            lag == null ? null : lag.copy(),
            metrics.counters(),
            w == null ? 0 : w.failedSweeps(),
            w == null ? 0 : w.failedConsumes(),
            canaryAttempts.get(),
            canaryFailures.get());
    samples.addLast(s);
    while (samples.size() > 2 && samples.peekFirst().at() < now - WINDOW_MS) {
      samples.removeFirst();
    }
    Sample from = samples.peekFirst();
    if (from == s) {
      return;
    }
    cross("CloseLagP99Alarm", lagP99(from.lag(), s.lag()));
    long backlog = metrics.gauges().getOrDefault(MetricNames.TIMER_BACKLOG, 0L);
    long reports = w == null ? 0 : w.backlogReports();
    if (reports != lastBacklogReports) {
      lastBacklogReports = reports;
      lastBacklogReport = now;
    }
    boolean silent = w != null && now - lastBacklogReport > BACKLOG_SILENCE_MS;
    cross("TimerBacklogAlarm", silent ? Double.POSITIVE_INFINITY : backlog);
    cross("DeadLettersAlarm", delta(from, s, MetricNames.DEAD_LETTERS));
    cross("PaidAfterCloseAlarm", delta(from, s, MetricNames.PAID_AFTER_CLOSE));
    cross("StockReleaseFailuresAlarm", delta(from, s, MetricNames.STOCK_RELEASE_FAILURES));
    cross("TimeoutSweepErrorsAlarm", s.failedSweeps() - from.failedSweeps());
    cross("StreamConsumerErrorsAlarm", s.failedConsumes() - from.failedConsumes());
    long attempts = s.attempts() - from.attempts();
    cross(
        "ApiServerErrorsAlarm",
        attempts == 0 ? 0 : 100.0 * (s.failures() - from.failures()) / attempts);
  }

  private static double lagP99(Histogram from, Histogram to) {
    if (to == null) {
      return 0;
    }
    Histogram window = to.copy();
    if (from != null) {
      window.subtract(from);
    }
    return window.getTotalCount() == 0 ? 0 : window.getValueAtPercentile(99);
  }

  private static double delta(Sample from, Sample to, String counter) {
    return to.counters().getOrDefault(counter, 0L) - from.counters().getOrDefault(counter, 0L);
  }

  private void cross(String alarm, double value) {
    if (value <= rules.rule(alarm).threshold()) {
      return;
    }
    long now = System.currentTimeMillis();
    if (now < faultStart) {
      crossedBeforeFault.putIfAbsent(alarm, now);
    } else {
      firstCrossing.putIfAbsent(alarm, now - faultStart);
    }
  }

  /** One fault's measured recovery and detection. */
  record Measurement(
      Double recoverySeconds,
      Double detectionSeconds,
      String alarm,
      List<String> alsoCrossed,
      List<String> falseAlarms,
      long lagP99Ms,
      long timeoutCloses) {}

  /**
   * Lags (ms) and close instants (epoch ms) of the TIMEOUT closes of this stack whose timer the
   * system kept: a canary whose timer only compensation gave back (its placement's ZADD failed) is
   * left out, its bound is compensation's period (5 min in template.yaml), not this fault's.
   */
  private List<long[]> timeoutCloses() {
    return stack.sql(
        c -> {
          List<long[]> out = new ArrayList<>();
          try (PreparedStatement ps =
                  c.prepareStatement(
                      "SELECT order_id, TIMESTAMPDIFF(MICROSECOND, expire_at, closed_at) DIV 1000"
                          + " AS lag, closed_at FROM orders WHERE close_reason = 'TIMEOUT'");
              ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              if (!compensated.contains(rs.getString("order_id"))) {
                out.add(
                    new long[] {
                      rs.getLong("lag"),
                      DbTime.instant(rs, "closed_at").toEpochMilli(),
                      rs.getString("order_id").contains("-canary-") ? 1 : 0
                    });
              }
            }
          }
          return out;
        });
  }

  /** The p99 of the TIMEOUT closes' lag of this run, for the no-fault baseline. */
  long lagP99() {
    return percentile(timeoutCloses(), 99, -1);
  }

  /** Lag percentiles of the run, canaries (kind 1) and workload orders (kind 0) apart. */
  String lagProfile() {
    List<long[]> closes = timeoutCloses();
    return String.format(
        "lag ms p50/p99/max: canaries %d/%d/%d, workload %d/%d/%d",
        percentile(closes, 50, 1),
        percentile(closes, 99, 1),
        percentile(closes, 100, 1),
        percentile(closes, 50, 0),
        percentile(closes, 99, 0),
        percentile(closes, 100, 0));
  }

  private static long percentile(List<long[]> closes, double p, int kind) {
    List<Long> lags =
        closes.stream().filter(c -> kind < 0 || c[2] == kind).map(c -> c[0]).sorted().toList();
    return lags.isEmpty() ? 0 : lags.get(Math.max(0, (int) Math.ceil(lags.size() * p / 100) - 1));
  }

  synchronized Measurement measure(long normalLagMs) {
    List<long[]> closes = timeoutCloses();
    long lastAbnormal =
        closes.stream().filter(c -> c[0] > normalLagMs).mapToLong(c -> c[1]).max().orElse(0);
    double recovery = Math.max(0, lastAbnormal - faultEnd) / 1000.0;
    String first = null;
    long firstAt = Long.MAX_VALUE;
    for (Map.Entry<String, Long> e : firstCrossing.entrySet()) {
      // an alarm whose metric crossed before the fault (noise of a loaded machine) detects nothing
      if (e.getValue() < firstAt && !crossedBeforeFault.containsKey(e.getKey())) {
        firstAt = e.getValue();
        first = e.getKey();
      }
    }
    List<String> also = new ArrayList<>();
    firstCrossing.forEach((alarm, at) -> also.add(String.format("%s %.1f s", alarm, at / 1000.0)));
    return new Measurement(
        recovery,
        first == null ? null : firstAt / 1000.0,
        first,
        also,
        new ArrayList<>(crossedBeforeFault.keySet()),
        lagP99(),
        closes.size());
  }

  @Override
  public void close() {
    stopping = true;
    try {
      canaryThread.join(10_000);
      samplerThread.join(10_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
