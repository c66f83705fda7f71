package io.ordertimeout.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.sweep.SweepStats;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.wiring.Components;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A changed OTC_TIMER_SHARDS is refused at init instead of orphaning timers: the stack keeps
 * running with the count its timers were written with.
 */
class TimerShardCountTest {
  private TestStack stack;

  @AfterEach
  void tearDown() {
    stack.close();
  }

  @Test
  void aRestartWithAnotherShardCountIsRefusedAndTheOldCountStillClosesEveryOrderOnce() {
    // Arrange: a stack started with 4 shards, 40 timers scheduled over them
    stack = TestStack.create("shards", c -> c.toBuilder().timerShards(4).build(), null);
    stack.seedSku("sku-a", 100);
    List<String> ids =
        stack.bulkPlace("shard-", 40, Duration.ofMillis(300), i -> new OrderItem("sku-a", 1));
    String prefix = stack.app().config().keyPrefix();
    var redis = stack.app().redis().sync();

    // Act + Assert: restarted with 8 shards, init fails naming both counts and the way out
    assertThatThrownBy(
            () -> new Components(stack.app().config().toBuilder().timerShards(8).build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("OTC_TIMER_SHARDS is 8")
        .hasMessageContaining("written to 4 shards")
        .hasMessageContaining("Set OTC_TIMER_SHARDS=4, or reshard")
        .hasMessageContaining(prefix + ":timer-shards")
        // the resharding steps name every deadline kind's keys and report field: an operator
        // following them must not orphan the receipt, completion or coupon timers
        .hasMessageContaining(prefix + ":{t*}:timers* (every tenant and deadline kind)")
        .hasMessageContaining("receipt_rescheduled=0")
        .hasMessageContaining("complete_rescheduled=0")
        .hasMessageContaining("coupon_rescheduled=0");
    assertThat(redis.get(prefix + ":timer-shards")).isEqualTo("4");

    // a restart with the recorded count is accepted, and its sweep closes each order once
    try (Components restarted = new Components(stack.app().config())) {
      long until = System.currentTimeMillis() + 3_000;
      SweepStats stats = restarted.newSweeper().run(() -> until - System.currentTimeMillis());

      assertThat(stats.closed()).isEqualTo(ids.size());
      assertThat(stats.alreadyFinal()).as("closed orders claimed again").isZero();
      assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE status = 'CLOSED'"))
          .isEqualTo(ids.size());
      assertThat(stack.count("SELECT COUNT(*) FROM stock_movements WHERE kind = 'RELEASE'"))
          .isEqualTo(ids.size());
      assertThat(restarted.timers().size(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT)).isZero();
    }
    stack.assertInvariants();
  }
}
