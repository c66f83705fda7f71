package io.ordertimeout.sweep;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.redis.TimerIndex;
import io.ordertimeout.redis.TimerIndex.TimerSet;
import io.ordertimeout.testing.Await;
import io.ordertimeout.testing.TestStack;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The sweep acknowledges the timers of the orders its closers finished with its next claim of their
 * shard (PendingAcks, claimDue-4.lua), not with a ZREM per shard after each commit. Late, but never
 * lost: whatever no claim carried is removed at the end of the pass that did not claim its shard,
 * and at the latest when the run ends.
 */
class SweepAcksTest {
  private static final ExecutorService THREADS = Executors.newCachedThreadPool();

  private TestStack stack;

  @AfterEach
  void tearDown() {
    if (stack != null) {
      stack.assertInvariants();
      stack.close();
    }
  }

  @Test
  void theTimersOfClosedOrdersAreGoneWhileTheRunGoesOn() {
    stack = TestStack.create("acks-running", c -> c.toBuilder().dbPoolSize(4).build(), null);
    stack.seedSku("sku-a", 10_000);
    List<String> first =
        stack.bulkPlace("wave1-", 300, Duration.ofSeconds(-1), i -> new OrderItem("sku-a", 1));
    TimeoutSweeper sweeper = stack.app().newSweeper();
    CompletableFuture<SweepStats> run =
        CompletableFuture.supplyAsync(() -> sweeper.run(() -> Long.MAX_VALUE / 4), THREADS);
    try {
      Await.until(
          "the first wave closed and its timers removed, the run still going",
          Duration.ofSeconds(30),
          () -> closed("wave1-") == first.size() && timersLeft() == 0);
      assertThat(run).isNotDone();
      // a second wave falls due while the first one's acknowledgements may still be pending
      List<String> second =
          stack.bulkPlace("wave2-", 300, Duration.ofMillis(300), i -> new OrderItem("sku-a", 1));
      Await.until(
          "the second wave closed and its timers removed",
          Duration.ofSeconds(30),
          () -> closed("wave2-") == second.size() && timersLeft() == 0);
      assertThat(run).isNotDone();
    } finally {
      sweeper.terminate();
    }
    SweepStats stats = run.join();

    assertThat(stats.closed()).as(stats.toString()).isEqualTo(600);
    assertThat(stats.alreadyFinal())
        .as("no timer of a closed order came back to a claimer: " + stats)
        .isZero();
    assertThat(stack.count("SELECT COUNT(*) FROM stock_movements WHERE kind = 'RELEASE'"))
        .isEqualTo(600);
  }

  @Test
  void aRunLeavesNoTimerOfAnOrderItFinishedBehind() {
    stack = TestStack.create("acks-end", c -> c.toBuilder().dbPoolSize(4).build(), null);
    stack.seedSku("sku-a", 10_000);
    List<String> ids =
        stack.bulkPlace("end-", 2_000, Duration.ofSeconds(-1), i -> new OrderItem("sku-a", 1));
    TimeoutSweeper sweeper = stack.app().newSweeper();
    CompletableFuture<SweepStats> run =
        CompletableFuture.supplyAsync(() -> sweeper.run(() -> Long.MAX_VALUE / 4), THREADS);
    // ends the loop as soon as the first closes are in flight, their acknowledgements pending
    Await.until(
        "a close committed",
        Duration.ofSeconds(20),
        () -> stack.count("SELECT COUNT(*) FROM orders WHERE status = 'CLOSED'") > 0);
    sweeper.terminate();
    run.join();

    TimerIndex timers = stack.app().timers();
    List<String> closedWithTimer = new ArrayList<>();
    List<String> unpaidWithout = new ArrayList<>();
    for (String id : ids) {
      boolean timer = timers.deadlineOf(TenantIds.DEFAULT, id).isPresent();
      boolean closed =
          stack.count("SELECT COUNT(*) FROM orders WHERE order_id = ? AND status = 'CLOSED'", id)
              == 1;
      if (closed && timer) {
        closedWithTimer.add(id);
      } else if (!closed && !timer) {
        unpaidWithout.add(id);
      }
    }
    assertThat(closedWithTimer).as("closed orders whose timer is left").isEmpty();
    assertThat(unpaidWithout).as("unpaid orders whose timer was removed").isEmpty();
  }

  @Test
  void pendingAcknowledgementsAreTakenAndFlushedPerShard() {
    stack = TestStack.create("acks-unit", c -> c.toBuilder().timerShards(16).build(), null);
    TimerIndex timers = stack.app().timers();
    long later = stack.app().time().nowMillis() + 60_000;
    // two orders in different shards, one of them for two tenants
    String a = orderInShard(timers, 3);
    String b = orderInShard(timers, 7);
    Map<String, Long> deadlines = new LinkedHashMap<>();
    deadlines.put(a, later);
    deadlines.put(b, later);
    timers.scheduleAll(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, deadlines);
    timers.schedule("tenant-b", DeadlineKind.PAYMENT_TIMEOUT, a, later);
    PendingAcks acks = new PendingAcks(timers);

    acks.acknowledge(TenantIds.DEFAULT, List.of(a, b));
    acks.acknowledge("tenant-b", List.of(a));
    assertThat(acks.size()).isEqualTo(3);
    Map<TimerSet, List<String>> shard3 = acks.take(3);
    assertThat(shard3)
        .containsOnly(
            Map.entry(new TimerSet(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT), List.of(a)),
            Map.entry(new TimerSet("tenant-b", DeadlineKind.PAYMENT_TIMEOUT), List.of(a)));
    assertThat(acks.take(3)).isEmpty();
    acks.putBack(shard3);

    acks.flush(shard -> shard == 7);
    assertThat(timers.deadlineOf(TenantIds.DEFAULT, b)).as("shard 7 flushed").isEmpty();
    assertThat(timers.deadlineOf(TenantIds.DEFAULT, a)).as("shard 3 still pending").isPresent();
    assertThat(acks.size()).isEqualTo(2);

    acks.flush(shard -> true);
    assertThat(timers.deadlineOf(TenantIds.DEFAULT, a)).isEmpty();
    assertThat(timers.deadlineOf("tenant-b", DeadlineKind.PAYMENT_TIMEOUT, a)).isEmpty();
    assertThat(acks.size()).isZero();
  }

  private static String orderInShard(TimerIndex timers, int shard) {
    for (int i = 0; ; i++) {
      String id = "ack-" + i;
      if (timers.shardOf(id) == shard) {
        return id;
      }
    }
  }

  private long closed(String prefix) {
    return stack.count(
        "SELECT COUNT(*) FROM orders WHERE order_id LIKE ? AND status = 'CLOSED'", prefix + "%");
  }

  private long timersLeft() {
    var redis = stack.app().redis().sync();
    long left = 0;
    for (int shard = 0; shard < stack.app().timers().shards(); shard++) {
      left +=
          redis.zcard(
              stack
                  .app()
                  .timers()
                  .timersKey(TenantIds.DEFAULT, shard, DeadlineKind.PAYMENT_TIMEOUT));
    }
    return left;
  }
}
