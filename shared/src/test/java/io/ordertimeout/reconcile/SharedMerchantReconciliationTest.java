package io.ordertimeout.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.PlaceOrderCommand;
import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.wechat.GatewaySettings;
import io.ordertimeout.wechat.MerchantCredentials;
import io.ordertimeout.wechat.PrepayCommand;
import io.ordertimeout.wechat.StaticMerchantDirectory;
import io.ordertimeout.wechat.WeChatPayGateway;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two tenants on one merchant get one bill: each tenant's reconciliation acts on its own trades
 * only (bound in wechat_trades, the second one under a digest out_trade_no), and a line of neither
 * is flagged once, by the first run, not once per tenant.
 */
class SharedMerchantReconciliationTest {
  private static final String A = "shop-a";
  private static final String B = "shop-b";
  private static final String ID = "wx20261204000001";
  private static final String OPEN_ID = "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o";

  private WeChatPaySimulator wechat;
  private TestStack stack;

  @BeforeEach
  void setUp() {
    wechat = WeChatPaySimulator.start();
    MerchantCredentials one = TestStack.credentialsFor(wechat);
    stack =
        TestStack.withOverrides(
            "shared-bill",
            Map.of(),
            new WeChatPayGateway(
                new StaticMerchantDirectory(Map.of(A, one, B, one, "default", one)),
                Clock.systemUTC(),
                GatewaySettings.production()
                    .withReadTimeout(Duration.ofSeconds(5))
                    .withBaseUrl(wechat.baseUrl())));
    for (String tenant : List.of(A, B)) {
      stack.app().tenants().onboard(tenant);
      stack.update(
          "INSERT INTO stock (tenant_id, sku_id, available, total) VALUES (?, 'sku-1', 10, 10)",
          tenant);
    }
  }

  @AfterEach
  void tearDown() {
    stack.assertInvariants();
    stack.close();
    wechat.close();
  }

  private String placePrepayAndPay(String tenant) {
    stack
        .app()
        .placeOrders()
        .place(
            new PlaceOrderCommand(
                ID, tenant, "u1", List.of(new OrderItem("sku-1", 1)), null, 100, 600));
    stack.app().prepays().prepay(tenant, ID, OPEN_ID, null);
    String outTradeNo =
        stack
            .dump("SELECT out_trade_no FROM wechat_trades WHERE tenant_id = '" + tenant + "'")
            .get(0)
            .replace("|", "");
    // paid at WeChat; the notification is lost (no webhook)
    return wechat.pay(outTradeNo).transactionId();
  }

  @Test
  void eachTenantAppliesItsOwnLineAndALineOfNeitherIsFlaggedOnce() {
    String paidA = placePrepayAndPay(A);
    String paidB = placePrepayAndPay(B);
    stack
        .app()
        .gateway()
        .prepay(
            A,
            new PrepayCommand(
                "stray-trade-02", "stray", 100, OPEN_ID, Instant.now().plusSeconds(600)));
    wechat.pay("stray-trade-02");
    LocalDate today = LocalDate.now(Reconciler.SHANGHAI);

    ReconciliationReport a = stack.app().reconciler().reconcile(A, today);
    ReconciliationReport b = stack.app().reconciler().reconcile(B, today);

    assertThat(a.billLines()).isEqualTo(3);
    assertThat(a.counts())
        .containsEntry("APPLIED", 1L)
        .containsEntry("OTHER_TENANT", 1L)
        .containsEntry("NO_ORDER", 1L);
    assertThat(a.flags()).isEqualTo(1);
    assertThat(b.billLines()).isEqualTo(3);
    assertThat(b.counts()).containsEntry("APPLIED", 1L).containsEntry("OTHER_TENANT", 2L);
    assertThat(b.flags()).isZero();
    assertThat(b.flagged()).isEmpty();
    assertThat(
            stack.dump(
                "SELECT tenant_id, order_id, status, transaction_id FROM orders ORDER BY tenant_id"))
        .containsExactly(
            "shop-a|" + ID + "|PAID|" + paidA + "|", "shop-b|" + ID + "|PAID|" + paidB + "|");
    assertThat(stack.dump("SELECT tenant_id, ref, category FROM reconciliation_lines ORDER BY ref"))
        .hasSize(3)
        .contains("shop-a|T:stray-trade-02|NO_ORDER|");

    ReconciliationReport bAgain = stack.app().reconciler().reconcile(B, today);
    assertThat(bAgain.counts()).isEqualTo(b.counts());
    assertThat(bAgain.newFlags()).isZero();
  }
}
