package io.ordertimeout.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.wechat.TradeSnapshot;
import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import io.ordertimeout.payment.PaidTrade;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.wechat.WeChatTrade;
import java.time.LocalDate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Lines the bill shows and this system cannot settle by itself: an amount that is not the order's
 * (nothing applied, the order stays UNPAID) and a refund made outside this system.
 */
class ReconcilerFlagsTest {
  private static final String OPEN_ID = "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o";

  private WeChatPaySimulator wechat;
  private TestStack stack;

  @BeforeEach
  void setUp() {
    wechat = WeChatPaySimulator.start();
    stack = TestStack.withWeChat("reconcile-flags", wechat);
    stack.seedSku("sku-a", 20);
  }

  @AfterEach
  void tearDown() {
    stack.assertInvariants();
    stack.close();
    wechat.close();
  }

  private void placeAndPrepay(String id) {
    stack.place(id, "u1", 600, null, new OrderItem("sku-a", 1));
    stack.app().prepays().prepay(TenantIds.DEFAULT, id, OPEN_ID, null);
  }

  @Test
  void anAmountMismatchIsFlaggedAndNothingIsApplied() {
    placeAndPrepay("rc-amount-1");
    wechat.pay("rc-amount-1");
    // the order's amount here is not what WeChat took (a price changed after the prepay)
    stack.update("UPDATE orders SET amount_fen = amount_fen + 1 WHERE order_id = 'rc-amount-1'");

    ReconciliationReport report =
        stack.app().reconciler().reconcile(TenantIds.DEFAULT, LocalDate.now(Reconciler.SHANGHAI));

    assertThat(report.counts()).containsEntry("AMOUNT_MISMATCH", 1L);
    assertThat(report.flagged())
        .singleElement()
        .satisfies(
            line -> {
              assertThat(line.ref()).isEqualTo("T:rc-amount-1");
              assertThat(line.orderId()).isEqualTo("rc-amount-1");
              assertThat(line.detail().path("bill").path("totalFen").asLong())
                  .isEqualTo(line.detail().path("order").path("amountFen").asLong() - 1);
            });
    assertThat(stack.dump("SELECT status FROM orders WHERE order_id = 'rc-amount-1'"))
        .containsExactly("UNPAID|");
  }

  @Test
  void aRefundMadeOutsideThisSystemIsFlagged() {
    placeAndPrepay("rc-refund-1");
    TradeSnapshot paid = wechat.pay("rc-refund-1");
    stack
        .app()
        .payments()
        .apply(
            new PaidTrade(
                TenantIds.DEFAULT,
                "rc-refund-1",
                paid.transactionId(),
                paid.amountFen(),
                paid.successTime(),
                PaidTrade.Source.NOTIFY));
    // refunded in the merchant platform: WeChat has the refund, this system has no record of it
    stack
        .app()
        .gateway()
        .refund(
            TenantIds.DEFAULT,
            WeChatTrade.ofTenantMerchant("rc-refund-1"),
            "manual-refund-1",
            paid.amountFen(),
            "by hand");

    ReconciliationReport report =
        stack.app().reconciler().reconcile(TenantIds.DEFAULT, LocalDate.now(Reconciler.SHANGHAI));

    assertThat(report.counts()).containsEntry("MATCHED", 1L).containsEntry("REFUND_UNKNOWN", 1L);
    assertThat(report.flagged())
        .extracting(ReconciliationReport.Line::ref)
        .containsExactly("R:manual-refund-1");
  }
}
