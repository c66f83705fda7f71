package io.ordertimeout.sweep;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.PlaceOrderCommand;
import io.ordertimeout.testing.Await;
import io.ordertimeout.testing.TestStack;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A pass takes each tenant's due timers up to its own cap ({@code batch x parallelism}), visiting
 * shards until every tenant with timers due reached it, and closes the smallest tenant's first.
 * With one cap per pass for all tenants, a flash sale filled it from the first shard or two and
 * another tenant's due orders in the other shards waited ~16 passes (FairnessBench: B's p99 1,874
 * ms; with the cap per tenant 598 ms).
 */
class TenantFairSweepTest {
  private static final String SALE = "shop-sale";
  private static final String SMALL = "shop-small";

  /**
   * batch 10 x parallelism 2 (the DB pool, as deployed); 16 shards as deployed, so one pass could
   * take 160 and the cap, not the shards, bounds it.
   */
  private static final int CAP = 20;

  private final TestStack stack =
      TestStack.create(
          "fair-sweep",
          c -> c.toBuilder().sweepBatch(10).dbPoolSize(2).timerShards(16).build(),
          null);

  @AfterEach
  void tearDown() {
    stack.assertInvariants();
    stack.close();
  }

  /** {@code count} orders of {@code tenant}, all due a second ago in MySQL and in Redis. */
  private void dueOrders(String tenant, String prefix, int count) {
    stack.app().tenants().onboard(tenant);
    stack.update(
        "INSERT INTO stock (tenant_id, sku_id, available, total) VALUES (?, 'sku-1', ?, ?)",
        tenant,
        count,
        count);
    Map<String, Long> due = new HashMap<>();
    long past = stack.app().time().nowMillis() - 1_000;
    for (int i = 0; i < count; i++) {
      String id = prefix + String.format("%05d", i);
      stack
          .app()
          .placeOrders()
          .place(
              new PlaceOrderCommand(
                  id, tenant, "u1", List.of(new OrderItem("sku-1", 1)), null, 100, 600));
      due.put(id, past);
    }
    stack.update(
        "UPDATE orders SET expire_at = TIMESTAMPADD(SECOND, -1, NOW(3)) WHERE tenant_id = ?",
        tenant);
    stack.app().timers().scheduleAll(tenant, DeadlineKind.PAYMENT_TIMEOUT, due);
  }

  @Test
  void theFirstPassClosesEveryDueOrderOfASmallTenantBesideAFlashSale() {
    dueOrders(SALE, "sale-", 300);
    dueOrders(SMALL, "small-", 16);

    TimeoutSweeper sweeper = stack.app().newSweeper();
    long until = System.currentTimeMillis() + 60_000;
    CompletableFuture<SweepStats> run =
        CompletableFuture.supplyAsync(() -> sweeper.run(() -> until - System.currentTimeMillis()));
    Await.reached(
        Await.await("every order closed", Duration.ofSeconds(60))
            .pollInterval(Duration.ofMillis(100)),
        () -> stack.count("SELECT COUNT(*) FROM orders WHERE status = 'UNPAID'") == 0);
    sweeper.terminate();
    SweepStats stats = run.join();

    assertThat(stats.closed()).isEqualTo(316);
    // the sale's orders closed before the small tenant's last one: at most the first pass's cap
    long saleFirst =
        stack.count(
            "SELECT COUNT(*) FROM orders WHERE tenant_id = ? AND closed_at <"
                + " (SELECT MAX(closed_at) FROM orders WHERE tenant_id = ?)",
            SALE,
            SMALL);
    assertThat(saleFirst).isLessThanOrEqualTo(CAP);
    assertThat(
            stack.count(
                "SELECT COUNT(*) FROM orders WHERE status = 'CLOSED' AND close_reason = 'TIMEOUT'"))
        .isEqualTo(316);
    assertThat(stack.count("SELECT COUNT(*) FROM stock_movements WHERE kind = 'RELEASE'"))
        .isEqualTo(316);
  }
}
