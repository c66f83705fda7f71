package io.ordertimeout.compensation;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.compensation.CompensationReport.Finding;
import io.ordertimeout.consume.ConsumerStats;
import io.ordertimeout.consume.StreamConsumer;
import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.sweep.TimeoutSweeper;
import io.ordertimeout.testing.Await;
import io.ordertimeout.testing.TestStack;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Compensation passes against the real embedded Redis and MariaDB. */
class CompensatorTest {
  private TestStack stack;

  @AfterEach
  void tearDown() {
    if (stack != null) {
      stack.close();
    }
  }

  private CompensationReport compensate() {
    return compensate(CompensationSettings.defaults());
  }

  private CompensationReport compensate(CompensationSettings settings) {
    return stack.app().newCompensator(settings).run();
  }

  /** FLUSHALL on a shared server: delete every key of this test's prefix. */
  private void flushThisTestsKeys() {
    var redis = stack.app().redis().sync();
    List<String> keys = redis.keys(stack.app().config().keyPrefix() + ":*");
    if (!keys.isEmpty()) {
      redis.del(keys.toArray(String[]::new));
    }
  }

  /** Runs a sweep until no order is UNPAID or {@code limit} passed (the assertions then tell). */
  private void sweepUntilNoneUnpaid(Duration limit) {
    long until = System.currentTimeMillis() + limit.toMillis();
    TimeoutSweeper sweeper = stack.app().newSweeper();
    CompletableFuture<?> run =
        CompletableFuture.runAsync(() -> sweeper.run(() -> until - System.currentTimeMillis()));
    Await.reached(
        Await.await("no order UNPAID", limit).pollInterval(Duration.ofMillis(100)),
        () -> stack.count("SELECT COUNT(*) FROM orders WHERE status = 'UNPAID'") == 0);
    sweeper.terminate();
    run.join();
  }

  @Tag("integration")
  @Test
  void afterRedisLostEverythingOneRunReschedulesAllAndTheSweepClosesEachAtItsDeadline() {
    stack = TestStack.create("comp-flush");
    for (int s = 0; s < 10; s++) {
      stack.seedSku("sku-" + s, 10_000);
    }
    // due in 10 s: placing and compensating take ~4 s on a loaded 2-core machine, so the
    // deadlines are still ahead when the sweep starts, and it must wait for them
    List<String> ids =
        stack.bulkPlace(
            "flush",
            10_000,
            Duration.ofSeconds(10),
            i -> new OrderItem("sku-" + i % 10, 1 + i % 2));
    long deadline = stack.app().timers().deadlineOf(TenantIds.DEFAULT, ids.get(0)).orElseThrow();
    flushThisTestsKeys();
    assertThat(stack.app().timers().size(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT)).isZero();

    CompensationReport report = compensate();

    assertThat(report.count("rescheduled")).isEqualTo(10_000);
    assertThat(report.count("unpaid_checked")).isEqualTo(10_000);
    assertThat(report.count("missed_by_redis")).isZero();
    assertThat(report.count("orders_audited")).isEqualTo(10_000);
    assertThat(report.flags()).isEmpty();
    assertThat(report.failures()).isEmpty();
    assertThat(stack.app().timers().size(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT))
        .isEqualTo(10_000);
    assertThat(stack.app().timers().deadlineOf(TenantIds.DEFAULT, ids.get(9_999)))
        .hasValue(deadline);
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE status = 'UNPAID'"))
        .isEqualTo(10_000);

    sweepUntilNoneUnpaid(Duration.ofMillis(deadline - System.currentTimeMillis() + 15_000));

    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE status = 'CLOSED'"))
        .isEqualTo(10_000);
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE closed_at < expire_at")).isZero();
    assertThat(stack.app().timers().size(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT)).isZero();
    stack.assertInvariants();
  }

  @Test
  void ordersWhoseTimersWereDeletedAndWhoseDeadlinesPassedAreClosedWithinOneRun() {
    stack = TestStack.create("comp-missed");
    stack.seedSku("sku-a", 10_000);
    List<String> overdue =
        stack.bulkPlace("late", 500, Duration.ofMinutes(-2), i -> new OrderItem("sku-a", 1));
    List<String> justDue =
        stack.bulkPlace("just", 20, Duration.ofSeconds(-5), i -> new OrderItem("sku-a", 2));
    List<String> all = new ArrayList<>(overdue);
    all.addAll(justDue);
    stack.app().timers().remove(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, all);

    CompensationReport report = compensate();

    // past the 60 s grace: closed by compensation; within it: rescheduled for the sweep
    assertThat(report.count("missed_by_redis")).isEqualTo(500);
    assertThat(report.count("rescheduled")).isEqualTo(20);
    assertThat(
            stack.count(
                "SELECT COUNT(*) FROM orders WHERE status = 'CLOSED'"
                    + " AND close_reason = 'TIMEOUT' AND order_id LIKE 'late%'"))
        .isEqualTo(500);
    assertThat(stack.app().timers().size(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT))
        .isEqualTo(20);
    assertThat(report.flags()).isEmpty();
    sweepUntilNoneUnpaid(Duration.ofSeconds(2));
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE status = 'UNPAID'")).isZero();
    stack.assertInvariants();
  }

  @Test
  void ledgerDriftIsReportedExactlyAndRepairedOnlyWhereCertain() {
    stack = TestStack.create("comp-drift");
    stack.seedSku("sku-a", 100);
    stack.seedSku("sku-b", 100);
    stack.seedSku("sku-c", 100);
    stack.place("drift-aaa1", "u1", 1, null, new OrderItem("sku-a", 2));
    stack.place("drift-bbb1", "u1", 1, null, new OrderItem("sku-b", 3));
    stack.place("drift-ccc1", "u1", 600, null, new OrderItem("sku-c", 4));
    stack.update(
        "UPDATE orders SET expire_at = TIMESTAMPADD(SECOND, -1, NOW(3)) WHERE order_id LIKE 'drift-%1' AND order_id <> 'drift-ccc1'");
    stack
        .app()
        .closer()
        .close(TenantIds.DEFAULT, List.of("drift-aaa1", "drift-bbb1"), CloseReason.TIMEOUT);
    // A: the close's ledger row and stock move were lost (certain: reserved is exactly 2 too high)
    stack.update("DELETE FROM stock_movements WHERE order_id = 'drift-aaa1' AND kind = 'RELEASE'");
    stack.update(
        "UPDATE stock SET available = available - 2, reserved = reserved + 2 WHERE sku_id = 'sku-a'");
    // B: only the ledger row was lost (stock released): not certain, flag
    stack.update("DELETE FROM stock_movements WHERE order_id = 'drift-bbb1' AND kind = 'RELEASE'");
    // C: a stock row off by 7 with no order to explain it: flag
    stack.update("UPDATE stock SET available = available + 7 WHERE sku_id = 'sku-c'");

    CompensationReport report = compensate();

    assertThat(report.repairs())
        .extracting(Finding::kind, Finding::subject)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("RELEASE_INSERTED", "sku-a"));
    assertThat(report.count("ledger_repairs")).isEqualTo(1);
    assertThat(report.flags())
        .extracting(Finding::kind, Finding::subject)
        .containsExactlyInAnyOrder(
            org.assertj.core.groups.Tuple.tuple("MISSING_RELEASE", "drift-bbb1"),
            org.assertj.core.groups.Tuple.tuple("STOCK_DRIFT", "sku-c"));
    Finding b = flag(report, "MISSING_RELEASE");
    assertThat(b.evidence())
        .containsEntry("skuId", "sku-b")
        .containsEntry("missingReleaseQuantity", 3)
        .containsEntry("reservedMinusDemand", 0L);
    Finding c = flag(report, "STOCK_DRIFT");
    assertThat(c.evidence())
        .containsEntry("totalMinusSum", -7L)
        .containsEntry("reservedMinusDemand", 0L);
    assertThat(stack.dump("SELECT sku_id, available, reserved, sold FROM stock ORDER BY sku_id"))
        .containsExactly("sku-a|100|0|0|", "sku-b|100|0|0|", "sku-c|103|4|0|");
    assertThat(
            stack.dump(
                "SELECT kind, quantity FROM stock_movements WHERE order_id = 'drift-aaa1' ORDER BY kind"))
        .containsExactly("RELEASE|2|", "RESERVE|2|");
    assertThat(stack.count("SELECT COUNT(*) FROM stock_movements WHERE order_id = 'drift-bbb1'"))
        .isEqualTo(1);
    assertThat(stack.dump("SELECT kind, subject, seen_count FROM compensation_flags ORDER BY kind"))
        .containsExactly("MISSING_RELEASE|drift-bbb1|1|", "STOCK_DRIFT|sku-c|1|");

    // a second run sees the same and repairs nothing more; the flags count the sighting
    CompensationReport again = compensate();
    assertThat(again.repairs()).isEmpty();
    assertThat(again.flags()).hasSize(2);
    assertThat(stack.dump("SELECT seen_count FROM compensation_flags")).containsOnly("2|");

    // an operator fixes what compensation would not guess at; then every invariant holds
    stack.update(
        "INSERT INTO stock_movements (tenant_id, order_id, sku_id, kind, quantity) VALUES ('default', 'drift-bbb1', 'sku-b', 'RELEASE', 3)");
    stack.update("UPDATE stock SET available = available - 7 WHERE sku_id = 'sku-c'");
    assertThat(compensate().flags()).isEmpty();
    stack.assertInvariants();
  }

  private static Finding flag(CompensationReport report, String kind) {
    return report.flags().stream().filter(f -> f.kind().equals(kind)).findFirst().orElseThrow();
  }

  @Test
  void aPoisonOrderIsParkedAndFlaggedOnceAndDeadLettersOfFinalOrdersAreResolved() {
    stack = TestStack.create("comp-poison");
    stack.seedSku("sku-a", 100);
    stack.place("poison-001", "u1", 600, null, new OrderItem("sku-a", 1));
    stack.place("closed-001", "u1", 600, null, new OrderItem("sku-a", 1));
    stack.app().closer().close(TenantIds.DEFAULT, List.of("closed-001"), CloseReason.USER_CANCEL);
    for (String id : List.of("poison-001", "closed-001")) {
      stack.update(
          "INSERT INTO dead_letters (stream_key, entry_id, event_type, order_id, payload, deliveries, errors)"
              + " VALUES ('s', ?, 'close_due', ?, '{}', 5, '[\"boom\"]')",
          "1-" + id.hashCode(),
          id);
    }
    long before = stack.app().time().nowMillis();

    CompensationReport report = compensate();
    compensate();

    assertThat(report.count("dead_letters_resolved")).isEqualTo(1);
    assertThat(report.count("poison_orders_parked")).isEqualTo(1);
    assertThat(stack.app().timers().deadlineOf(TenantIds.DEFAULT, "poison-001").orElseThrow())
        .isGreaterThanOrEqualTo(before + Duration.ofMinutes(5).toMillis());
    assertThat(
            stack.dump(
                "SELECT order_id, resolved_at IS NULL, resolution, resolved_by FROM dead_letters"
                    + " ORDER BY order_id"))
        .containsExactly("closed-001|0|ORDER_FINAL|compensation|", "poison-001|1|null|null|");
    assertThat(stack.dump("SELECT kind, subject, seen_count FROM compensation_flags"))
        .containsExactly("POISON_ORDER|poison-001|2|");
    stack.assertInvariants();
  }

  @Test
  void staleTimersLeasesAndStuckEntriesAreCleared() {
    stack = TestStack.create("comp-stale", c -> c, null);
    stack.seedSku("sku-a", 100);
    stack.place("stale-0001", "u1", 600, null, new OrderItem("sku-a", 1));
    stack.place("stale-0002", "u1", 1, null, new OrderItem("sku-a", 1));
    stack.app().closer().close(TenantIds.DEFAULT, List.of("stale-0001"), CloseReason.USER_CANCEL);
    stack.update(
        "UPDATE orders SET expire_at = TIMESTAMPADD(SECOND, -1, NOW(3)) WHERE order_id = 'stale-0002'");
    var redis = stack.app().redis().sync();
    stack
        .app()
        .timers()
        .schedule(
            TenantIds.DEFAULT,
            DeadlineKind.PAYMENT_TIMEOUT,
            "stale-0001",
            1L); // a timer left behind by a lost ack
    stack
        .app()
        .timers()
        .schedule(
            TenantIds.DEFAULT,
            DeadlineKind.PAYMENT_TIMEOUT,
            "ghost-0001",
            1L); // a timer of an order MySQL never had
    redis.set(stack.app().timers().leaseKey(1), "dead-holder"); // a lease without TTL
    stack.app().stream().ensureGroup();
    // the state changes' events reach the stream through the outbox relay
    stack.app().newRelay(io.ordertimeout.outbox.RelaySettings.defaults(), null).relayOnce();
    stack
        .app()
        .events()
        .closeDue(
            TenantIds.DEFAULT,
            List.of("stale-0002"),
            io.ordertimeout.stream.OrderEvents.HandOffCause.OVER_BUDGET);
    redis.xreadgroup(
        io.lettuce.core.Consumer.from("closers", "c9"),
        io.lettuce.core.XReadArgs.StreamOffset.lastConsumed(stack.app().stream().key()));

    CompensationReport report =
        compensate(CompensationSettings.defaults().withStuckAfter(Duration.ZERO));

    assertThat(report.count("stale_timers_removed")).isEqualTo(2);
    assertThat(report.count("stale_leases_removed")).isEqualTo(1);
    // two created, one closed (informational: acknowledged) and the close_due (closed, then acked)
    assertThat(report.count("stuck_entries_claimed")).isEqualTo(4);
    assertThat(report.count("stuck_entries_acked")).isEqualTo(4);
    assertThat(report.count("stuck_entries_closed")).isEqualTo(1);
    assertThat(redis.exists(stack.app().timers().leaseKey(1))).isZero();
    assertThat(redis.xpending(stack.app().stream().key(), "closers").getCount()).isZero();
    assertThat(stack.dump("SELECT order_id, status FROM orders ORDER BY order_id"))
        .containsExactly("stale-0001|CLOSED|", "stale-0002|CLOSED|");
    assertThat(stack.app().timers().size(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT)).isZero();
    stack.assertInvariants();
  }

  @Test
  void compensationBesideSweepsAndConsumersKeepsEveryInvariant() throws Exception {
    stack = TestStack.create("comp-race");
    for (int s = 0; s < 5; s++) {
      stack.seedSku("sku-" + s, 10_000);
    }
    List<String> ids =
        stack.bulkPlace(
            "race", 3_000, Duration.ofSeconds(2), i -> new OrderItem("sku-" + i % 5, 1));
    stack
        .app()
        .timers()
        .remove(
            TenantIds.DEFAULT,
            DeadlineKind.PAYMENT_TIMEOUT,
            ids.subList(0, 1_500)); // half lost their timers
    stack.bulkPlace("old", 300, Duration.ofMinutes(-3), i -> new OrderItem("sku-" + i % 5, 2));
    AtomicBoolean done = new AtomicBoolean();
    long until = System.currentTimeMillis() + 15_000;
    CompletableFuture<Void> sweep =
        CompletableFuture.runAsync(
            () ->
                stack
                    .app()
                    .newSweeper()
                    .run(() -> done.get() ? 0 : until - System.currentTimeMillis()));
    CompletableFuture<ConsumerStats> consume =
        CompletableFuture.supplyAsync(
            () -> {
              try (StreamConsumer consumer = stack.app().newStreamConsumer()) {
                return consumer.run(() -> done.get() ? 0 : until - System.currentTimeMillis());
              }
            });
    List<CompensationReport> reports = new ArrayList<>();
    try {
      for (int run = 0; run < 4; run++) {
        reports.add(compensate(CompensationSettings.defaults().withGrace(Duration.ZERO)));
        // Pacing, not a wait for an outcome: four runs 0.5 s apart span the 2 s deadlines, so
        // runs meet orders before, at and after their deadline.
        Thread.sleep(500);
      }
      Await.reached(
          Await.await(
                  "every order closed",
                  Duration.ofMillis(Math.max(1, until - System.currentTimeMillis())))
              .pollInterval(Duration.ofMillis(100)),
          () -> stack.count("SELECT COUNT(*) FROM orders WHERE status = 'UNPAID'") == 0);
    } finally {
      done.set(true);
      sweep.get();
      consume.get();
    }

    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE status = 'CLOSED'")).isEqualTo(3_300);
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE closed_at < expire_at")).isZero();
    assertThat(reports).allSatisfy(r -> assertThat(r.flags()).isEmpty());
    assertThat(reports).allSatisfy(r -> assertThat(r.failures()).isEmpty());
    assertThat(compensate().flags()).isEmpty();
    stack.assertInvariants();
  }
}
