package io.ordertimeout.functions.notify;

import static org.assertj.core.api.Assertions.assertThat;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.amazonaws.services.lambda.runtime.tests.EventLoader;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.PlaceOrderCommand;
import io.ordertimeout.embedded.wechat.SignedNotification;
import io.ordertimeout.testing.LambdaTestContext;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.testing.WeChatStackFixture;
import io.ordertimeout.util.Json;
import io.ordertimeout.wechat.GatewaySettings;
import io.ordertimeout.wechat.MerchantCredentials;
import io.ordertimeout.wechat.StaticMerchantDirectory;
import io.ordertimeout.wechat.SubMerchant;
import io.ordertimeout.wechat.WeChatPayGateway;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The service provider's webhook, {@code POST /wechatpay/notify/provider/{spMchid}}, through the
 * real SDK: the fixture's simulator is the provider, shop-a and shop-b are two of its
 * sub-merchants, and both have an order with the same id. A notification is verified with the
 * provider's keys and pays the order of the tenant its signed sub_mchid names, and only that one.
 */
class ProviderWebhookTest extends WeChatStackFixture {
  static final String EVENT = "../../events/payment-notify-wechat-success.json";
  static final String A = "shop-a";
  static final String B = "shop-b";
  static final String SUB_A = "1900000201";
  static final String SUB_B = "1900000202";
  static final String SUB_APPID_A = "wx1111111111111111";

  private PaymentNotifyHandler handler;

  @BeforeAll
  static void registerSubMerchants() {
    simulatorOf(ProviderWebhookTest.class).subMerchants().register(SUB_A, SUB_APPID_A);
    simulatorOf(ProviderWebhookTest.class).subMerchants().register(SUB_B, null);
  }

  static MerchantCredentials subMerchant(String sub, String subAppid) {
    MerchantCredentials p = TestStack.credentialsFor(simulatorOf(ProviderWebhookTest.class));
    return new MerchantCredentials(
        p.mchid(),
        p.appid(),
        p.merchantSerialNumber(),
        p.privateKeyPem(),
        p.apiV3Key(),
        p.wechatPayPublicKeyId(),
        p.wechatPayPublicKeyPem(),
        p.notifyUrl(),
        new SubMerchant(sub, subAppid));
  }

  @Override
  protected TestStack newStack() {
    WeChatPayGateway gateway =
        new WeChatPayGateway(
            new StaticMerchantDirectory(
                Map.of(A, subMerchant(SUB_A, SUB_APPID_A), B, subMerchant(SUB_B, null))),
            Clock.systemUTC(),
            GatewaySettings.production().withBaseUrl(wechat.baseUrl()));
    return TestStack.withOverrides("provider-notify", Map.of(), gateway);
  }

  @BeforeEach
  void setUp() {
    for (String tenant : List.of(A, B)) {
      stack.app().tenants().onboard(tenant);
      stack.update(
          "INSERT INTO stock (sku_id, tenant_id, available, total) VALUES (?, ?, 10, 10)",
          "sku-" + tenant,
          tenant);
    }
    handler = new PaymentNotifyHandler(stack.app().paymentWebhook());
  }

  private void prepaidOrder(String tenantId, String orderId) {
    stack
        .app()
        .placeOrders()
        .place(
            new PlaceOrderCommand(
                orderId,
                tenantId,
                "u1",
                List.of(new OrderItem("sku-" + tenantId, 1)),
                null,
                100,
                600));
    stack.app().prepays().prepay(tenantId, orderId, OPEN_ID, null);
  }

  private APIGatewayV2HTTPResponse deliver(String spMchid, SignedNotification n) {
    APIGatewayV2HTTPEvent event = event(n);
    event.setRouteKey(PaymentNotifyHandler.PROVIDER_ROUTE_KEY);
    event.getRequestContext().setRouteKey(PaymentNotifyHandler.PROVIDER_ROUTE_KEY);
    event.setRawPath("/wechatpay/notify/provider/" + spMchid);
    Map<String, String> params = new HashMap<>();
    params.put("spMchid", spMchid);
    event.setPathParameters(params);
    return handler.handleRequest(event, new LambdaTestContext("payment-notify", 10_000));
  }

  private APIGatewayV2HTTPResponse deliverToTenantRoute(String tenantId, SignedNotification n) {
    APIGatewayV2HTTPEvent event = event(n);
    event.setRouteKey(PaymentNotifyHandler.TENANT_ROUTE_KEY);
    event.getRequestContext().setRouteKey(PaymentNotifyHandler.TENANT_ROUTE_KEY);
    event.setRawPath("/wechatpay/notify/" + tenantId);
    event.setPathParameters(Map.of("tenantId", tenantId));
    return handler.handleRequest(event, new LambdaTestContext("payment-notify", 10_000));
  }

  private static APIGatewayV2HTTPEvent event(SignedNotification n) {
    APIGatewayV2HTTPEvent event = EventLoader.loadApiGatewayHttpEvent(EVENT);
    Map<String, String> headers = new HashMap<>(event.getHeaders());
    n.headers().forEach((k, v) -> headers.put(k.toLowerCase(Locale.ROOT), v));
    event.setHeaders(headers);
    event.setBody(n.body());
    event.setIsBase64Encoded(false);
    return event;
  }

  private static String failMessage(APIGatewayV2HTTPResponse r) throws Exception {
    var body = Json.MAPPER.readTree(r.getBody());
    assertThat(body.get("code").asText()).isEqualTo("FAIL");
    return body.get("message").asText();
  }

  private List<String> orders(String orderId) {
    return stack.dump(
        "SELECT tenant_id, status, transaction_id FROM orders WHERE order_id = '"
            + orderId
            + "' ORDER BY tenant_id");
  }

  private List<String> everything() {
    List<String> state = new ArrayList<>(stack.databaseState());
    state.add("## outbox");
    state.addAll(stack.dump("SELECT * FROM outbox ORDER BY 1"));
    state.add("## redis");
    state.addAll(stack.redisState());
    return state;
  }

  @Test
  void aSubMerchantsNotificationPaysOnlyItsTenantsOrderOfTheSameId() {
    prepaidOrder(A, "same-0001");
    prepaidOrder(B, "same-0001");
    String tx = wechat.subMerchants().pay(SUB_A, "same-0001").transactionId();

    APIGatewayV2HTTPResponse r =
        deliver(wechat.mchid(), wechat.subMerchants().notification(SUB_A, "same-0001").build());

    assertThat(r.getStatusCode()).isEqualTo(204);
    assertThat(orders("same-0001"))
        .containsExactly("shop-a|PAID|" + tx + "|", "shop-b|UNPAID|null|");
    assertThat(
            stack.dump(
                "SELECT tenant_id, mchid, out_trade_no FROM wechat_trades"
                    + " WHERE order_id = 'same-0001' ORDER BY tenant_id"))
        .containsExactly("shop-a|" + SUB_A + "|same-0001|", "shop-b|" + SUB_B + "|same-0001|");
    assertThat(stack.dump("SELECT order_id, tenant_id FROM outbox WHERE event_type = 'paid'"))
        .containsExactly("same-0001|shop-a|");
  }

  @Test
  void prepayGivesWeChatTheProvidersUrl() {
    prepaidOrder(B, "url-0001");

    assertThat(wechat.subMerchants().notifyUrl(SUB_B, "url-0001"))
        .contains("https://mall.example.com/wechatpay/notify/provider/" + wechat.mchid());
  }

  @Test
  void aRepeatedNotificationIsAcknowledgedAndChangesNothingMore() {
    prepaidOrder(B, "again-0001");
    wechat.subMerchants().pay(SUB_B, "again-0001");
    assertThat(
            deliver(wechat.mchid(), wechat.subMerchants().notification(SUB_B, "again-0001").build())
                .getStatusCode())
        .isEqualTo(204);
    List<String> before = everything();

    APIGatewayV2HTTPResponse again =
        deliver(wechat.mchid(), wechat.subMerchants().notification(SUB_B, "again-0001").build());

    assertThat(again.getStatusCode()).isEqualTo(204);
    assertThat(everything()).isEqualTo(before);
  }

  @Test
  void aSubMerchantNoTenantIsIsRefused403AndChangesNothing() throws Exception {
    prepaidOrder(A, "ghost-0001");
    wechat.subMerchants().pay(SUB_A, "ghost-0001");
    var resource =
        wechat.subMerchants().transaction(SUB_A, "ghost-0001").put("sub_mchid", "1900000299");
    List<String> before = everything();

    APIGatewayV2HTTPResponse r =
        deliver(wechat.mchid(), wechat.subMerchants().notificationOf(resource).build());

    assertThat(r.getStatusCode()).isEqualTo(403);
    assertThat(failMessage(r)).contains("MERCHANT_MISMATCH").contains("1900000299");
    assertThat(everything()).isEqualTo(before);
  }

  @Test
  void aProviderWithoutSubMerchantsHereIs401LikeABadSignature() throws Exception {
    prepaidOrder(A, "nokeys-0001");
    wechat.subMerchants().pay(SUB_A, "nokeys-0001");
    List<String> before = everything();

    APIGatewayV2HTTPResponse r =
        deliver("1900000999", wechat.subMerchants().notification(SUB_A, "nokeys-0001").build());

    assertThat(r.getStatusCode()).isEqualTo(401);
    assertThat(failMessage(r)).contains("BAD_SIGNATURE");
    assertThat(everything()).isEqualTo(before);
  }

  @Test
  void anSpMchidThatIsNotDigitsIs400BeforeTheBodyIsRead() throws Exception {
    APIGatewayV2HTTPResponse r =
        deliver("../admin", wechat.subMerchants().notificationOf(Json.object()).build());

    assertThat(r.getStatusCode()).isEqualTo(400);
    assertThat(failMessage(r)).contains("spMchid");
  }

  @Test
  void theProvidersNotificationAtASubMerchantTenantsOwnRouteIsRefused() throws Exception {
    prepaidOrder(A, "own-0001");
    wechat.subMerchants().pay(SUB_A, "own-0001");
    List<String> before = everything();

    APIGatewayV2HTTPResponse r =
        deliverToTenantRoute(A, wechat.subMerchants().notification(SUB_A, "own-0001").build());

    assertThat(r.getStatusCode()).isEqualTo(403);
    assertThat(failMessage(r)).contains("MERCHANT_MISMATCH");
    assertThat(everything()).isEqualTo(before);
    assertThat(orders("own-0001")).containsExactly("shop-a|UNPAID|null|");
  }
}
