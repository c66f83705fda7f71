package io.ordertimeout.compensation;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.testing.TestStack;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A compensation pass is bounded by its invocation's remaining time: it stops between units of work
 * while the margin is left, reports what it skipped, and the next run does the rest.
 */
class CompensationTimeBoundTest {
  private static final List<String> EVERY_CATEGORY =
      List.of(
          "overdue",
          "unpaid",
          "dead_letters",
          "timers",
          "stream",
          "leases",
          "closed_prepaid",
          "refunds",
          "ledger");

  private TestStack stack;

  @AfterEach
  void tearDown() {
    if (stack != null) {
      stack.close();
    }
  }

  /** The production default margin of a pass without WeChat Pay (tests otherwise use none). */
  private static TestStack withMargin(String hint) {
    return TestStack.create(
        hint, c -> c.toBuilder().invocationMargin(Duration.ofSeconds(19)).build(), null);
  }

  private static CompensationSettings pagesOf(int size) {
    CompensationSettings d = CompensationSettings.defaults();
    return new CompensationSettings(
        d.grace(),
        size,
        d.pageBudget(),
        d.recentWindow(),
        d.closedWindow(),
        d.notifyGrace(),
        d.wechatBudget(),
        d.stuckAfter(),
        d.parkFor());
  }

  @Test
  void aPassWhoseTimeRunsShortAfterOnePageStopsThereAndTheNextRunClosesTheRest() {
    stack = withMargin("comp-time");
    stack.seedSku("sku-a", 1_000);
    List<String> overdue =
        stack.bulkPlace("late", 30, Duration.ofMinutes(-2), i -> new OrderItem("sku-a", 2));
    stack.app().timers().remove(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, overdue);
    long margin = stack.app().compensationMargin().toMillis();
    assertThat(margin).isEqualTo(19_000);
    // Time enough for two checks (the overdue category's start and its first page), then the
    // invocation has less than the margin left.
    AtomicInteger checks = new AtomicInteger();
    LongSupplier remaining = () -> checks.incrementAndGet() <= 2 ? margin + 60_000 : margin - 1;

    CompensationReport cut = stack.app().newCompensator(pagesOf(10)).run(remaining);

    assertThat(cut.count("missed_by_redis")).isEqualTo(10);
    assertThat(cut.skipped()).containsExactlyElementsOf(EVERY_CATEGORY);
    assertThat(cut.failures()).isEmpty();
    assertThat(cut.pagesScanned()).isEqualTo(1);
    // exactly the first page (keyset order: expire_at, order_id) is closed, with its stock
    assertThat(stack.dump("SELECT order_id FROM orders WHERE status = 'CLOSED' ORDER BY order_id"))
        .containsExactlyElementsOf(overdue.subList(0, 10).stream().map(id -> id + "|").toList());
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE status = 'UNPAID'")).isEqualTo(20);
    assertThat(stack.dump("SELECT available, reserved FROM stock WHERE sku_id = 'sku-a'"))
        .containsExactly("960|40|");
    assertThat(stack.count("SELECT COUNT(*) FROM stock_movements WHERE kind = 'RELEASE'"))
        .isEqualTo(10);
    assertThat(stack.app().metrics().counter("compensation_skipped")).isEqualTo(9);
    stack.assertInvariants();

    CompensationReport next = stack.app().newCompensator(pagesOf(10)).run(() -> margin + 60_000);

    assertThat(next.skipped()).isEmpty();
    assertThat(next.count("missed_by_redis")).isEqualTo(20);
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE status = 'CLOSED'")).isEqualTo(30);
    assertThat(stack.dump("SELECT available, reserved FROM stock WHERE sku_id = 'sku-a'"))
        .containsExactly("1000|0|");
    stack.assertInvariants();
  }

  @Test
  void aPassGivenLittleMoreThanItsMarginReturnsBeforeTheDeadlineWithWorkLeftForTheNextRun() {
    stack = withMargin("comp-deadline");
    stack.seedSku("sku-a", 100_000);
    List<String> overdue =
        stack.bulkPlace("late", 3_000, Duration.ofMinutes(-2), i -> new OrderItem("sku-a", 1));
    stack.app().timers().remove(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, overdue);
    long margin = stack.app().compensationMargin().toMillis();
    // 150 ms of work: 300 pages of 10 closes take far longer than that
    long deadline = System.currentTimeMillis() + margin + 150;
    LongSupplier remaining = () -> deadline - System.currentTimeMillis();

    CompensationReport cut = stack.app().newCompensator(pagesOf(10)).run(remaining);

    long leftAtReturn = remaining.getAsLong();
    // it stopped at a check once under the margin; one page's close (well under a second here)
    // may have been running then
    assertThat(leftAtReturn).isGreaterThan(margin - 2_000);
    assertThat(cut.skipped()).containsExactlyElementsOf(EVERY_CATEGORY);
    long closed = stack.count("SELECT COUNT(*) FROM orders WHERE status = 'CLOSED'");
    assertThat(closed).isEqualTo(cut.count("missed_by_redis")).isPositive().isLessThan(3_000);
    assertThat(closed % 10).isZero();
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE status = 'UNPAID'"))
        .isEqualTo(3_000 - closed);
    stack.assertInvariants();

    CompensationReport next = stack.app().newCompensator(pagesOf(1_000)).run();
    assertThat(next.count("missed_by_redis")).isEqualTo(3_000 - closed);
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE status = 'UNPAID'")).isZero();
    stack.assertInvariants();
  }
}
