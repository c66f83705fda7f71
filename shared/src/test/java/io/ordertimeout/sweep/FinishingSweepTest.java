package io.ordertimeout.sweep;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.testing.Await;
import io.ordertimeout.testing.TestStack;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A sweep run whose loop stopped gives its shards up at once, and waits for its closes in flight
 * only as long as its invocation has time left: a run that held its shards (and its place in the
 * sweepers registry) while waiting left them unswept exactly when closes were slow, and a wait of
 * at least the claim lease outlived the invocation.
 *
 * <p>Times are Lambda's scaled by 1/10: a 1.9 s margin for the 19 s one, a run with 3.1 s left for
 * one with 31 s. The slow close is real: its order's row is held {@code FOR UPDATE} by another
 * connection, so the closing transaction waits on InnoDB's lock.
 */
@Tag("integration")
class FinishingSweepTest {
  private static final ExecutorService THREADS = Executors.newCachedThreadPool();

  private TestStack stack;
  private Connection locker;

  @AfterEach
  void tearDown() throws SQLException {
    unlock();
    if (stack != null) {
      // x closed once its row was free, or stays UNPAID and scheduled (its claim lease runs out
      // after the test): consistent either way
      stack.assertInvariants();
      stack.close();
    }
  }

  private void start(String hint, long marginMillis) {
    stack =
        TestStack.withOverrides(
            hint,
            Map.of(
                "OTC_INVOCATION_MARGIN_MS",
                Long.toString(marginMillis),
                // every run shares the shards evenly (none hands over to a newer one): what is
                // tested here is the end of a run, not the hand-over
                "OTC_SWEEP_RUNS",
                "2"),
            null);
    stack.seedSku("sku-x", 10);
    stack.seedSku("sku-y", 10);
  }

  /** An invocation with {@code millis} left when it starts, counting down in real time. */
  private static LongSupplier invocationOf(long millis) {
    long start = System.currentTimeMillis();
    return () -> millis - (System.currentTimeMillis() - start);
  }

  /** One order due {@code expireIn} from now, whose id maps to timer {@code shard}. */
  private String placeInShard(String prefix, int shard, Duration expireIn, String sku) {
    for (int i = 0; ; i++) {
      String candidate = prefix + i + "-";
      if (stack.app().timers().shardOf(candidate + "00000000") == shard) {
        List<String> ids = stack.bulkPlace(candidate, 1, expireIn, n -> new OrderItem(sku, 1));
        return ids.get(0);
      }
    }
  }

  /** Holds {@code orderId}'s row FOR UPDATE in a transaction of its own, until unlock(). */
  private void lock(String orderId) throws SQLException {
    locker = stack.app().dataSource().getConnection();
    locker.setAutoCommit(false);
    try (PreparedStatement ps =
        locker.prepareStatement(
            "SELECT status FROM orders WHERE tenant_id = 'default' AND order_id = ? FOR UPDATE")) {
      ps.setString(1, orderId);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
      }
    }
  }

  private void unlock() throws SQLException {
    if (locker != null) {
      locker.rollback();
      locker.close();
      locker = null;
    }
  }

  private long closeLagMillis(String orderId) {
    return stack.count(
        "SELECT TIMESTAMPDIFF(MICROSECOND, expire_at, closed_at) DIV 1000 FROM orders"
            + " WHERE order_id = ?",
        orderId);
  }

  @Test
  void anOrderDueInTheShardOfARunWaitingOnASlowCloseIsClosedByTheOtherRunWithinASecond()
      throws Exception {
    // Arrange: x (due now) and y (due in 2.8 s) in shard 0; x's row is locked
    start("finishing-sweep", 1_000);
    String x = placeInShard("fx", 0, Duration.ofSeconds(-1), "sku-x");
    String y = placeInShard("fy", 0, Duration.ofMillis(2_800), "sku-y");
    lock(x);

    // Act: run a (3 s, so its loop stops at ~2 s) takes every shard and claims x, whose close
    // blocks; run b starts 300 ms later and takes half of the shards (a keeps 0 and 1)
    TimeoutSweeper a = stack.app().newSweeper();
    CompletableFuture<SweepStats> runA =
        CompletableFuture.supplyAsync(() -> a.run(invocationOf(3_000)), THREADS);
    Thread.sleep(300);
    TimeoutSweeper b = stack.app().newSweeper();
    CompletableFuture<SweepStats> runB =
        CompletableFuture.supplyAsync(() -> b.run(invocationOf(30_000)), THREADS);
    try {
      Await.until(
          "y closed",
          Duration.ofSeconds(15),
          () ->
              stack.count("SELECT COUNT(*) FROM orders WHERE order_id = ? AND status = 'CLOSED'", y)
                  == 1);

      // Assert: y closed within a second of its deadline (by b: a's loop had stopped), while x's
      // close was still waiting on its row
      long lag = closeLagMillis(y);
      System.out.printf("finishing sweep: y closed %d ms after its deadline%n", lag);
      assertThat(lag).isBetween(0L, 1_000L);
      assertThat(
              stack.count(
                  "SELECT COUNT(*) FROM orders WHERE order_id = ? AND status = 'UNPAID'", x))
          .isEqualTo(1);
    } finally {
      unlock();
      b.terminate();
      runA.join();
      runB.join();
    }
  }

  @Test
  void aRunWith31SecondsLeftAndA40SecondCloseReturnsBeforeItsTimeIsUp() throws Exception {
    // Arrange: x is due and its row locked for 4 s (a 40 s close, scaled)
    start("finishing-sweep-time", 1_900);
    String x = placeInShard("fx", 0, Duration.ofSeconds(-1), "sku-x");
    lock(x);
    CompletableFuture<Void> unlockLater =
        CompletableFuture.runAsync(
            () -> {
              try {
                Thread.sleep(4_000);
                unlock();
              } catch (InterruptedException | SQLException e) {
                throw new IllegalStateException(e);
              }
            },
            THREADS);

    // Act
    long started = System.nanoTime();
    SweepStats stats = stack.app().newSweeper().run(invocationOf(3_100));
    long elapsed = (System.nanoTime() - started) / 1_000_000;

    // Assert: returned with time left, its shards and its registry entry given up
    System.out.printf("finishing sweep: a run with 3,100 ms left returned after %d ms%n", elapsed);
    assertThat(stats.claimed()).isEqualTo(1);
    assertThat(elapsed).isLessThan(3_100);
    for (int shard = 0; shard < stack.app().timers().shards(); shard++) {
      assertThat(stack.app().redis().sync().exists(stack.app().timers().leaseKey(shard))).isZero();
    }
    assertThat(stack.app().redis().sync().zcard(stack.app().timers().sweepersKey())).isZero();
    unlockLater.join();
  }
}
