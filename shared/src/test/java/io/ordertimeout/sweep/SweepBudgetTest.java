package io.ordertimeout.sweep;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import io.ordertimeout.testing.TestStack;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The sweep starts a pass only when the invocation's remaining time covers it, WeChat step
 * included: a pass started later would be killed with Lambda mid-batch.
 */
class SweepBudgetTest {
  static WeChatPaySimulator wechat;
  private TestStack stack;

  @BeforeAll
  static void startWeChat() {
    wechat = WeChatPaySimulator.start();
  }

  @AfterAll
  static void stopWeChat() {
    wechat.close();
  }

  @AfterEach
  void tearDown() {
    stack.assertInvariants();
    stack.close();
  }

  /** An invocation with {@code millis} left when it starts, counting down in real time. */
  private static LongSupplier invocationOf(long millis) {
    long start = System.currentTimeMillis();
    return () -> millis - (System.currentTimeMillis() - start);
  }

  @Test
  void aPassWhoseWeChatStepDoesNotFitTheRemainingTimeIsNotStarted() {
    // Arrange: a 3 s WeChat step (the test config has no invocation margin) and five due orders
    stack =
        TestStack.withOverrides(
            "sweep-budget",
            Map.of("OTC_WECHAT_STEP_TIMEOUT_MS", "3000"),
            TestStack.gatewayFor(wechat, Duration.ofSeconds(1)));
    stack.seedSku("sku-a", 10);
    List<String> ids =
        stack.bulkPlace("budget-", 5, Duration.ofSeconds(-1), i -> new OrderItem("sku-a", 1));
    long deadline = stack.app().timers().deadlineOf(TenantIds.DEFAULT, ids.get(0)).getAsLong();

    // Act: 2.5 s left, less than the step alone
    SweepStats refused = stack.app().newSweeper().run(invocationOf(2_500));

    // Assert: nothing claimed (the timer keeps its deadline, no lease), nothing closed
    assertThat(refused.passes()).isZero();
    assertThat(refused.claimed()).isZero();
    assertThat(stack.app().timers().deadlineOf(TenantIds.DEFAULT, ids.get(0))).hasValue(deadline);
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE status = 'UNPAID'")).isEqualTo(5);

    // Act: 5 s left covers the step and a batch: the same sweep closes them
    SweepStats swept = stack.app().newSweeper().run(invocationOf(5_000));

    assertThat(swept.closed()).isEqualTo(5);
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE status = 'CLOSED'")).isEqualTo(5);
    assertThat(stack.app().timers().size(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT)).isZero();
  }
}
