package io.ordertimeout.payment;

import static io.ordertimeout.testing.Deadlines.expireNow;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.Order;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.OrderRejected;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.wechat.Endpoint;
import io.ordertimeout.embedded.wechat.Fault;
import io.ordertimeout.http.ApiError;
import io.ordertimeout.http.OrderViews;
import io.ordertimeout.http.PrepayRequests;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.testing.WeChatStackFixture;
import io.ordertimeout.wechat.MiniProgramPayment;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** JSAPI prepay against the WeChat Pay simulator: the mark, the call, the stored prepay_id. */
class PrepayServiceTest extends WeChatStackFixture {
  /** The stack each test runs on; PrepayServiceAffectedRowsTest swaps the JDBC URL. */
  @Override
  protected TestStack newStack() {
    return TestStack.withWeChat("prepay-svc", wechat);
  }

  @BeforeEach
  void seed() {
    stack.seedSku("sku-a", 100);
    stack.seedCoupon("cp-1", "u1");
  }

  private MiniProgramPayment prepay(String orderId) {
    return stack.app().prepays().prepay(TenantIds.DEFAULT, orderId, OPEN_ID, null);
  }

  private void assertApiError(Runnable call, int status, String code) {
    assertThatThrownBy(call::run)
        .isInstanceOfSatisfying(
            OrderRejected.class,
            e -> {
              assertThat(ApiError.from(e).status()).isEqualTo(status);
              assertThat(e.code().name()).isEqualTo(code);
            });
  }

  @Test
  void aPrepayStoresWeChatsPrepayIdAndARepeatAnswersTheSameOne() {
    stack.place("ord-pp-01", "u1", 600, "cp-1", new OrderItem("sku-a", 2));

    MiniProgramPayment first =
        stack.app().prepays().prepay(TenantIds.DEFAULT, "ord-pp-01", OPEN_ID, "Green tea");
    MiniProgramPayment again =
        stack.app().prepays().prepay(TenantIds.DEFAULT, "ord-pp-01", OPEN_ID, "Green tea");

    assertThat(again.prepayId()).isEqualTo(first.prepayId());
    assertThat(stack.dump("SELECT status, prepay_id, prepaid_at IS NOT NULL FROM orders"))
        .containsExactly("UNPAID|" + first.prepayId() + "|1|");
    var trade = wechat.trade("ord-pp-01").orElseThrow();
    assertThat(trade.prepayId()).isEqualTo(first.prepayId());
    assertThat(trade.amountFen()).isEqualTo(100);
    assertThat(trade.payerOpenId()).isEqualTo(OPEN_ID);
    assertThat(stack.app().metrics().counter("orders_prepaid")).isEqualTo(2);

    ObjectNode view = PrepayRequests.view("ord-pp-01", first);
    assertThat(view.get("orderId").asText()).isEqualTo("ord-pp-01");
    assertThat(view.get("prepayId").asText()).isEqualTo(first.prepayId());
    assertThat(view.get("appId").asText()).isEqualTo(wechat.appid());
    assertThat(view.get("package").asText()).isEqualTo("prepay_id=" + first.prepayId());
    assertThat(view.get("signType").asText()).isEqualTo("RSA");
    assertThat(view.get("paySign").asText()).isNotBlank();
    assertThat(view.get("timeStamp").asText()).isNotBlank();
    assertThat(view.get("nonceStr").asText()).isNotBlank();

    Order order = stack.app().orders().find(TenantIds.DEFAULT, "ord-pp-01").orElseThrow();
    ObjectNode json = OrderViews.of(order);
    assertThat(json.get("status").asText()).isEqualTo("UNPAID");
    assertThat(json.get("tenantId").asText()).isEqualTo("default");
    assertThat(json.get("couponId").asText()).isEqualTo("cp-1");
    assertThat(json.get("prepaid").asBoolean()).isTrue();
    assertThat(json.get("amountFen").asLong()).isEqualTo(100);
    assertThat(json.get("expireAt").asText()).isEqualTo(order.expireAt().toString());
    assertThat(json.get("paidAt").isNull()).isTrue();
    assertThat(json.get("items").toString()).isEqualTo("[{\"skuId\":\"sku-a\",\"quantity\":2}]");
  }

  @Test
  void ordersThatCannotBePaidAreRefusedWithoutAWeChatCall() {
    stack.place("ord-pp-closed", "u1", 600, null, new OrderItem("sku-a", 1));
    stack
        .app()
        .closer()
        .close(TenantIds.DEFAULT, List.of("ord-pp-closed"), CloseReason.USER_CANCEL);
    stack.place("ord-pp-due", "u1", 600, null, new OrderItem("sku-a", 1));
    expireNow(stack, "ord-pp-due");
    List<String> before = stack.databaseState();
    int calls = wechat.callCount(Endpoint.PREPAY);

    assertApiError(() -> prepay("ord-pp-none"), 404, "NOT_FOUND");
    assertApiError(() -> prepay("ord-pp-closed"), 409, "ORDER_NOT_UNPAID");
    assertApiError(() -> prepay("ord-pp-due"), 409, "ORDER_EXPIRED");

    assertThat(stack.databaseState()).isEqualTo(before);
    assertThat(wechat.callCount(Endpoint.PREPAY)).isEqualTo(calls);
    ObjectNode closed =
        OrderViews.of(stack.app().orders().find(TenantIds.DEFAULT, "ord-pp-closed").orElseThrow());
    assertThat(closed.get("status").asText()).isEqualTo("CLOSED");
    assertThat(closed.get("closeReason").asText()).isEqualTo("USER_CANCEL");
    assertThat(closed.get("closedAt").isNull()).isFalse();
    assertThat(closed.get("couponId").isNull()).isTrue();
  }

  @Test
  void weChatFailuresBecome503And409AndLeaveTheOrderUnpaid() {
    stack.place("ord-pp-02", "u1", 600, null, new OrderItem("sku-a", 1));
    wechat.injectFault(Endpoint.PREPAY, Fault.SYSTEM_ERROR, 1);

    assertApiError(() -> prepay("ord-pp-02"), 503, "WECHAT_UNAVAILABLE");
    assertThat(stack.dump("SELECT status, prepay_id FROM orders")).containsExactly("UNPAID|null|");
    assertThat(stack.app().metrics().counter("prepay_wechat_failures")).isEqualTo(1);

    String prepayId = prepay("ord-pp-02").prepayId(); // the retry goes through
    assertApiError( // other parameters for the same out_trade_no
        () ->
            stack.app().prepays().prepay(TenantIds.DEFAULT, "ord-pp-02", OPEN_ID, "Something else"),
        409,
        "PREPAY_REFUSED");
    wechat.pay("ord-pp-02"); // paid at WeChat, notification not here yet
    assertApiError(() -> prepay("ord-pp-02"), 409, "PREPAY_REFUSED");

    assertThat(stack.dump("SELECT status, prepay_id FROM orders"))
        .containsExactly("UNPAID|" + prepayId + "|");
  }

  @Test
  void aPrepayWeChatRejectsForItsOwnReasonsIs502() {
    stack.place("ord-pp-03", "u1", 600, null, new OrderItem("sku-a", 1));
    var other = TestStack.credentialsFor(wechat);
    var wrongApp =
        new io.ordertimeout.wechat.MerchantCredentials(
            other.mchid(),
            "wx0000000000000000",
            other.merchantSerialNumber(),
            other.privateKeyPem(),
            other.apiV3Key(),
            other.wechatPayPublicKeyId(),
            other.wechatPayPublicKeyPem(),
            other.notifyUrl());
    var gateway =
        new io.ordertimeout.wechat.WeChatPayGateway(
            new io.ordertimeout.wechat.StaticMerchantDirectory(
                java.util.Map.of("default", wrongApp)),
            java.time.Clock.systemUTC(),
            io.ordertimeout.wechat.GatewaySettings.production().withBaseUrl(wechat.baseUrl()));
    PrepayService prepays =
        new PrepayService(
            new io.ordertimeout.mysql.Tx(stack.app().dataSource()), gateway, stack.app().metrics());

    assertApiError(
        () -> prepays.prepay(TenantIds.DEFAULT, "ord-pp-03", OPEN_ID, null),
        502,
        "WECHAT_REJECTED");
    assertThat(stack.app().metrics().counter("prepay_wechat_rejected")).isEqualTo(1);
    assertThat(stack.dump("SELECT status, prepay_id FROM orders")).containsExactly("UNPAID|null|");
    assertThat(wechat.trade("ord-pp-03")).isEmpty();
  }

  @Test
  void withoutAGatewayPrepayIs503() {
    try (TestStack plain = TestStack.create("prepay-nogw")) {
      plain.seedSku("sku-a", 10);
      plain.place("ord-pp-04", "u1", 600, null, new OrderItem("sku-a", 1));
      List<String> before = plain.databaseState();

      assertApiError(
          () -> plain.app().prepays().prepay(TenantIds.DEFAULT, "ord-pp-04", OPEN_ID, null),
          503,
          "PAYMENTS_DISABLED");

      assertThat(plain.databaseState()).isEqualTo(before);
    }
  }
}
