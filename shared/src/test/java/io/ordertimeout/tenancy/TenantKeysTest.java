package io.ordertimeout.tenancy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ordertimeout.close.CloseResult;
import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.OrderRejected;
import io.ordertimeout.domain.OrderStatus;
import io.ordertimeout.domain.PlaceOrderCommand;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.testing.TestStack;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The tenant is part of every identity. Two tenants hold the same order, SKU and coupon ids; each
 * use case touches its own tenant's rows and timer keys only.
 */
class TenantKeysTest {
  private static final String A = "shop-a";
  private static final String B = "shop-b";

  private final TestStack stack = TestStack.create("tenant-keys");

  @AfterEach
  void tearDown() {
    stack.assertInvariants();
    stack.close();
  }

  private void onboard(String tenant, long stock) {
    assertThat(stack.app().tenants().onboard(tenant)).isTrue();
    stack.update(
        "INSERT INTO stock (tenant_id, sku_id, available, total) VALUES (?, 'sku-1', ?, ?)",
        tenant,
        stock,
        stock);
    stack.update(
        "INSERT INTO coupons (tenant_id, coupon_id, owner_user_id) VALUES (?, 'cp-1', 'u1')",
        tenant);
  }

  private void place(String tenant, String orderId, int timeoutSeconds) {
    stack
        .app()
        .placeOrders()
        .place(
            new PlaceOrderCommand(
                orderId,
                tenant,
                "u1",
                List.of(new OrderItem("sku-1", 2)),
                "cp-1",
                100,
                timeoutSeconds));
  }

  private List<String> rowsOf(String tenant) {
    return stack.dump(
        "SELECT 'order', order_id, status, coupon_id, close_reason FROM orders WHERE tenant_id = '"
            + tenant
            + "' UNION ALL SELECT 'stock', sku_id, available, reserved, sold FROM stock"
            + " WHERE tenant_id = '"
            + tenant
            + "' UNION ALL SELECT 'coupon', coupon_id, status, locked_by_order, NULL FROM coupons"
            + " WHERE tenant_id = '"
            + tenant
            + "' UNION ALL SELECT 'ledger', order_id, sku_id, kind, quantity FROM stock_movements"
            + " WHERE tenant_id = '"
            + tenant
            + "' ORDER BY 1, 2, 3, 4");
  }

  @Test
  void twoTenantsHoldTheSameIdsAndACloseTouchesOneOfThem() {
    onboard(A, 10);
    onboard(B, 10);
    place(A, "wx20261201000001", 1);
    place(B, "wx20261201000001", 600);

    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE order_id = 'wx20261201000001'"))
        .isEqualTo(2);
    assertThat(stack.app().timers().deadlineOf(A, "wx20261201000001")).isPresent();
    assertThat(stack.app().timers().deadlineOf(B, "wx20261201000001")).isPresent();
    assertThat(stack.app().timers().timersKey(A, 3, DeadlineKind.PAYMENT_TIMEOUT))
        .endsWith(":{t3}:timers@shop-a");
    List<String> bBefore = rowsOf(B);

    stack.update(
        "UPDATE orders SET expire_at = TIMESTAMPADD(SECOND, -5, NOW(3)) WHERE tenant_id = ?", A);
    CloseResult result =
        stack.app().closer().close(A, List.of("wx20261201000001"), CloseReason.TIMEOUT);

    assertThat(result.closed()).hasSize(1);
    assertThat(rowsOf(A))
        .containsExactly(
            "coupon|cp-1|AVAILABLE|null|null|",
            "ledger|wx20261201000001|sku-1|RELEASE|2|",
            "ledger|wx20261201000001|sku-1|RESERVE|2|",
            "order|wx20261201000001|CLOSED|cp-1|TIMEOUT|",
            "stock|sku-1|10|0|0|");
    assertThat(rowsOf(B)).isEqualTo(bBefore).contains("order|wx20261201000001|UNPAID|cp-1|null|");
    assertThat(stack.app().timers().deadlineOf(A, "wx20261201000001")).isEmpty();
    assertThat(stack.app().timers().deadlineOf(B, "wx20261201000001")).isPresent();
    assertThat(stack.app().orders().find(B, "wx20261201000001").orElseThrow().status())
        .isEqualTo(OrderStatus.UNPAID);
  }

  @Test
  void anOrderIdOnlyAnotherTenantHasIsUnknownToEveryUseCase() {
    onboard(A, 10);
    onboard(B, 10);
    place(A, "wx20261201000002", 600);
    List<String> aBefore = rowsOf(A);

    CloseResult closed =
        stack.app().closer().close(B, List.of("wx20261201000002"), CloseReason.USER_CANCEL);
    assertThat(closed.closed()).isEmpty();
    assertThat(closed.unknown()).containsExactly("wx20261201000002");
    assertThatThrownBy(() -> stack.app().cancels().request(B, "wx20261201000002"))
        .isInstanceOfSatisfying(
            OrderRejected.class, e -> assertThat(e.code()).isEqualTo(OrderRejected.Code.NOT_FOUND));
    assertThat(stack.app().orders().find(B, "wx20261201000002")).isEmpty();

    assertThat(rowsOf(A)).isEqualTo(aBefore);
    assertThat(stack.count("SELECT COUNT(*) FROM outbox WHERE tenant_id = ?", B)).isZero();
  }

  @Test
  void aTenantThatWasNeverOnboardedCanPlaceNothing() {
    stack.seedSku("sku-1", 10);
    assertThatThrownBy(() -> place("ghost", "wx20261201000003", 600))
        .isInstanceOfSatisfying(
            OrderRejected.class,
            e -> {
              assertThat(e.code()).isEqualTo(OrderRejected.Code.UNKNOWN_TENANT);
              assertThat(e.getMessage()).contains("tenant ghost is not onboarded");
            });
    assertThat(stack.count("SELECT COUNT(*) FROM orders")).isZero();
    assertThat(stack.count("SELECT COUNT(*) FROM outbox")).isZero();
    assertThatThrownBy(
            () ->
                stack
                    .app()
                    .coupons()
                    .issue("cp-9", "ghost", "u1", Instant.now().plusSeconds(3_600)))
        .isInstanceOfSatisfying(
            OrderRejected.class,
            e -> assertThat(e.code()).isEqualTo(OrderRejected.Code.UNKNOWN_TENANT));
    assertThat(stack.count("SELECT COUNT(*) FROM coupons")).isZero();
  }

  @Test
  void aStatementThatForgetsTheTenantFailsInsteadOfWritingTheDefault() {
    assertThatThrownBy(
            () -> stack.update("INSERT INTO stock (sku_id, available, total) VALUES ('x', 1, 1)"))
        .hasMessageContaining("tenant_id");
    assertThat(stack.count("SELECT COUNT(*) FROM stock")).isZero();
  }

  @Test
  void onboardingIsIdempotentAndRefusesMalformedIds() {
    assertThat(stack.app().tenants().onboard(A)).isTrue();
    assertThat(stack.app().tenants().onboard(A)).isFalse();
    assertThat(stack.app().tenants().all()).containsExactly(TenantIds.DEFAULT, A);
    assertThatThrownBy(() -> stack.app().tenants().onboard("Shop A"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("invalid tenant id 'Shop A'");
    assertThat(stack.app().tenants().all()).containsExactly(TenantIds.DEFAULT, A);
  }
}
