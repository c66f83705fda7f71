package io.ordertimeout.local;

import static io.ordertimeout.local.IsolationStack.TENANTS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import io.ordertimeout.embedded.wechat.Endpoint;
import io.ordertimeout.embedded.wechat.Fault;
import io.ordertimeout.embedded.wechat.SignedNotification;
import io.ordertimeout.embedded.wechat.TradeState;
import io.ordertimeout.local.TenantFingerprints.Snapshot;
import io.ordertimeout.util.Json;
import io.ordertimeout.wechat.PrepayCommand;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The webhook, the timeout sweep, the stream consumer and a compensation pass across twelve tenants
 * with overlapping ids: each acts on the tenant it is for, found by (tenant, id), and leaves every
 * other tenant's rows and Redis keys as they were. (Named to match both -Dtest=TenantIsolationTest*
 * and surefire's default *Test include.)
 */
@Tag("integration")
class TenantIsolationTestFunctionsTest extends IsolationFixture {

  private void prepay(String tenant, String orderId) {
    assertStatus(
        as(
            tenant,
            "POST",
            "/orders/" + orderId + "/prepay",
            "{\"openId\":\"" + IsolationStack.OPEN_ID + "\"}"),
        200);
  }

  @Test
  void aNotificationSignedForOneTenantIsRefusedAtAnotherssUrlAndPaysOnlyItsOwnOrder()
      throws Exception {
    prepay("t06", ORDER_2);
    prepay("t07", ORDER_2);
    SignedNotification forSix = notificationOfPaid("t06", ORDER_2);
    SignedNotification forSeven = notificationOfPaid("t07", ORDER_2);
    Snapshot before = snapshot();

    APIGatewayV2HTTPResponse sixAtSeven = iso.notify("t07", forSix);
    APIGatewayV2HTTPResponse sevenAtSix = iso.notify("t06", forSeven);

    // neither verifies with the keys of the tenant its URL names: a bad signature, WeChat retries
    assertStatus(sixAtSeven, 401);
    assertStatus(sevenAtSix, 401);
    // nor at the old URL, which serves the default tenant (no merchant keys here)
    assertThat(iso.notifyOldUrl(forSix).getStatusCode()).isIn(400, 401);
    TenantFingerprints.assertNone(
        "crossed notifications", before, snapshot(), fingerprints.buckets());

    assertStatus(iso.notify("t06", forSix), 204);
    Snapshot paidSix = assertOnly("t06's notification at t06", before, "t06");
    assertThat(hasTimer(before, "t06", null, ORDER_2)).isTrue();
    assertThat(hasTimer(paidSix, "t06", null, ORDER_2)).isFalse();
    assertThat(hasTimer(paidSix, "t07", null, ORDER_2)).isTrue();
    String txSix = merchant("t06").trade(ORDER_2).orElseThrow().transactionId();
    assertThat(row("t06", "status, transaction_id", "orders", ORDER_2))
        .isEqualTo("PAID|" + txSix + "|");
    assertThat(row("t07", "status, transaction_id", "orders", ORDER_2)).isEqualTo("UNPAID|null|");
    assertThat(stock("t06", "sku-1"))
        .isEqualTo("103|1|2|"); // 106: order 1 reserves 1, order 2 sold 2
    assertStatus(iso.notify("t07", forSeven), 204);
    Snapshot paidSeven = assertOnly("t07's notification at t07", paidSix, "t07");

    // t02's merchant reports a paid trade under t01-only's id, same amount: t02 has no such order
    iso.stack
        .app()
        .gateway()
        .prepay(
            "t02",
            new PrepayCommand(
                T01_ONLY, "x", 199, IsolationStack.OPEN_ID, Instant.now().plusSeconds(300)));
    APIGatewayV2HTTPResponse foreign = iso.notify("t02", notificationOfPaid("t02", T01_ONLY));

    assertThat(foreign.getStatusCode()).as(foreign.getBody()).isNotEqualTo(204);
    TenantFingerprints.assertNone(
        "t02's trade of t01's id", paidSeven, snapshot(), fingerprints.buckets());
    assertThat(row("t01", "status", "orders", T01_ONLY)).isEqualTo("UNPAID|");
  }

  @Test
  void aPaymentAfterCloseIsRecordedAndRefundedForItsTenantOnly() throws Exception {
    prepay("t02", ORDER_3);
    prepay("t03", ORDER_3);
    SignedNotification late = notificationOfPaid("t02", ORDER_3);
    // t02's close raced the payment: closed without a WeChat call, as if never prepaid
    iso.stack.update(
        "UPDATE orders SET prepaid_at = NULL, prepay_id = NULL"
            + " WHERE tenant_id = 't02' AND order_id = ?",
        ORDER_3);
    assertStatus(as("t02", "POST", "/orders/" + ORDER_3 + "/cancel", null), 202);
    Snapshot requested = snapshot();
    iso.consume();
    Snapshot closed = assertOnly("t02's close", requested, "t02");
    assertThat(row("t02", "status", "orders", ORDER_3)).isEqualTo("CLOSED|");

    APIGatewayV2HTTPResponse r = iso.notify("t02", late);

    assertThat(r.getStatusCode()).as(r.getBody()).isBetween(200, 204);
    assertOnly("paid after close", closed, "t02");
    assertThat(row("t02", "amount_fen, detected_by", "paid_after_close", ORDER_3))
        .isEqualTo("203|NOTIFY|");
    assertThat(iso.stack.count("SELECT COUNT(*) FROM paid_after_close")).isOne();
    assertThat(merchant("t02").trade(ORDER_3).orElseThrow().refundedFen()).isEqualTo(203);
    assertThat(merchant("t03").trade(ORDER_3).orElseThrow().refundedFen()).isZero();
    assertThat(row("t03", "status, prepay_id IS NOT NULL", "orders", ORDER_3))
        .isEqualTo("UNPAID|1|");
  }

  private SignedNotification notificationOfPaid(String tenant, String orderId) {
    merchant(tenant).pay(orderId);
    return merchant(tenant).notification(orderId).build();
  }

  @Test
  void theSweepClosesOnlyTheDueTenantsOrdersAndCouponsOfSharedIds() throws Exception {
    String due = "wx20261201000009";
    for (int n = 1; n <= TENANTS.size(); n++) {
      String t = TENANTS.get(n - 1);
      boolean soon = t.equals("t09") || t.equals("t10");
      place(t, due, n * 100 + 9, null, "[" + item("sku-1", 1) + "]", soon ? 1 : 900);
      // coupon cp-2 of every tenant, t07's valid for 1 s only: a deadline of another kind
      Instant validUntil = Instant.now().plusSeconds(t.equals("t07") ? 1 : 900);
      assertStatus(
          as(
              t,
              "POST",
              "/coupons",
              "{\"couponId\":\"cp-2\",\"userId\":\"u-"
                  + t
                  + "\",\"validUntil\":\""
                  + validUntil
                  + "\"}"),
          201);
    }
    Snapshot before = snapshot();
    await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () ->
                iso.stack.count(
                        "SELECT COUNT(*) FROM orders WHERE order_id = ? AND expire_at <= NOW(3)",
                        due)
                    == 2);
    await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () ->
                iso.stack.count(
                        "SELECT COUNT(*) FROM coupons WHERE coupon_id = 'cp-2'"
                            + " AND valid_until <= NOW(3)")
                    == 1);

    String summary = iso.sweep();

    assertThat(Json.MAPPER.readTree(summary).get("closed").asLong()).as(summary).isEqualTo(2);
    Snapshot swept = assertOnly("sweep", before, "t07", "t09", "t10");
    assertThat(hasTimer(swept, "t09", null, due)).isFalse();
    assertThat(hasTimer(swept, "t10", null, due)).isFalse();
    assertThat(hasTimer(swept, "t07", "coupon", "k:cp-2")).isFalse();
    assertThat(hasTimer(swept, "t08", "coupon", "k:cp-2")).isTrue();
    assertThat(
            iso.stack.dump(
                "SELECT tenant_id, status FROM coupons WHERE coupon_id = 'cp-2'"
                    + " AND status <> 'AVAILABLE'"))
        .containsExactly("t07|EXPIRED|");
    assertThat(row("t09", "status, close_reason", "orders", due)).isEqualTo("CLOSED|TIMEOUT|");
    assertThat(row("t10", "status, close_reason", "orders", due)).isEqualTo("CLOSED|TIMEOUT|");
    assertThat(iso.stack.count("SELECT COUNT(*) FROM orders WHERE status = 'CLOSED'")).isEqualTo(2);
  }

  @Test
  void aTenantWhoseMerchantFailsKeepsItsOrderAndACloseDueClosesOnlyItsOwn() throws Exception {
    String due = "wx20261201000008";
    for (int n = 1; n <= TENANTS.size(); n++) {
      String t = TENANTS.get(n - 1);
      boolean soon = t.equals("t09") || t.equals("t10");
      place(t, due, n * 100 + 8, null, "[" + item("sku-2", 1) + "]", soon ? 3 : 900);
      if (soon) {
        prepay(t, due);
      }
    }
    // t09's merchant fails every query: its close waits for the claim lease to run out
    merchant("t09").injectFault(Endpoint.QUERY, Fault.SYSTEM_ERROR, 1_000);
    Snapshot before = snapshot();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                iso.stack.count(
                        "SELECT COUNT(*) FROM orders WHERE order_id = ? AND expire_at <= NOW(3)",
                        due)
                    == 2);

    String summary = iso.sweep();

    assertThat(Json.MAPPER.readTree(summary).get("closed").asLong()).as(summary).isOne();
    Snapshot swept = assertOnly("sweep with t09's merchant failing", before, "t09", "t10");
    assertThat(row("t10", "status", "orders", due)).isEqualTo("CLOSED|");
    assertThat(swept.db("t09")).as("t09's rows").isEqualTo(before.db("t09"));
    assertThat(merchant("t10").trade(due).orElseThrow().state()).isEqualTo(TradeState.CLOSED);
    assertThat(merchant("t09").trade(due).orElseThrow().state()).isEqualTo(TradeState.NOTPAY);
    merchant("t09").clearFaults();

    // the sweep's hand-off of t09's order, as it writes it for a close that failed
    iso.stack
        .app()
        .redis()
        .sync()
        .xadd(
            iso.stack.app().stream().key(),
            "e",
            "{\"v\":1,\"id\":\"iso-close-due-1\",\"type\":\"close_due\",\"orderId\":\""
                + due
                + "\",\"tenantId\":\"t09\",\"at\":"
                + System.currentTimeMillis()
                + ",\"cause\":\"close_failed\"}");
    Snapshot handedOff = snapshot();
    iso.consume();

    assertOnly("consumer of t09's close_due", handedOff, "t09");
    assertThat(row("t09", "status, close_reason", "orders", due)).isEqualTo("CLOSED|TIMEOUT|");
    assertThat(merchant("t09").trade(due).orElseThrow().state()).isEqualTo(TradeState.CLOSED);
  }

  @Test
  void theConsumerClosesOnlyTheCancellingTenantsOrders() throws Exception {
    Snapshot before = snapshot();
    assertStatus(as("t03", "POST", "/orders/" + ORDER_1 + "/cancel", null), 202);
    assertStatus(as("t08", "POST", "/orders/" + ORDER_3 + "/cancel", null), 202);
    Snapshot requested = assertOnly("cancel requests", before, "t03", "t08");

    String summary = iso.consume();

    assertThat(Json.MAPPER.readTree(summary).get("closed").asLong()).as(summary).isEqualTo(2);
    Snapshot consumed = assertOnly("consumer", requested, "t03", "t08");
    assertThat(hasTimer(consumed, "t03", null, ORDER_1)).isFalse();
    assertThat(hasTimer(consumed, "t08", null, ORDER_3)).isFalse();
    assertThat(hasTimer(consumed, "t04", null, ORDER_1)).isTrue();
    assertThat(row("t03", "status, close_reason", "orders", ORDER_1))
        .isEqualTo("CLOSED|USER_CANCEL|");
    assertThat(row("t08", "status, close_reason", "orders", ORDER_3))
        .isEqualTo("CLOSED|USER_CANCEL|");
    assertThat(stock("t03", "sku-1")).isEqualTo("101|2|0|"); // 103 - order 2's two
    assertThat(iso.stack.dump("SELECT status FROM coupons WHERE tenant_id = 't03'"))
        .containsExactly("AVAILABLE|");
    assertThat(iso.stack.count("SELECT COUNT(*) FROM orders WHERE status = 'CLOSED'")).isEqualTo(2);
  }

  @Test
  void compensationRepairsAndPaysOnlyTheTenantsItFindsOff() throws Exception {
    // t10's order 1 lost its timer; t11's and t12's order 2 were prepaid long ago, only t11's paid;
    String shard = String.valueOf(iso.stack.app().timers().shardOf(ORDER_1));
    String prefix = iso.stack.app().config().keyPrefix();
    assertThat(
            iso.stack.app().redis().sync().zrem(prefix + ":{t" + shard + "}:timers@t10", ORDER_1))
        .as("t10's payment timer of %s under the contract's key", ORDER_1)
        .isOne();
    for (String t : new String[] {"t11", "t12"}) {
      prepay(t, ORDER_2);
      iso.stack.update(
          "UPDATE orders SET prepaid_at = prepaid_at - INTERVAL 10 MINUTE"
              + " WHERE tenant_id = ? AND order_id = ?",
          t,
          ORDER_2);
    }
    merchant("t11").pay(ORDER_2); // its notification is lost: no webhook is set
    // t05's order 3 is closed, its timer left behind; t06's order 3 is UNPAID
    assertStatus(as("t05", "POST", "/orders/" + ORDER_3 + "/cancel", null), 202);
    iso.relay();
    iso.consume();
    assertThat(row("t05", "status", "orders", ORDER_3)).isEqualTo("CLOSED|");
    String stale = prefix + ":{t" + iso.stack.app().timers().shardOf(ORDER_3) + "}:timers@t05";
    iso.stack.app().redis().sync().zadd(stale, System.currentTimeMillis() + 600_000, ORDER_3);
    Snapshot before = snapshot();

    String report = iso.compensate();

    var counts = Json.MAPPER.readTree(report).path("counts");
    assertThat(counts.path("rescheduled").asLong()).as(report).isOne();
    assertThat(counts.path("lost_notifications_paid").asLong()).as(report).isOne();
    assertThat(counts.path("stale_timers_removed").asLong()).as(report).isOne();
    Snapshot compensated = assertOnly("compensation", before, "t05", "t10", "t11");
    assertThat(hasTimer(compensated, "t11", null, ORDER_2)).isFalse();
    assertThat(hasTimer(compensated, "t12", null, ORDER_2)).isTrue();
    assertThat(hasTimer(compensated, "t06", null, ORDER_3)).isTrue();
    assertThat(iso.stack.app().redis().sync().zscore(stale, ORDER_3)).isNull();
    assertThat(row("t11", "status", "orders", ORDER_2)).isEqualTo("PAID|");
    assertThat(row("t12", "status", "orders", ORDER_2)).isEqualTo("UNPAID|");
    assertThat(
            iso.stack.app().redis().sync().zscore(prefix + ":{t" + shard + "}:timers@t10", ORDER_1))
        .isNotNull();
  }
}
