package io.ordertimeout.functions.notify;

import static org.assertj.core.api.Assertions.assertThat;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.amazonaws.services.lambda.runtime.tests.EventLoader;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.PlaceOrderCommand;
import io.ordertimeout.embedded.wechat.SignedNotification;
import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import io.ordertimeout.testing.LambdaTestContext;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.testing.WeChatStackFixture;
import io.ordertimeout.util.Json;
import io.ordertimeout.wechat.GatewaySettings;
import io.ordertimeout.wechat.MerchantCredentials;
import io.ordertimeout.wechat.MiniProgramPayment;
import io.ordertimeout.wechat.PaymentGateway;
import io.ordertimeout.wechat.PaymentNotification;
import io.ordertimeout.wechat.PrepayCommand;
import io.ordertimeout.wechat.RefundResult;
import io.ordertimeout.wechat.StaticMerchantDirectory;
import io.ordertimeout.wechat.TradeStatus;
import io.ordertimeout.wechat.WeChatCloseOutcome;
import io.ordertimeout.wechat.WeChatPayGateway;
import io.ordertimeout.wechat.WeChatTrade;
import java.security.KeyPairGenerator;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The per-tenant webhook through the real SDK: tenant shop-a's merchant is the fixture's simulator,
 * shop-b's another simulator with its own merchant, platform and APIv3 keys; the default tenant
 * shares shop-a's keys under the old URL. One {@link WeChatPayGateway} holds all three merchants
 * and verifies every notification, with the keys of the tenant the URL names.
 */
class TenantWebhookTest extends WeChatStackFixture {
  static final String EVENT = "../../events/payment-notify-wechat-success.json";
  static final String A = "shop-a";
  static final String B = "shop-b";

  private static WeChatPaySimulator wechatB;
  private PaymentNotifyHandler handler;

  @BeforeAll
  static void startSecondMerchant() {
    wechatB = WeChatPaySimulator.start();
  }

  @AfterAll
  static void stopSecondMerchant() {
    wechatB.close();
  }

  /**
   * shop-a is configured with the old-style URL (as a single-merchant secret would carry it) and
   * gets its own route derived; shop-b is configured with its own route already.
   */
  private static StaticMerchantDirectory directory() {
    MerchantCredentials a =
        TestStack.credentialsFor(simulatorOf(TenantWebhookTest.class)); // .../wechatpay/notify
    MerchantCredentials b = TestStack.credentialsFor(wechatB);
    return new StaticMerchantDirectory(
        Map.of(
            "default",
            a,
            A,
            withNotifyUrl(a, "https://mall.example.com/wechatpay/notify"),
            B,
            withNotifyUrl(b, "https://mall.example.com/wechatpay/notify/shop-b")));
  }

  private static MerchantCredentials withNotifyUrl(MerchantCredentials c, String url) {
    return new MerchantCredentials(
        c.mchid(),
        c.appid(),
        c.merchantSerialNumber(),
        c.privateKeyPem(),
        c.apiV3Key(),
        c.wechatPayPublicKeyId(),
        c.wechatPayPublicKeyPem(),
        url);
  }

  @Override
  protected TestStack newStack() {
    return TestStack.withOverrides("tenant-notify", Map.of(), new TwoSimulators());
  }

  @BeforeEach
  void setUp() {
    stack.seedSku("sku-tea", 10); // the default tenant's
    for (String tenant : List.of(A, B)) {
      stack.app().tenants().onboard(tenant);
      stack.update(
          "INSERT INTO stock (sku_id, tenant_id, available, total) VALUES (?, ?, 10, 10)",
          "sku-" + tenant,
          tenant);
    }
    handler = new PaymentNotifyHandler(stack.app().paymentWebhook());
  }

  /**
   * Both simulators answer for the same mchid; the SDK's API calls of shop-b go to its simulator,
   * the rest to the fixture's. Notifications are parsed by one gateway that knows every tenant.
   */
  private static final class TwoSimulators implements PaymentGateway {
    private final WeChatPayGateway a = gateway(simulatorOf(TenantWebhookTest.class));
    private final WeChatPayGateway b = gateway(wechatB);

    private static WeChatPayGateway gateway(WeChatPaySimulator sim) {
      return new WeChatPayGateway(
          directory(),
          Clock.systemUTC(),
          GatewaySettings.production()
              .withReadTimeout(Duration.ofSeconds(2))
              .withBaseUrl(sim.baseUrl()));
    }

    private PaymentGateway of(String tenantId) {
      return B.equals(tenantId) ? b : a;
    }

    @Override
    public String merchantId(String tenantId) {
      return of(tenantId).merchantId(tenantId);
    }

    @Override
    public MiniProgramPayment prepay(String tenantId, PrepayCommand command) {
      return of(tenantId).prepay(tenantId, command);
    }

    @Override
    public TradeStatus query(String tenantId, WeChatTrade trade) {
      return of(tenantId).query(tenantId, trade);
    }

    @Override
    public WeChatCloseOutcome close(String tenantId, WeChatTrade trade) {
      return of(tenantId).close(tenantId, trade);
    }

    @Override
    public RefundResult refund(
        String tenantId, WeChatTrade trade, String outRefundNo, long amountFen, String reason) {
      return of(tenantId).refund(tenantId, trade, outRefundNo, amountFen, reason);
    }

    @Override
    public RefundResult queryRefund(String tenantId, String outRefundNo) {
      return of(tenantId).queryRefund(tenantId, outRefundNo);
    }

    @Override
    public PaymentNotification parseNotification(
        String tenantId, Map<String, String> headers, String body) {
      return a.parseNotification(tenantId, headers, body);
    }
  }

  /** Places an order of 100 fen for {@code tenantId}, prepays it and lets its payer pay. */
  private void paidOrder(String tenantId, String orderId) {
    stack
        .app()
        .placeOrders()
        .place(
            new PlaceOrderCommand(
                orderId,
                tenantId,
                "u1",
                List.of(
                    new OrderItem("default".equals(tenantId) ? "sku-tea" : "sku-" + tenantId, 1)),
                null,
                100,
                600));
    stack.app().prepays().prepay(tenantId, orderId, OPEN_ID, null);
    (B.equals(tenantId) ? wechatB : wechat).pay(orderId);
  }

  /** To {@code POST /wechatpay/notify/{tenantId}} as API Gateway hands it over. */
  private APIGatewayV2HTTPResponse deliverTo(String tenantId, SignedNotification n) {
    APIGatewayV2HTTPEvent event = event(n);
    event.setRouteKey(PaymentNotifyHandler.TENANT_ROUTE_KEY);
    event.getRequestContext().setRouteKey(PaymentNotifyHandler.TENANT_ROUTE_KEY);
    event.setRawPath("/wechatpay/notify/" + tenantId);
    event.setPathParameters(Map.of("tenantId", tenantId));
    return handler.handleRequest(event, new LambdaTestContext("payment-notify", 10_000));
  }

  /** To the old {@code POST /wechatpay/notify}: the sample event's own route. */
  private APIGatewayV2HTTPResponse deliverToOldUrl(SignedNotification n) {
    return handler.handleRequest(event(n), new LambdaTestContext("payment-notify", 10_000));
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

  /** Orders, items, stock, coupons, ledger, snapshots, paid_after_close, outbox and Redis. */
  private List<String> everything() {
    List<String> state = new ArrayList<>(stack.databaseState());
    state.add("## outbox");
    state.addAll(stack.dump("SELECT * FROM outbox ORDER BY 1"));
    state.add("## redis");
    state.addAll(stack.redisState());
    return state;
  }

  private String order(String orderId) {
    return stack
        .dump(
            "SELECT tenant_id, status, transaction_id FROM orders WHERE order_id = '"
                + orderId
                + "'")
        .get(0);
  }

  @Test
  void eachTenantsNotificationAtItsOwnUrlPaysItsOrder() {
    paidOrder(A, "a-pay-0001");
    paidOrder(B, "b-pay-0001");

    APIGatewayV2HTTPResponse a = deliverTo(A, wechat.notification("a-pay-0001").build());
    APIGatewayV2HTTPResponse b = deliverTo(B, wechatB.notification("b-pay-0001").build());

    assertThat(a.getStatusCode()).isEqualTo(204);
    assertThat(b.getStatusCode()).isEqualTo(204);
    String txA = wechat.trade("a-pay-0001").orElseThrow().transactionId();
    String txB = wechatB.trade("b-pay-0001").orElseThrow().transactionId();
    assertThat(order("a-pay-0001")).isEqualTo("shop-a|PAID|" + txA + "|");
    assertThat(order("b-pay-0001")).isEqualTo("shop-b|PAID|" + txB + "|");
    assertThat(
            stack.dump(
                "SELECT order_id, tenant_id, event_type FROM outbox WHERE event_type = 'paid'"))
        .containsExactlyInAnyOrder("a-pay-0001|shop-a|paid|", "b-pay-0001|shop-b|paid|");
  }

  @Test
  void aNotificationSignedForAAtBsUrlIsRefusedLikeABadSignatureAndChangesNothing()
      throws Exception {
    paidOrder(A, "a-cross-001");
    SignedNotification forA = wechat.notification("a-cross-001").build();
    List<String> before = everything();

    APIGatewayV2HTTPResponse r = deliverTo(B, forA);

    // B's keys cannot verify A's signature: 401 (non-2xx, WeChat retries), as any bad signature
    assertThat(r.getStatusCode()).isEqualTo(401);
    assertThat(failMessage(r)).contains("BAD_SIGNATURE").contains("shop-b");
    assertThat(everything()).isEqualTo(before);
    assertThat(order("a-cross-001")).isEqualTo("shop-a|UNPAID|null|");
    // the very same notification at A's URL is genuine and pays
    assertThat(deliverTo(A, forA).getStatusCode()).isEqualTo(204);
    assertThat(order("a-cross-001")).startsWith("shop-a|PAID|");
  }

  @Test
  void bsOrderPaidThroughAsMerchantAtAsUrlIsRefusedAndChangesNothing() throws Exception {
    paidOrder(B, "b-victim-01");
    // shop-a's merchant has a trade under B's out_trade_no (same amount) and reports it paid
    stack
        .app()
        .gateway()
        .prepay(
            A,
            new PrepayCommand(
                "b-victim-01", "x", 100, OPEN_ID, Instant.now().plus(Duration.ofMinutes(5))));
    wechat.pay("b-victim-01");
    List<String> before = everything();

    APIGatewayV2HTTPResponse r = deliverTo(A, wechat.notification("b-victim-01").build());

    // verified with A's keys, then refused by the paid path: shop-a has no such order
    assertThat(r.getStatusCode()).isEqualTo(404);
    assertThat(failMessage(r)).contains("UNKNOWN_ORDER");
    assertThat(everything()).isEqualTo(before);
    assertThat(order("b-victim-01")).isEqualTo("shop-b|UNPAID|null|");
    assertThat(stack.count("SELECT COUNT(*) FROM paid_after_close")).isZero();
    // B's own notification still pays it
    assertThat(deliverTo(B, wechatB.notification("b-victim-01").build()).getStatusCode())
        .isEqualTo(204);
    assertThat(order("b-victim-01")).startsWith("shop-b|PAID|");
  }

  @Test
  void aTenantWithoutKeysIsAnsweredExactlyLikeABadSignatureAndCounted() throws Exception {
    paidOrder(A, "a-ghost-001");
    List<String> before = everything();

    APIGatewayV2HTTPResponse ghost = deliverTo("ghost", wechat.notification("a-ghost-001").build());
    APIGatewayV2HTTPResponse forged =
        deliverTo(
            A,
            wechat
                .notification("a-ghost-001")
                .signedWith(KeyPairGenerator.getInstance("RSA").generateKeyPair().getPrivate())
                .build());

    assertThat(ghost.getStatusCode()).isEqualTo(401).isEqualTo(forged.getStatusCode());
    assertThat(ghost.getHeaders()).isEqualTo(forged.getHeaders());
    assertThat(ghost.getBody().replace("ghost", A)).isEqualTo(forged.getBody());
    assertThat(failMessage(ghost)).doesNotContain("known tenants").doesNotContain("default");
    assertThat(stack.app().metrics().counter("payment_notifications_unknown_tenant")).isEqualTo(1);
    // a broken request is judged before any key is looked up: no difference there either
    SignedNotification empty = new SignedNotification(Map.of(), "");
    assertThat(deliverTo("ghost", empty).getBody().replace("ghost", A))
        .isEqualTo(deliverTo(A, empty).getBody());
    assertThat(everything()).isEqualTo(before);
  }

  @Test
  void aMalformedTenantIdIs400AndChangesNothing() throws Exception {
    paidOrder(A, "a-badid-001");
    SignedNotification n = wechat.notification("a-badid-001").build();
    List<String> before = everything();

    for (String bad : List.of("Shop-A", "shop a", "shop.a", "x".repeat(33), "shop-a/../b", "")) {
      APIGatewayV2HTTPResponse r = deliverTo(bad, n);
      assertThat(r.getStatusCode()).as("tenant id '%s'", bad).isEqualTo(400);
      assertThat(failMessage(r)).contains("[a-z0-9_-]{1,32}");
    }
    assertThat("x".repeat(32)).matches(io.ordertimeout.domain.TenantIds.PATTERN);
    assertThat(everything()).isEqualTo(before);
    assertThat(stack.app().metrics().counter("payment_notifications_unknown_tenant")).isZero();
  }

  @Test
  void theOldUrlStillServesTheDefaultTenantAndOnlyIt() throws Exception {
    paidOrder("default", "d-old-00001");
    paidOrder(A, "a-old-00001");
    List<String> before = everything();

    // shop-a's order (same keys as default) at the old URL: verified, then not default's order
    APIGatewayV2HTTPResponse other = deliverToOldUrl(wechat.notification("a-old-00001").build());
    assertThat(other.getStatusCode()).isEqualTo(404);
    assertThat(failMessage(other)).contains("UNKNOWN_ORDER");
    assertThat(everything()).isEqualTo(before);

    assertThat(deliverToOldUrl(wechat.notification("d-old-00001").build()).getStatusCode())
        .isEqualTo(204);
    assertThat(order("d-old-00001")).startsWith("default|PAID|");
  }

  @Test
  void prepayGivesWeChatTheTenantsOwnNotifyUrl() {
    paidOrder("default", "d-url-00001");
    paidOrder(A, "a-url-00001");
    paidOrder(B, "b-url-00001");

    // default keeps the old URL; shop-a's is derived from its old-style URL; shop-b's configured
    assertThat(wechat.notifyUrl("d-url-00001"))
        .contains("https://mall.example.com/wechatpay/notify");
    assertThat(wechat.notifyUrl("a-url-00001"))
        .contains("https://mall.example.com/wechatpay/notify/shop-a");
    assertThat(wechatB.notifyUrl("b-url-00001"))
        .contains("https://mall.example.com/wechatpay/notify/shop-b");
  }
}
