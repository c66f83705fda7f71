package io.ordertimeout.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.PlaceOrderCommand;
import io.ordertimeout.embedded.wechat.TradeBillWriter;
import io.ordertimeout.embedded.wechat.TradeSnapshot;
import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.wechat.GatewaySettings;
import io.ordertimeout.wechat.MerchantCredentials;
import io.ordertimeout.wechat.StaticMerchantDirectory;
import io.ordertimeout.wechat.SubMerchant;
import io.ordertimeout.wechat.WeChatPayGateway;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two sub-merchant tenants of one service provider and a direct tenant of the provider's own
 * merchant, through the real SDK against the simulator: each sub-merchant's reconciliation reads
 * the provider's bill for its sub_mchid and applies its own trade only, although both trades have
 * the same out_trade_no (one per sub-merchant); a re-run changes nothing.
 */
class SubMerchantReconciliationTest {
  private static final String PROVIDER = "1900000100";
  private static final String A = "shop-a";
  private static final String B = "shop-b";
  private static final String D = "shop-d";
  private static final String SUB_A = "1900000201";
  private static final String SUB_B = "1900000202";
  private static final String X = "shop-x";
  private static final String SUB_X = "1900000299"; // not registered with the provider
  private static final String ID = "wx20261204000001";
  private static final String OPEN_ID = "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o";

  private WeChatPaySimulator wechat;
  private TestStack stack;

  @BeforeEach
  void setUp() {
    wechat = WeChatPaySimulator.start(Clock.systemUTC(), PROVIDER);
    wechat.subMerchants().register(SUB_A, null);
    wechat.subMerchants().register(SUB_B, null);
    MerchantCredentials direct = TestStack.credentialsFor(wechat);
    stack =
        TestStack.withOverrides(
            "sub-bill",
            Map.of(),
            new WeChatPayGateway(
                new StaticMerchantDirectory(
                    Map.of(
                        A,
                        subMerchant(direct, SUB_A),
                        B,
                        subMerchant(direct, SUB_B),
                        D,
                        direct,
                        X,
                        subMerchant(direct, SUB_X),
                        "default",
                        direct)),
                Clock.systemUTC(),
                GatewaySettings.production()
                    .withReadTimeout(Duration.ofSeconds(5))
                    .withBaseUrl(wechat.baseUrl())));
    for (String tenant : List.of(A, B, D)) {
      stack.app().tenants().onboard(tenant);
      stack.update(
          "INSERT INTO stock (tenant_id, sku_id, available, total) VALUES (?, 'sku-1', 10, 10)",
          tenant);
    }
  }

  private static MerchantCredentials subMerchant(MerchantCredentials provider, String sub) {
    return new MerchantCredentials(
        provider.mchid(),
        provider.appid(),
        provider.merchantSerialNumber(),
        provider.privateKeyPem(),
        provider.apiV3Key(),
        provider.wechatPayPublicKeyId(),
        provider.wechatPayPublicKeyPem(),
        provider.notifyUrl(),
        new SubMerchant(sub, null));
  }

  @AfterEach
  void tearDown() {
    stack.assertInvariants();
    stack.close();
    wechat.close();
  }

  private String placeAndPrepay(String tenant) {
    stack
        .app()
        .placeOrders()
        .place(
            new PlaceOrderCommand(
                ID, tenant, "u1", List.of(new OrderItem("sku-1", 1)), null, 100, 600));
    stack.app().prepays().prepay(tenant, ID, OPEN_ID, null);
    return stack
        .dump("SELECT out_trade_no FROM wechat_trades WHERE tenant_id = '" + tenant + "'")
        .get(0)
        .replace("|", "");
  }

  private List<String> orders() {
    return stack.dump("SELECT tenant_id, status, transaction_id FROM orders ORDER BY tenant_id");
  }

  @Test
  void eachSubMerchantReadsItsOwnBillAndAppliesOnlyItsOwnTrade() {
    String tradeA = placeAndPrepay(A);
    String tradeB = placeAndPrepay(B);
    String tradeD = placeAndPrepay(D);
    assertThat(stack.dump("SELECT tenant_id, mchid, out_trade_no FROM wechat_trades ORDER BY 1"))
        .containsExactly(
            A + "|" + SUB_A + "|" + ID + "|",
            B + "|" + SUB_B + "|" + ID + "|",
            D + "|" + PROVIDER + "|" + ID + "|");
    // paid at WeChat; the notification is lost (no webhook)
    String paidA = wechat.subMerchants().pay(SUB_A, tradeA).transactionId();
    LocalDate today = LocalDate.now(Reconciler.SHANGHAI);

    // B's bill has no line (its trade is unpaid): A's payment is not B's, whatever its number
    ReconciliationReport b = stack.app().reconciler().reconcile(B, today);
    assertThat(b.billLines()).isZero();
    assertThat(b.mchid()).isEqualTo(SUB_B);
    assertThat(orders())
        .containsExactly(A + "|UNPAID|null|", B + "|UNPAID|null|", D + "|UNPAID|null|");

    ReconciliationReport a = stack.app().reconciler().reconcile(A, today);
    assertThat(a.mchid()).isEqualTo(SUB_A);
    assertThat(a.billLines()).isEqualTo(1);
    assertThat(a.counts()).containsEntry("APPLIED", 1L);
    assertThat(a.flags()).isZero();
    assertThat(orders())
        .containsExactly(A + "|PAID|" + paidA + "|", B + "|UNPAID|null|", D + "|UNPAID|null|");
    assertThat(stack.dump("SELECT mchid, ref, tenant_id, category FROM reconciliation_lines"))
        .containsExactly(SUB_A + "|T:" + tradeA + "|" + A + "|APPLIED|");

    // B and the direct tenant pay too; each reads its own bill
    String paidB = wechat.subMerchants().pay(SUB_B, tradeB).transactionId();
    String paidD = wechat.pay(tradeD).transactionId();
    wechat.tradeBills().republish(today);
    ReconciliationReport b2 = stack.app().reconciler().reconcile(B, today);
    ReconciliationReport d = stack.app().reconciler().reconcile(D, today);
    assertThat(b2.billLines()).isEqualTo(1);
    assertThat(b2.counts()).containsEntry("APPLIED", 1L);
    assertThat(d.mchid()).isEqualTo(PROVIDER);
    assertThat(d.billLines()).isEqualTo(1);
    assertThat(d.counts()).containsEntry("APPLIED", 1L);
    List<String> settled =
        List.of(A + "|PAID|" + paidA + "|", B + "|PAID|" + paidB + "|", D + "|PAID|" + paidD + "|");
    assertThat(orders()).containsExactlyElementsOf(settled);
    List<String> lines =
        List.of(
            PROVIDER + "|T:" + tradeD + "|" + D + "|APPLIED|",
            SUB_A + "|T:" + tradeA + "|" + A + "|APPLIED|",
            SUB_B + "|T:" + tradeB + "|" + B + "|APPLIED|");
    String linesSql = "SELECT mchid, ref, tenant_id, category FROM reconciliation_lines ORDER BY 1";
    assertThat(stack.dump(linesSql)).containsExactlyElementsOf(lines);

    // a re-run of every tenant changes nothing more
    wechat.tradeBills().republish(today);
    for (String tenant : List.of(A, B, D)) {
      ReconciliationReport again = stack.app().reconciler().reconcile(tenant, today);
      assertThat(again.billLines()).isEqualTo(1);
      assertThat(again.newFlags()).isZero();
      assertThat(again.counts()).containsEntry("APPLIED", 1L);
    }
    assertThat(orders()).containsExactlyElementsOf(settled);
    assertThat(stack.dump(linesSql)).containsExactlyElementsOf(lines);
  }

  @Test
  void aLineOfAnotherSubMerchantOfTheProviderIsAMismatchNeverApplied(@TempDir Path dir)
      throws IOException {
    String tradeA = placeAndPrepay(A);
    TradeSnapshot paid = wechat.subMerchants().pay(SUB_A, tradeA);
    LocalDate today = LocalDate.now(Reconciler.SHANGHAI);
    // B's bill as WeChat could never serve it: a line of sub-merchant A, same provider
    Path bill = dir.resolve("bill.csv");
    try (Writer out = Files.newBufferedWriter(bill, StandardCharsets.UTF_8)) {
      TradeBillWriter writer = new TradeBillWriter(out, wechat.appid(), PROVIDER, SUB_A);
      writer.payment(Instant.now(), paid.transactionId(), tradeA, OPEN_ID, 100, "cake");
      writer.finish();
    }
    wechat.tradeBills().plant(SUB_B, today, bill);

    ReconciliationReport b = stack.app().reconciler().reconcile(B, today);

    assertThat(b.billLines()).isEqualTo(1);
    assertThat(b.counts()).containsEntry("MCHID_MISMATCH", 1L);
    assertThat(orders()).containsExactly(A + "|UNPAID|null|");
    assertThat(stack.dump("SELECT mchid, ref, tenant_id, category FROM reconciliation_lines"))
        .containsExactly(SUB_B + "|T:" + tradeA + "|" + B + "|MCHID_MISMATCH|");

    ReconciliationReport a = stack.app().reconciler().reconcile(A, today);
    assertThat(a.counts()).containsEntry("APPLIED", 1L);
    assertThat(orders()).containsExactly(A + "|PAID|" + paid.transactionId() + "|");
  }

  @Test
  void aSubMchidTheProviderDoesNotHaveIsRefusedAndChangesNothing() {
    LocalDate today = LocalDate.now(Reconciler.SHANGHAI);

    assertThatThrownBy(() -> stack.app().reconciler().reconcile(X, today))
        .hasMessageContaining("PARAM_ERROR");

    assertThat(stack.dump("SELECT tenant_id FROM reconciliation_reports")).isEmpty();
    assertThat(stack.dump("SELECT ref FROM reconciliation_lines")).isEmpty();
  }
}
