package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import io.ordertimeout.embedded.wechat.SignedNotification;
import io.ordertimeout.embedded.wechat.TradeState;
import io.ordertimeout.local.TenantFingerprints.Snapshot;
import io.ordertimeout.util.Json;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The isolation suite with every tenant on ONE WeChat Pay merchant and one credential, as {@code
 * ./local tenant add} gives each local tenant and a single-merchant secret gives on AWS: WeChat's
 * out_trade_no is unique per merchant, the order ids are unique per tenant, and the twelve tenants
 * hold the same ids. Through the functions of template.yaml (the order API, the webhook, the stream
 * consumer, a compensation pass), each tenant's trade stays its own: a prepay of an id another
 * tenant paid gets a trade of its own, one tenant's close never closes another's trade, a
 * notification of one tenant's trade at another's URL verifies (the same keys) and changes nothing,
 * and compensation pays only the tenant whose trade WeChat reports paid. (Named to match both
 * -Dtest=TenantIsolationTest* and surefire's default *Test include.)
 */
@Tag("integration")
class TenantIsolationTestSharedMerchantTest extends IsolationFixture {
  // The merchant lives as long as the class and keeps its trades, while each test has a stack of
  // its own: every (merchant, id) is prepaid in one test only.
  private static final String NOTIFIED = "wx20261201000011";
  private static final String COMPENSATED = "wx20261201000012";

  @BeforeAll
  static void everyTenantOnOneMerchant() {
    // IsolationFixture started one merchant per tenant; this class shares one among them all
    merchants.close();
    merchants = IsolationStack.Merchants.shared();
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

  /** The out_trade_no the tenant's order is bound to at the shared merchant. */
  private String trade(String tenant, String orderId) {
    String row = row(tenant, "out_trade_no", "wechat_trades", orderId);
    return row.substring(0, row.length() - 1);
  }

  private SignedNotification paid(String tenant, String orderId) {
    String trade = trade(tenant, orderId);
    merchant(tenant).pay(trade);
    return merchant(tenant).notification(trade).build();
  }

  @Test
  void theTwelveTenantsShareOneMerchantAndEachOfTheirPrepaysOfOneIdIsItsOwnTrade() {
    assertThat(merchants.byTenant.values().stream().distinct()).hasSize(1);
    for (String t : IsolationStack.TENANTS) {
      prepay(t, ORDER_1);
    }
    long trades = IsolationStack.TENANTS.stream().map(t -> trade(t, ORDER_1)).distinct().count();
    assertThat(trades).isEqualTo(IsolationStack.TENANTS.size());
    // the first keeps the order id as its out_trade_no; the others get one derived from theirs
    assertThat(trade("t01", ORDER_1)).isEqualTo(ORDER_1);
    for (String t : IsolationStack.TENANTS) {
      assertThat(merchant(t).trade(trade(t, ORDER_1)).orElseThrow().state())
          .isEqualTo(TradeState.NOTPAY);
    }
  }

  @Test
  void aPaidTradeOfOneTenantNeitherBlocksNorClosesAnotherTenantsOrderOfTheSameId()
      throws Exception {
    prepay("t01", ORDER_2);
    assertStatus(iso.notify("t01", paid("t01", ORDER_2)), 204);
    assertThat(row("t01", "status", "orders", ORDER_2)).isEqualTo("PAID|");

    // before trade bindings: WeChat answered ORDERPAID (A's trade), 409 PREPAY_REFUSED
    prepay("t02", ORDER_2);
    Snapshot before = snapshot();
    assertStatus(as("t02", "POST", "/orders/" + ORDER_2 + "/cancel", null), 202);
    iso.consume();

    assertOnly("t02's cancel", before, "t02");
    assertThat(row("t02", "status, close_reason", "orders", ORDER_2))
        .isEqualTo("CLOSED|USER_CANCEL|");
    assertThat(merchant("t02").trade(trade("t02", ORDER_2)).orElseThrow().state())
        .isEqualTo(TradeState.CLOSED);
    assertThat(merchant("t01").trade(ORDER_2).orElseThrow().state()).isEqualTo(TradeState.SUCCESS);
    assertThat(row("t01", "status", "orders", ORDER_2)).isEqualTo("PAID|");
  }

  @Test
  void closingOneTenantsOrderLeavesTheOtherTenantsTradeOfTheSameIdPayable() throws Exception {
    prepay("t05", ORDER_3);
    prepay("t06", ORDER_3);
    assertStatus(as("t06", "POST", "/orders/" + ORDER_3 + "/cancel", null), 202);
    iso.consume();
    assertThat(row("t06", "status", "orders", ORDER_3)).isEqualTo("CLOSED|");
    // before: t06's close closed the trade ORDER_3, which was t05's, and t05's payer got 409
    assertThat(merchant("t05").trade(trade("t05", ORDER_3)).orElseThrow().state())
        .isEqualTo(TradeState.NOTPAY);
    Snapshot before = snapshot();

    assertStatus(iso.notify("t05", paid("t05", ORDER_3)), 204);

    assertOnly("t05's payment", before, "t05");
    assertThat(row("t05", "status", "orders", ORDER_3)).isEqualTo("PAID|");
    assertThat(row("t06", "status", "orders", ORDER_3)).isEqualTo("CLOSED|");
  }

  @Test
  void aNotificationOfOneTenantsTradeAtAnotherTenantsUrlVerifiesAndChangesNothing()
      throws Exception {
    for (String t : new String[] {"t03", "t04"}) {
      place(t, NOTIFIED, 500, null, "[" + item("sku-1", 1) + "]");
      prepay(t, NOTIFIED);
    }
    SignedNotification forThree = paid("t03", NOTIFIED);
    Snapshot before = snapshot();

    // the same keys verify it at t04's URL; the trade is t03's, so t04 has no such order
    APIGatewayV2HTTPResponse atFour = iso.notify("t04", forThree);

    assertStatus(atFour, 404);
    assertThat(json(atFour).get("code").asText()).isEqualTo("FAIL");
    TenantFingerprints.assertNone(
        "t03's notification at t04", before, snapshot(), fingerprints.buckets());
    assertThat(row("t04", "status", "orders", NOTIFIED)).isEqualTo("UNPAID|");

    assertStatus(iso.notify("t03", forThree), 204);
    assertOnly("t03's notification at t03", before, "t03");
    assertThat(row("t03", "status", "orders", NOTIFIED)).isEqualTo("PAID|");
  }

  @Test
  void compensationPaysOnlyTheTenantWhoseTradeWeChatReportsPaidAndRefundsNobody() throws Exception {
    for (String t : new String[] {"t07", "t08"}) {
      place(t, COMPENSATED, 500, null, "[" + item("sku-2", 1) + "]");
      prepay(t, COMPENSATED);
      iso.stack.update(
          "UPDATE orders SET prepaid_at = prepaid_at - INTERVAL 10 MINUTE"
              + " WHERE tenant_id = ? AND order_id = ?",
          t,
          COMPENSATED);
    }
    merchant("t07").pay(trade("t07", COMPENSATED)); // its notification is lost
    Snapshot before = snapshot();

    String report = iso.compensate();

    var counts = Json.MAPPER.readTree(report).path("counts");
    assertThat(counts.path("lost_notifications_paid").asLong()).as(report).isOne();
    assertOnly("compensation", before, "t07");
    assertThat(row("t07", "status", "orders", COMPENSATED)).isEqualTo("PAID|");
    assertThat(row("t08", "status", "orders", COMPENSATED)).isEqualTo("UNPAID|");
    for (String t : new String[] {"t07", "t08"}) {
      assertThat(merchant(t).trade(trade(t, COMPENSATED)).orElseThrow().refundedFen())
          .as("%s's trade refunded", t)
          .isZero();
    }
    assertThat(iso.stack.count("SELECT COUNT(*) FROM paid_after_close")).isZero();
  }
}
