package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import io.ordertimeout.embedded.wechat.SignedNotification;
import io.ordertimeout.embedded.wechat.TradeState;
import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import io.ordertimeout.local.TenantFingerprints.Snapshot;
import io.ordertimeout.util.Json;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The isolation suite with both merchant modes side by side: t01 is a direct merchant, t02..t12 are
 * sub-merchants of one service provider (each its own sub_mchid, all the provider's keys and its
 * one notify URL), and every tenant holds the same order ids. Through the functions of
 * template.yaml: each sub-merchant's trade is bound under its own sub_mchid, a notification at the
 * provider's URL pays only the tenant its signed sub_mchid names, never another sub-merchant's
 * order of the same id, a close or a compensation pass acts on one sub-merchant's trade only.
 * (Named to match both -Dtest=TenantIsolationTest* and surefire's default *Test include.)
 */
@Tag("integration")
class TenantIsolationTestPartnerTest extends IsolationFixture {
  private static final String COMPENSATED = "wx20261201000021";

  @BeforeAll
  static void directAndSubMerchants() {
    // IsolationFixture started one merchant per tenant; this class has one direct merchant and
    // one provider with eleven sub-merchants
    merchants.close();
    merchants = IsolationStack.Merchants.partner();
  }

  private static WeChatPaySimulator provider() {
    return merchants.of("t02");
  }

  private static String sub(String tenant) {
    return merchants.subMchid(tenant);
  }

  private void prepay(String tenant, String orderId) {
    assertStatus(
        as(
            tenant,
            "POST",
            "/orders/" + orderId + "/prepay",
            "{\"openId\":\"" + IsolationStack.OPEN_ID + "\"}"),
        200);
  }

  /** The sub-merchant pays at WeChat; the provider's notification of it. */
  private SignedNotification paid(String tenant, String orderId) {
    provider().subMerchants().pay(sub(tenant), orderId);
    return provider().subMerchants().notification(sub(tenant), orderId).build();
  }

  private TradeState tradeState(String tenant, String orderId) {
    return provider().subMerchants().trade(sub(tenant), orderId).orElseThrow().state();
  }

  @Test
  void eachModesTradesGoThroughItsOwnApisAndBindUnderItsOwnMchid() {
    for (String t : new String[] {"t01", "t02", "t03"}) {
      prepay(t, ORDER_1);
    }

    // the same out_trade_no three times: one direct merchant and two sub-merchants
    assertThat(row("t01", "mchid, out_trade_no", "wechat_trades", ORDER_1))
        .isEqualTo(merchant("t01").mchid() + "|" + ORDER_1 + "|");
    assertThat(row("t02", "mchid, out_trade_no", "wechat_trades", ORDER_1))
        .isEqualTo(sub("t02") + "|" + ORDER_1 + "|");
    assertThat(row("t03", "mchid, out_trade_no", "wechat_trades", ORDER_1))
        .isEqualTo(sub("t03") + "|" + ORDER_1 + "|");
    assertThat(merchant("t01").trade(ORDER_1).orElseThrow().state()).isEqualTo(TradeState.NOTPAY);
    assertThat(provider().trade(ORDER_1)).as("a trade of the provider's own").isEmpty();
    assertThat(tradeState("t02", ORDER_1)).isEqualTo(TradeState.NOTPAY);
    assertThat(tradeState("t03", ORDER_1)).isEqualTo(TradeState.NOTPAY);
    assertThat(provider().subMerchants().notifyUrl(sub("t02"), ORDER_1))
        .contains("https://mall.example.com/wechatpay/notify/provider/" + provider().mchid());
    assertThat(provider().subMerchants().trade(sub("t04"), ORDER_1)).isEmpty();
  }

  @Test
  void aNotificationForOneSubMerchantNeverTouchesAnotherSubMerchantsOrderOfTheSameId()
      throws Exception {
    prepay("t02", ORDER_2);
    prepay("t03", ORDER_2);
    prepay("t01", ORDER_2);
    SignedNotification forTwo = paid("t02", ORDER_2);
    Snapshot before = snapshot();

    APIGatewayV2HTTPResponse r = iso.notifyProvider(provider().mchid(), forTwo);

    assertStatus(r, 204);
    assertOnly("t02's notification at the provider's URL", before, "t02");
    assertThat(row("t02", "status", "orders", ORDER_2)).isEqualTo("PAID|");
    assertThat(row("t03", "status", "orders", ORDER_2)).isEqualTo("UNPAID|");
    assertThat(row("t01", "status", "orders", ORDER_2)).isEqualTo("UNPAID|");
    assertThat(tradeState("t03", ORDER_2)).isEqualTo(TradeState.NOTPAY);
  }

  @Test
  void theProvidersNotificationAtASubMerchantTenantsOwnUrlChangesNothing() throws Exception {
    prepay("t04", ORDER_1);
    SignedNotification forFour = paid("t04", ORDER_1);
    Snapshot before = snapshot();

    APIGatewayV2HTTPResponse own = iso.notify("t04", forFour);
    APIGatewayV2HTTPResponse direct = iso.notify("t01", forFour);

    assertStatus(own, 403);
    assertThat(json(own).get("code").asText()).isEqualTo("FAIL");
    assertStatus(direct, 401); // t01's keys are not the provider's
    TenantFingerprints.assertNone(
        "a sub-merchant's notification at tenant URLs", before, snapshot(), fingerprints.buckets());
    assertStatus(iso.notifyProvider(provider().mchid(), forFour), 204);
    assertThat(row("t04", "status", "orders", ORDER_1)).isEqualTo("PAID|");
  }

  @Test
  void closingOneSubMerchantsOrderLeavesTheOtherSubMerchantsTradeOfTheSameIdPayable()
      throws Exception {
    prepay("t05", ORDER_3);
    prepay("t06", ORDER_3);
    assertStatus(as("t06", "POST", "/orders/" + ORDER_3 + "/cancel", null), 202);
    iso.consume();
    assertThat(row("t06", "status, close_reason", "orders", ORDER_3))
        .isEqualTo("CLOSED|USER_CANCEL|");
    assertThat(tradeState("t06", ORDER_3)).isEqualTo(TradeState.CLOSED);
    assertThat(tradeState("t05", ORDER_3)).isEqualTo(TradeState.NOTPAY);
    Snapshot before = snapshot();

    assertStatus(iso.notifyProvider(provider().mchid(), paid("t05", ORDER_3)), 204);

    assertOnly("t05's payment", before, "t05");
    assertThat(row("t05", "status", "orders", ORDER_3)).isEqualTo("PAID|");
    assertThat(row("t06", "status", "orders", ORDER_3)).isEqualTo("CLOSED|");
  }

  @Test
  void compensationPaysOnlyTheSubMerchantWhoseTradeWeChatReportsPaid() throws Exception {
    for (String t : new String[] {"t07", "t08"}) {
      place(t, COMPENSATED, 500, null, "[" + item("sku-2", 1) + "]");
      prepay(t, COMPENSATED);
      iso.stack.update(
          "UPDATE orders SET prepaid_at = prepaid_at - INTERVAL 10 MINUTE"
              + " WHERE tenant_id = ? AND order_id = ?",
          t,
          COMPENSATED);
    }
    provider().subMerchants().pay(sub("t07"), COMPENSATED); // its notification is lost
    Snapshot before = snapshot();

    String report = iso.compensate();

    var counts = Json.MAPPER.readTree(report).path("counts");
    assertThat(counts.path("lost_notifications_paid").asLong()).as(report).isOne();
    assertOnly("compensation", before, "t07");
    assertThat(row("t07", "status", "orders", COMPENSATED)).isEqualTo("PAID|");
    assertThat(row("t08", "status", "orders", COMPENSATED)).isEqualTo("UNPAID|");
    assertThat(tradeState("t08", COMPENSATED)).isEqualTo(TradeState.NOTPAY);
    assertThat(iso.stack.count("SELECT COUNT(*) FROM paid_after_close")).isZero();
  }
}
