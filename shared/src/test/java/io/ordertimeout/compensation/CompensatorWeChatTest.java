package io.ordertimeout.compensation;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import io.ordertimeout.testing.TestStack;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Compensation's WeChat category through the real SDK against the WeChat Pay simulator. */
class CompensatorWeChatTest {
  static final String OPEN_ID = "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o";
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
    stack.close();
  }

  @Test
  void anOrderWhoseNotificationWasLostBecomesPaidThroughTheQuery() {
    stack = TestStack.withWeChat("comp-lost", wechat);
    stack.seedSku("sku-a", 10);
    stack.seedCoupon("cp-1", "u1");
    stack.place("lost-00001", "u1", 600, "cp-1", new OrderItem("sku-a", 2));
    stack.place("open-00001", "u1", 600, null, new OrderItem("sku-a", 1));
    stack.app().prepays().prepay(TenantIds.DEFAULT, "lost-00001", OPEN_ID, null);
    stack.app().prepays().prepay(TenantIds.DEFAULT, "open-00001", OPEN_ID, null);
    String transactionId = wechat.pay("lost-00001").transactionId(); // no webhook: lost

    CompensationReport report =
        stack
            .app()
            .newCompensator(CompensationSettings.defaults().withNotifyGrace(Duration.ZERO))
            .run();

    assertThat(report.count("lost_notifications_paid")).isEqualTo(1);
    assertThat(report.count("wechat_queries")).isEqualTo(2);
    assertThat(stack.dump("SELECT order_id, status, transaction_id FROM orders ORDER BY order_id"))
        .containsExactly("lost-00001|PAID|" + transactionId + "|", "open-00001|UNPAID|null|");
    assertThat(stack.dump("SELECT status FROM coupons")).containsExactly("USED|");
    assertThat(stack.dump("SELECT sku_id, available, reserved, sold FROM stock"))
        .containsExactly("sku-a|7|1|2|");
    assertThat(stack.app().timers().deadlineOf(TenantIds.DEFAULT, "lost-00001")).isEmpty();
    assertThat(report.flags()).isEmpty();
    stack.assertInvariants();
  }

  @Test
  void aPrepaidOrderClosedHereButPaidAtWeChatIsRecordedAndRefunded() {
    stack = TestStack.withWeChat("comp-pac", wechat);
    stack.seedSku("sku-a", 10);
    stack.place("pac-000001", "u1", 600, null, new OrderItem("sku-a", 1));
    stack.app().prepays().prepay(TenantIds.DEFAULT, "pac-000001", OPEN_ID, null);
    wechat.pay("pac-000001"); // paid at WeChat, notification lost
    // closed here by a path that did not ask WeChat (e.g. before the prepay marker existed)
    stack.update(
        "UPDATE orders SET prepaid_at = NULL, prepay_id = NULL WHERE order_id = 'pac-000001'");
    stack
        .app()
        .closer()
        .close(
            TenantIds.DEFAULT,
            java.util.List.of("pac-000001"),
            io.ordertimeout.domain.CloseReason.USER_CANCEL);
    stack.update("UPDATE orders SET prepaid_at = NOW(3) WHERE order_id = 'pac-000001'");

    CompensationReport report = stack.app().newCompensator(CompensationSettings.defaults()).run();

    assertThat(report.count("paid_after_close_found")).isEqualTo(1);
    assertThat(stack.dump("SELECT order_id, detected_by, refund_status FROM paid_after_close"))
        .hasSize(1)
        .allSatisfy(
            row -> assertThat(row).startsWith("pac-000001|CLOSE|").doesNotContain("PENDING"));
    assertThat(stack.dump("SELECT status FROM orders")).containsExactly("CLOSED|");
    stack.assertInvariants();
  }

  @Test
  void aPendingPaidAfterCloseRefundIsAskedForAgain() {
    stack = TestStack.withWeChat("comp-refund", wechat);
    stack.seedSku("sku-a", 10);
    stack.place("refund-001", "u1", 600, null, new OrderItem("sku-a", 1));
    stack.app().prepays().prepay(TenantIds.DEFAULT, "refund-001", OPEN_ID, null);
    String transactionId = wechat.pay("refund-001").transactionId();
    stack.update("UPDATE orders SET prepaid_at = NULL, prepay_id = NULL");
    stack
        .app()
        .closer()
        .close(
            TenantIds.DEFAULT,
            java.util.List.of("refund-001"),
            io.ordertimeout.domain.CloseReason.USER_CANCEL);
    // recorded while WeChat was unreachable: the refund never reached it
    stack.update(
        "INSERT INTO paid_after_close (order_id, tenant_id, transaction_id, amount_fen, detected_by,"
            + " out_refund_no) VALUES ('refund-001', 'default', ?, 100, 'NOTIFY', 'refund-001-pac')",
        transactionId);

    CompensationReport report = stack.app().newCompensator(CompensationSettings.defaults()).run();

    assertThat(report.count("refunds_retried")).isEqualTo(1);
    assertThat(
            stack.dump("SELECT refund_attempts, refund_status <> 'PENDING' FROM paid_after_close"))
        .containsExactly("1|1|");
    stack.assertInvariants();
  }
}
