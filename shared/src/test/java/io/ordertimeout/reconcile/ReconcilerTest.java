package io.ordertimeout.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.wechat.TradeSnapshot;
import io.ordertimeout.embedded.wechat.TradeState;
import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.payment.PaidTrade;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.wechat.PrepayCommand;
import io.ordertimeout.wechat.WeChatTrade;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The daily reconciliation of one tenant against the simulator's trade bill, downloaded through the
 * SDK: a lost notification the bill finds and applies, a paid-after-close case, a trade of no
 * order, a paid order without a line, and a re-run that changes nothing.
 */
class ReconcilerTest {
  private static final String OPEN_ID = "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o";

  // one simulator per test: a day's bill lists every trade the simulator paid that day
  private WeChatPaySimulator wechat;
  private TestStack stack;

  @BeforeEach
  void setUp() {
    wechat = WeChatPaySimulator.start();
    stack = TestStack.withWeChat("reconcile", wechat);
    stack.seedSku("sku-a", 20);
  }

  @AfterEach
  void tearDown() {
    stack.assertInvariants();
    stack.close();
    wechat.close();
  }

  private LocalDate today() {
    return LocalDate.now(Reconciler.SHANGHAI);
  }

  private void placeAndPrepay(String id, int amountItems) {
    stack.place(id, "u1", 600, null, new OrderItem("sku-a", amountItems));
    stack.app().prepays().prepay(TenantIds.DEFAULT, id, OPEN_ID, null);
  }

  @Test
  void aLostNotificationIsFoundInTheBillAndApplied() {
    placeAndPrepay("rc-lost-01", 1);
    // paid at WeChat; no webhook is set, so its notification never arrives, and compensation
    // (whose notify grace has not passed) has not asked WeChat yet
    TradeSnapshot paid = wechat.pay("rc-lost-01");
    assertThat(stack.dump("SELECT status FROM orders WHERE order_id = 'rc-lost-01'"))
        .containsExactly("UNPAID|");

    ReconciliationReport report = stack.app().reconciler().reconcile(TenantIds.DEFAULT, today());

    assertThat(report.counts()).containsEntry("APPLIED", 1L);
    assertThat(report.flags()).isZero();
    assertThat(
            stack.dump("SELECT status, transaction_id FROM orders WHERE order_id = 'rc-lost-01'"))
        .containsExactly("PAID|" + paid.transactionId() + "|");
    assertThat(
            stack.dump(
                "SELECT kind, quantity FROM stock_movements WHERE order_id = 'rc-lost-01'"
                    + " ORDER BY kind"))
        .containsExactly("RESERVE|1|", "SELL|1|");
    assertThat(stack.dump("SELECT ref, category, flagged FROM reconciliation_lines"))
        .containsExactly("T:rc-lost-01|APPLIED|0|");
  }

  @Test
  void everyCategoryOfOneDayIsReportedAndAReRunChangesNothing() {
    // PAID here, notified: matched
    placeAndPrepay("rc-paid-01", 1);
    TradeSnapshot paid = wechat.pay("rc-paid-01");
    stack.app().payments().apply(paidTrade("rc-paid-01", paid, PaidTrade.Source.NOTIFY));
    // closed here by a path that did not ask WeChat, paid there, the close path found it and the
    // refund is in the bill: paid after close (already recorded) and a matched refund line
    closedButPaid("rc-pac-001");
    stack
        .app()
        .payments()
        .apply(
            paidTrade(
                "rc-pac-001", wechat.trade("rc-pac-001").orElseThrow(), PaidTrade.Source.CLOSE));
    // the same, found by nobody before the bill
    closedButPaid("rc-pac-002");
    // a trade at WeChat that no order of any tenant is bound to
    stack
        .app()
        .gateway()
        .prepay(
            TenantIds.DEFAULT,
            new PrepayCommand(
                WeChatTrade.ofTenantMerchant("stray-trade-01"),
                "stray",
                100,
                OPEN_ID,
                Instant.now().plusSeconds(600)));
    wechat.pay("stray-trade-01");
    // PAID here by a transaction WeChat never had: no line in the bill
    placeAndPrepay("rc-ghost-01", 1);
    long amount = stack.count("SELECT amount_fen FROM orders WHERE order_id = 'rc-ghost-01'");
    stack
        .app()
        .payments()
        .apply(
            new PaidTrade(
                TenantIds.DEFAULT,
                "rc-ghost-01",
                "4200999",
                amount,
                null,
                PaidTrade.Source.NOTIFY));

    ReconciliationReport first = stack.app().reconciler().reconcile(TenantIds.DEFAULT, today());

    // four payments and the refund of rc-pac-001
    assertThat(first.billLines()).isEqualTo(5);
    assertThat(first.counts())
        .containsEntry("MATCHED", 1L)
        .containsEntry("PAID_AFTER_CLOSE", 2L)
        .containsEntry("REFUND_MATCHED", 1L)
        .containsEntry("NO_ORDER", 1L)
        .containsEntry("NOT_IN_BILL", 1L);
    assertThat(first.flags()).isEqualTo(2);
    assertThat(first.newFlags()).isEqualTo(2);
    assertThat(first.flagged())
        .extracting(ReconciliationReport.Line::ref)
        .containsExactlyInAnyOrder("T:stray-trade-01", "O:rc-ghost-01");
    assertThat(stack.dump("SELECT order_id, detected_by FROM paid_after_close ORDER BY order_id"))
        .containsExactly("rc-pac-001|CLOSE|", "rc-pac-002|BILL|");
    assertThat(wechat.trade("rc-pac-002").orElseThrow().state()).isEqualTo(TradeState.REFUND);

    ReconciliationReport again = stack.app().reconciler().reconcile(TenantIds.DEFAULT, today());

    assertThat(again.counts()).isEqualTo(first.counts());
    assertThat(again.newFlags()).isZero();
    assertThat(again.runs()).isEqualTo(2);
    assertThat(stack.count("SELECT COUNT(*) FROM reconciliation_lines")).isEqualTo(4);
    assertThat(stack.count("SELECT COUNT(*) FROM paid_after_close")).isEqualTo(2);
    assertThat(wechat.trade("rc-pac-002").orElseThrow().refundedFen()).isEqualTo(amount);
    assertThat(stack.dump("SELECT order_id, status FROM orders ORDER BY order_id"))
        .containsExactly(
            "rc-ghost-01|PAID|", "rc-pac-001|CLOSED|", "rc-pac-002|CLOSED|", "rc-paid-01|PAID|");
    assertThat(stack.app().reconciler().report(TenantIds.DEFAULT, today()).counts())
        .isEqualTo(first.counts());
  }

  @Test
  void theScheduleReconcilesEachPublishedDayWithoutAReportOnce() {
    LocalDate today = today();
    long nineAm = today.atTime(9, 0).atZone(Reconciler.SHANGHAI).toInstant().toEpochMilli();
    long elevenAm = nineAm + 2 * 3_600_000L;
    ReconciliationJob early =
        new ReconciliationJob(
            stack.app().reconciler(),
            () -> List.of(TenantIds.DEFAULT),
            ReconciliationSettings.defaults(),
            () -> nineAm,
            new Metrics());
    ReconciliationJob late =
        new ReconciliationJob(
            stack.app().reconciler(),
            () -> List.of(TenantIds.DEFAULT),
            ReconciliationSettings.defaults(),
            () -> elevenAm,
            new Metrics());

    // before 10:00 yesterday's bill is not published; the two days before it are
    assertThat(early.dueDays()).containsExactly(today.minusDays(3), today.minusDays(2));
    assertThat(early.runDue(() -> Long.MAX_VALUE)).hasSize(2);
    assertThat(late.dueDays())
        .containsExactly(today.minusDays(3), today.minusDays(2), today.minusDays(1));
    List<ReconciliationReport> made = late.runDue(() -> Long.MAX_VALUE);
    List<ReconciliationReport> again = late.runDue(() -> Long.MAX_VALUE);

    assertThat(made)
        .extracting(ReconciliationReport::day)
        .containsExactly(today.minusDays(1).toString());
    assertThat(made.get(0).billLines()).isZero(); // no trade that day: NO_STATEMENT_EXIST
    assertThat(again).isEmpty();
    assertThat(
            stack.dump(
                "SELECT bill_date, runs, flags FROM reconciliation_reports ORDER BY bill_date"))
        .containsExactly(
            today.minusDays(3) + "|1|0|",
            today.minusDays(2) + "|1|0|",
            today.minusDays(1) + "|1|0|");
    // too little of the invocation left: nothing starts
    assertThat(late.runDue(() -> 1_000L)).isEmpty();
  }

  /** Paid at WeChat (notification lost) and closed here by a path that did not ask WeChat. */
  private void closedButPaid(String id) {
    placeAndPrepay(id, 1);
    wechat.pay(id);
    stack.update("UPDATE orders SET prepaid_at = NULL, prepay_id = NULL WHERE order_id = ?", id);
    stack.app().closer().close(TenantIds.DEFAULT, List.of(id), CloseReason.USER_CANCEL);
    stack.update("UPDATE orders SET prepaid_at = NOW(3) WHERE order_id = ?", id);
  }

  private static PaidTrade paidTrade(String orderId, TradeSnapshot paid, PaidTrade.Source source) {
    return new PaidTrade(
        TenantIds.DEFAULT,
        orderId,
        paid.transactionId(),
        paid.amountFen(),
        paid.successTime(),
        source);
  }
}
