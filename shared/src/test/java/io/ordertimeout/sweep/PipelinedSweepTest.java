package io.ordertimeout.sweep;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.config.Waits;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.testing.Await;
import io.ordertimeout.testing.TestStack;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The sweep claims while its closes run (ChunkRunner.pipelined): a close that waits, here on a row
 * lock another transaction holds, does not hold back the orders falling due after it. Before, the
 * sweep thread waited for every close of its pass, so each order's lag was the whole pass and one
 * slow close delayed every deadline behind it (bench S1: p99 168-204 ms at 3,333 due/s).
 */
class PipelinedSweepTest {
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
  void anOrderFallingDueWhileAnotherOrdersCloseWaitsOnALockIsClosedMeanwhile() throws Exception {
    // Lock waits of 30 s: the blocked close outlasts the test's wait for the other order, so only
    // a sweep that goes on claiming while a close is in flight can pass.
    stack =
        TestStack.create(
            "pipelined",
            c -> c.toBuilder().dbPoolSize(4).waits(longLockWaits(c.waits())).build(),
            null);
    stack.seedSku("sku-slow", 10);
    stack.seedSku("sku-fast", 10);
    List<String> slow =
        stack.bulkPlace("slow-", 1, Duration.ofSeconds(-1), i -> new OrderItem("sku-slow", 1));
    TimeoutSweeper sweeper = stack.app().newSweeper();
    CompletableFuture<SweepStats> run;
    try (Connection holder = stack.app().dataSource().getConnection()) {
      holder.setAutoCommit(false);
      lockRow(holder, slow.get(0));
      run = CompletableFuture.supplyAsync(() -> sweeper.run(() -> Long.MAX_VALUE / 4), THREADS);
      // the overdue order is claimed and its close waits on the row lock held here
      Await.until(
          "the slow order claimed",
          Duration.ofSeconds(20),
          () ->
              stack.app().timers().deadlineOf(TenantIds.DEFAULT, slow.get(0)).orElse(0)
                  > System.currentTimeMillis() + 1_000);
      List<String> fast =
          stack.bulkPlace("fast-", 3, Duration.ofMillis(200), i -> new OrderItem("sku-fast", 1));

      Await.until(
          "the orders due after it closed",
          Duration.ofSeconds(20),
          () ->
              stack.count(
                      "SELECT COUNT(*) FROM orders WHERE order_id LIKE 'fast-%'"
                          + " AND status = 'CLOSED'")
                  == fast.size());
      assertThat(stack.dump("SELECT status FROM orders WHERE order_id LIKE 'slow-%'"))
          .as("still waiting on the lock")
          .containsExactly("UNPAID|");
      holder.rollback();
    }

    Await.until(
        "the slow order closed once its row is free",
        Duration.ofSeconds(20),
        () ->
            stack.count(
                    "SELECT COUNT(*) FROM orders WHERE order_id LIKE 'slow-%'"
                        + " AND status = 'CLOSED'")
                == 1);
    sweeper.terminate();
    SweepStats stats = run.join();

    assertThat(stats.closed()).as(stats.toString()).isEqualTo(4);
    assertThat(stack.count("SELECT COUNT(*) FROM stock_movements WHERE kind = 'RELEASE'"))
        .isEqualTo(4);
    assertThat(stack.dump("SELECT sku_id, available, reserved FROM stock ORDER BY sku_id"))
        .containsExactly("sku-fast|10|0|", "sku-slow|10|0|");
  }

  @Test
  void aRunEndsOnlyAfterItsClosesInFlightCommitted() {
    stack = TestStack.create("pipelined-end", c -> c.toBuilder().dbPoolSize(4).build(), null);
    stack.seedSku("sku-a", 10_000);
    stack.bulkPlace("end-", 2_000, Duration.ofSeconds(-1), i -> new OrderItem("sku-a", 1));
    TimeoutSweeper sweeper = stack.app().newSweeper();
    CompletableFuture<SweepStats> run =
        CompletableFuture.supplyAsync(() -> sweeper.run(() -> Long.MAX_VALUE / 4), THREADS);
    // ends the loop as soon as the first closes are in flight
    Await.until(
        "a close committed",
        Duration.ofSeconds(20),
        () -> stack.count("SELECT COUNT(*) FROM orders WHERE status = 'CLOSED'") > 0);
    sweeper.terminate();
    SweepStats stats = run.join();

    // every close the run counted had committed when run() returned, none is left half-done
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE status = 'CLOSED'"))
        .isEqualTo(stats.closed());
    assertThat(stack.count("SELECT COUNT(*) FROM stock_movements WHERE kind = 'RELEASE'"))
        .isEqualTo(stats.closed());
  }

  /** 30 s lock waits, in a 100 s invocation (the config refuses lock waits it cannot outlive). */
  private static Waits longLockWaits(Waits w) {
    return new Waits(
        Duration.ofSeconds(100),
        30,
        Duration.ofSeconds(31),
        w.setLockWait(),
        w.weChatConnectTimeout(),
        w.weChatReadTimeout(),
        w.weChatStep());
  }

  private static void lockRow(Connection c, String orderId) throws Exception {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT order_id FROM orders WHERE tenant_id = ? AND order_id = ? FOR UPDATE")) {
      ps.setString(1, TenantIds.DEFAULT);
      ps.setString(2, orderId);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
      }
    }
  }
}
