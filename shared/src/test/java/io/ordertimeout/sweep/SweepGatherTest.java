package io.ordertimeout.sweep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ordertimeout.config.OtcConfig;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.redis.TimerIndex;
import io.ordertimeout.testing.Await;
import io.ordertimeout.testing.TestStack;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * After a pass that claimed orders, the sweep gathers before the next one (OTC_SWEEP_GATHER_MS,
 * TimeoutSweeper.Settings#gather): a steady trickle of deadlines, each a few milliseconds after the
 * last, closes in a few transactions of several orders instead of one transaction per order or two,
 * and still every order closes, none before its deadline.
 */
class SweepGatherTest {
  private static final ExecutorService THREADS = Executors.newCachedThreadPool();
  private static final int ORDERS = 40;
  private static final Duration POLL = Duration.ofSeconds(2);
  private static final Duration GATHER = Duration.ofMillis(500);

  private TestStack stack;

  @AfterEach
  void tearDown() {
    if (stack != null) {
      stack.assertInvariants();
      stack.close();
    }
  }

  @Test
  void theGatherIsConfiguredWith12MsByDefaultAndABadValueIsRefusedClearly() {
    Map<String, String> env = new HashMap<>();
    env.put("OTC_MYSQL_URL", "jdbc:mysql://localhost/otc");
    env.put("OTC_REDIS_URI", "redis://localhost");
    assertThat(OtcConfig.fromEnvironment(env).sweep().gather()).isEqualTo(Duration.ofMillis(12));
    env.put("OTC_SWEEP_GATHER_MS", "100");
    assertThat(OtcConfig.fromEnvironment(env).sweep().gather()).isEqualTo(Duration.ofMillis(100));
    env.put("OTC_SWEEP_GATHER_MS", "-1");
    assertThatThrownBy(() -> OtcConfig.fromEnvironment(env))
        .hasMessageContaining("OTC_SWEEP_GATHER_MS must be 0..5000, was -1");
  }

  @Test
  void aTrickleOfDeadlinesClosesInFewTransactionsAndNoneEarly() throws Exception {
    stack =
        TestStack.create(
            "sweep-gather", c -> c.toBuilder().sweepPoll(POLL).sweepGather(GATHER).build(), null);
    stack.seedSku("sku-g", 1_000);
    List<String> ids =
        stack.bulkPlace("g-", ORDERS, Duration.ofSeconds(3), n -> new OrderItem("sku-g", 1));
    // a trickle: order i due 10 ms after order i - 1, in the row and in its timer alike
    TimerIndex timers = stack.app().timers();
    for (int i = 0; i < ORDERS; i++) {
      String id = ids.get(i);
      stack.update(
          "UPDATE orders SET expire_at = expire_at + INTERVAL ? MICROSECOND WHERE order_id = ?",
          10_000L * i,
          id);
      long due = timers.deadlineOf(TenantIds.DEFAULT, id).orElseThrow() + 10L * i;
      timers.schedule(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, id, due);
    }
    TimeoutSweeper sweeper = stack.app().newSweeper();
    CompletableFuture<SweepStats> run =
        CompletableFuture.supplyAsync(() -> sweeper.run(() -> Long.MAX_VALUE / 4), THREADS);
    Await.until(
        "every order closed",
        Duration.ofSeconds(30),
        () -> stack.count("SELECT COUNT(*) FROM orders WHERE status = 'CLOSED'") == ORDERS);
    sweeper.terminate();
    SweepStats stats = run.join();

    assertThat(stats.closed()).as(stats.toString()).isEqualTo(ORDERS);
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE closed_at < expire_at"))
        .as("closed before the deadline")
        .isZero();
    assertThat(stack.count("SELECT COUNT(*) FROM stock_movements WHERE kind = 'RELEASE'"))
        .isEqualTo(ORDERS);
    // Orders closed in one transaction share its NOW(3). Passes that claim start at least the
    // gather apart, and each after the first claims a deadline later than the one before it
    // started, so they number at most the deadlines' span over the gather, plus the first and the
    // last, and one for a lease refresh that delayed a pass's clock read (one chunk each: 40
    // orders are under the smallest parallel chunk).
    long spanMillis =
        stack.count("SELECT TIMESTAMPDIFF(MICROSECOND, MIN(expire_at), MAX(expire_at)) FROM orders")
            / 1_000;
    long transactions = stack.count("SELECT COUNT(DISTINCT closed_at) FROM orders");
    assertThat(transactions)
        .as("closing transactions for %d orders due over %d ms", ORDERS, spanMillis)
        .isLessThanOrEqualTo(spanMillis / GATHER.toMillis() + 3);
  }
}
