package io.ordertimeout.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ordertimeout.compensation.CompensationSettings;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.wechat.TradeState;
import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import io.ordertimeout.testing.TestStack;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Force-close through the close path, WeChat first, against MariaDB, Redis and the simulator. */
class ForceCloseTest {
  static final String OPEN_ID = "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o";
  static final String OPERATOR = "arn:aws:iam::123456789012:user/oncall";
  static WeChatPaySimulator wechat;
  private TestStack stack;
  private AdminOps ops;

  @BeforeAll
  static void startWeChat() {
    wechat = WeChatPaySimulator.start();
  }

  @AfterAll
  static void stopWeChat() {
    wechat.close();
  }

  @BeforeEach
  void setUp() {
    stack = TestStack.withWeChat("admin-close", wechat);
    ops = stack.app().adminOps(CompensationSettings.defaults());
    stack.seedSku("sku-a", 10);
    stack.seedCoupon("cp-1", "u1");
  }

  @AfterEach
  void tearDown() {
    stack.assertInvariants();
    stack.close();
  }

  @Test
  void anUnpaidOrderIsClosedBeforeItsDeadlineWithStockCouponAndTimerReleased() {
    stack.place("close-00001", "u1", 900, "cp-1", new OrderItem("sku-a", 3));
    assertThat(stack.app().timers().deadlineOf(TenantIds.DEFAULT, "close-00001")).isPresent();

    Map<String, Object> answer =
        ops.forceClose().close(TenantIds.DEFAULT, "close-00001", "fraud ticket 4711", OPERATOR);

    assertThat(answer).containsEntry("outcome", "CLOSED").containsEntry("closeReason", "OPERATOR");
    assertThat(stack.dump("SELECT status, close_reason, closed_at < expire_at FROM orders"))
        .containsExactly("CLOSED|OPERATOR|1|");
    assertThat(stack.dump("SELECT sku_id, available, reserved, sold FROM stock"))
        .containsExactly("sku-a|10|0|0|");
    assertThat(stack.dump("SELECT status, locked_by_order FROM coupons"))
        .containsExactly("AVAILABLE|null|");
    assertThat(stack.dump("SELECT kind, quantity FROM stock_movements ORDER BY movement_id"))
        .containsExactly("RESERVE|3|", "RELEASE|3|");
    assertThat(stack.app().timers().deadlineOf(TenantIds.DEFAULT, "close-00001")).isEmpty();
    assertThat(stack.dump("SELECT action, subject, operator, reason FROM admin_actions"))
        .containsExactly("force-close|close-00001|" + OPERATOR + "|fraud ticket 4711|");
    assertThat(stack.app().metrics().counter("orders_force_closed")).isEqualTo(1);
  }

  @Test
  void aPrepaidOrderIsClosedAtWeChatFirst() {
    stack.place("close-00002", "u1", 900, null, new OrderItem("sku-a", 1));
    stack.app().prepays().prepay(TenantIds.DEFAULT, "close-00002", OPEN_ID, null);

    ops.forceClose().close(TenantIds.DEFAULT, "close-00002", "payer asked by phone", OPERATOR);

    assertThat(wechat.trade("close-00002").orElseThrow().state()).isEqualTo(TradeState.CLOSED);
    assertThat(stack.dump("SELECT status, close_reason FROM orders"))
        .containsExactly("CLOSED|OPERATOR|");
  }

  @Test
  void aPaidOrderIsRefusedAndNothingChanges() {
    stack.place("close-00003", "u1", 900, "cp-1", new OrderItem("sku-a", 1));
    stack.app().prepays().prepay(TenantIds.DEFAULT, "close-00003", OPEN_ID, null);
    wechat.pay("close-00003"); // notification lost: MySQL still says UNPAID
    // the first attempt finds it paid at WeChat and takes the paid path (refused, next test)
    assertThatThrownBy(
            () -> ops.forceClose().close(TenantIds.DEFAULT, "close-00003", "first try", OPERATOR))
        .isInstanceOf(AdminRefusal.class);
    List<String> before = stack.databaseState();

    assertThatThrownBy(
            () -> ops.forceClose().close(TenantIds.DEFAULT, "close-00003", "again", OPERATOR))
        .isInstanceOfSatisfying(
            AdminRefusal.class,
            e -> {
              assertThat(e.kind()).isEqualTo(AdminRefusal.Kind.CONFLICT);
              assertThat(e.code()).isEqualTo("ORDER_PAID");
            })
        .hasMessageContaining("close-00003 is PAID");

    assertThat(stack.databaseState()).isEqualTo(before);
    assertThat(stack.dump("SELECT status FROM orders")).containsExactly("PAID|");
  }

  @Test
  void paidAtWeChatButNotHereTakesThePaidPathAndIsRefused() {
    stack.place("close-00004", "u1", 900, "cp-1", new OrderItem("sku-a", 2));
    stack.app().prepays().prepay(TenantIds.DEFAULT, "close-00004", OPEN_ID, null);
    wechat.pay("close-00004");

    assertThatThrownBy(
            () -> ops.forceClose().close(TenantIds.DEFAULT, "close-00004", "stuck", OPERATOR))
        .isInstanceOfSatisfying(
            AdminRefusal.class, e -> assertThat(e.code()).isEqualTo("ORDER_PAID"))
        .hasMessageContaining("WeChat reports order close-00004 paid");

    assertThat(stack.dump("SELECT status FROM orders")).containsExactly("PAID|");
    assertThat(stack.dump("SELECT status FROM coupons")).containsExactly("USED|");
    assertThat(stack.dump("SELECT outcome FROM admin_actions").get(0)).contains("PAID_AT_WECHAT");
  }

  @Test
  void refusedInputChangesNothing() {
    stack.place("close-00005", "u1", 900, null, new OrderItem("sku-a", 1));
    List<String> before = stack.databaseState();

    assertThatThrownBy(
            () -> ops.forceClose().close(TenantIds.DEFAULT, "close-00005", " ", OPERATOR))
        .isInstanceOfSatisfying(
            AdminRefusal.class, e -> assertThat(e.code()).isEqualTo("MISSING_REASON"));
    assertThatThrownBy(
            () ->
                ops.forceClose().close(TenantIds.DEFAULT, "close-00005", "x".repeat(513), OPERATOR))
        .isInstanceOfSatisfying(
            AdminRefusal.class, e -> assertThat(e.code()).isEqualTo("REASON_TOO_LONG"));
    assertThatThrownBy(() -> ops.forceClose().close(TenantIds.DEFAULT, "../etc", "r", OPERATOR))
        .isInstanceOfSatisfying(
            AdminRefusal.class, e -> assertThat(e.code()).isEqualTo("INVALID_ORDER_ID"));
    assertThatThrownBy(
            () -> ops.forceClose().close(TenantIds.DEFAULT, "nosuch-0001", "r", OPERATOR))
        .isInstanceOfSatisfying(
            AdminRefusal.class, e -> assertThat(e.kind()).isEqualTo(AdminRefusal.Kind.NOT_FOUND))
        .hasMessage("tenant default has no order nosuch-0001");

    assertThat(stack.databaseState()).isEqualTo(before);
    assertThat(stack.count("SELECT COUNT(*) FROM admin_actions")).isZero();
    assertThat(stack.app().timers().deadlineOf(TenantIds.DEFAULT, "close-00005")).isPresent();
  }

  @Test
  void closingAClosedOrderAgainIsANoOp() {
    stack.place("close-00006", "u1", 900, null, new OrderItem("sku-a", 1));
    ops.forceClose().close(TenantIds.DEFAULT, "close-00006", "once", OPERATOR);
    List<String> before = stack.databaseState();

    Map<String, Object> again =
        ops.forceClose().close(TenantIds.DEFAULT, "close-00006", "twice", OPERATOR);

    assertThat(again).containsEntry("outcome", "ALREADY_CLOSED");
    assertThat(stack.databaseState()).isEqualTo(before);
  }
}
