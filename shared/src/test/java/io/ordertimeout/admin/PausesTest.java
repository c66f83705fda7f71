package io.ordertimeout.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ordertimeout.compensation.CompensationSettings;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.testing.TestStack;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Pausing stops the sweep's and the consumer's closes; resuming restarts them. */
class PausesTest {
  static final String OPERATOR = "arn:aws:iam::123456789012:user/oncall";
  private TestStack stack;
  private AdminOps ops;

  @BeforeEach
  void setUp() {
    stack = TestStack.create("admin-pause");
    ops = stack.app().adminOps(CompensationSettings.defaults());
    stack.seedSku("sku-a", 10);
  }

  @AfterEach
  void tearDown() {
    stack.assertInvariants();
    stack.close();
  }

  @Test
  void aPausedSweepClosesNothingAndAResumedOneClosesTheDueOrder() {
    stack.place("pause-0001", "u1", 900, null, new OrderItem("sku-a", 1));
    makeDue("pause-0001");
    ops.pauses().pause(Pauses.jobs("sweep"), OPERATOR, "WeChat incident INC-42");

    var paused = stack.app().sweepJob().run(runFor(300));

    assertThat(paused.passes()).isZero();
    assertThat(stack.dump("SELECT status FROM orders")).containsExactly("UNPAID|");
    assertThat(stack.app().metrics().counter("sweep_paused")).isEqualTo(1);
    assertThat(stack.app().timers().deadlineOf(TenantIds.DEFAULT, "pause-0001")).isPresent();

    ops.pauses().resume(Pauses.jobs("sweep"), OPERATOR);
    var resumed = stack.app().sweepJob().run(runFor(1_000));

    assertThat(resumed.closed()).isEqualTo(1);
    assertThat(stack.dump("SELECT status, close_reason FROM orders"))
        .containsExactly("CLOSED|TIMEOUT|");
  }

  @Test
  void aPausedConsumerLeavesTheCancelPendingAndAResumedOneClosesIt() {
    stack.place("pause-0002", "u1", 900, null, new OrderItem("sku-a", 1));
    stack.app().cancels().request(TenantIds.DEFAULT, "pause-0002");
    // the cancel is a MySQL row first; the outbox relay puts it on the stream
    stack.app().newRelay(io.ordertimeout.outbox.RelaySettings.defaults(), null).relayOnce();
    ops.pauses().pause(Pauses.jobs("consumer"), OPERATOR, "stream incident");

    var paused = stack.app().consumerJob().run(runFor(300));

    assertThat(paused.read()).isZero();
    assertThat(stack.dump("SELECT status FROM orders")).containsExactly("UNPAID|");
    assertThat(stack.app().metrics().counter("consumer_paused")).isEqualTo(1);

    ops.pauses().resume(Pauses.jobs("consumer"), OPERATOR);
    var resumed = stack.app().consumerJob().run(runFor(1_500));

    assertThat(resumed.closed()).isEqualTo(1);
    assertThat(stack.dump("SELECT status, close_reason FROM orders"))
        .containsExactly("CLOSED|USER_CANCEL|");
  }

  @Test
  void thePauseIsARowThatKeepsItsFirstOperatorAndAllPausesBoth() {
    ops.pauses().pause(Pauses.jobs("all"), OPERATOR, "first");
    Map<String, Object> state = ops.pauses().pause(Pauses.jobs("sweep"), "someone-else", "second");

    assertThat(stack.dump("SELECT job, tenant_id, paused_by, reason FROM job_pauses ORDER BY job"))
        .containsExactly("consumer|*|" + OPERATOR + "|first|", "sweep|*|" + OPERATOR + "|first|");
    assertThat(state.get("sweep")).isInstanceOf(Pauses.Pause.class);
    assertThat(stack.dump("SELECT action, subject FROM admin_actions ORDER BY action_id"))
        .containsExactly("pause|consumer,sweep|", "pause|sweep|");

    Map<String, Object> after = ops.pauses().resume(Pauses.jobs(null), OPERATOR);

    assertThat(after).containsEntry("sweep", "running").containsEntry("consumer", "running");
    assertThat(stack.count("SELECT COUNT(*) FROM job_pauses")).isZero();
  }

  @Test
  void anUnknownJobIsRefused() {
    assertThatThrownBy(() -> Pauses.jobs("compensation"))
        .isInstanceOfSatisfying(
            AdminRefusal.class, e -> assertThat(e.code()).isEqualTo("INVALID_JOB"))
        .hasMessageContaining("sweep, consumer or all");
    assertThat(stack.count("SELECT COUNT(*) FROM job_pauses")).isZero();
  }

  private void makeDue(String orderId) {
    stack.update(
        "UPDATE orders SET expire_at = NOW(3) - INTERVAL 1 SECOND WHERE order_id = ?", orderId);
    long expired =
        stack.count(
            "SELECT CAST(UNIX_TIMESTAMP(expire_at) * 1000 AS SIGNED) FROM orders WHERE order_id = ?",
            orderId);
    stack
        .app()
        .timers()
        .schedule(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, orderId, expired);
  }

  private static java.util.function.LongSupplier runFor(long millis) {
    long until = System.currentTimeMillis() + millis;
    return () -> until - System.currentTimeMillis();
  }
}
