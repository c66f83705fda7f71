package io.ordertimeout.functions.orders;

import static io.ordertimeout.testing.Deadlines.expireNow;
import static org.assertj.core.api.Assertions.assertThat;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.fasterxml.jackson.databind.JsonNode;
import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.wechat.Endpoint;
import io.ordertimeout.embedded.wechat.Fault;
import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import io.ordertimeout.testing.LambdaTestContext;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.util.Json;
import java.nio.charset.StandardCharsets;
import java.security.Signature;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@code POST /orders/{id}/prepay} through the real SDK against the WeChat Pay simulator. */
class PrepayRouteTest {
  static final String POST_EVENT = "../../events/order-created-post-orders.json";
  static final String OPEN_ID = "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o";
  static WeChatPaySimulator wechat;

  private TestStack stack;
  private OrderApiHandler handler;

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
    stack = TestStack.withWeChat("prepay", wechat);
    stack.seedSku("sku-tea", 10);
    handler = new OrderApiHandler(stack.app().orderApi());
  }

  @AfterEach
  void tearDown() {
    stack.assertInvariants();
    stack.close();
  }

  private APIGatewayV2HTTPResponse prepay(String orderId, String body) {
    APIGatewayV2HTTPEvent event =
        ApiEvents.route(OrderApiHandler.PREPAY).id(orderId).body(body).build();
    return handler.handleRequest(event, new LambdaTestContext("order-created", 10_000));
  }

  private static JsonNode json(APIGatewayV2HTTPResponse r) throws Exception {
    return Json.MAPPER.readTree(r.getBody());
  }

  private static String openIdBody() {
    return "{\"openId\":\"" + OPEN_ID + "\"}";
  }

  @Test
  void prepayAnswersVerifiableRequestPaymentParametersAndStoresThePrepayId() throws Exception {
    stack.place("prepay-0001", "u1", 600, null, new OrderItem("sku-tea", 1));

    APIGatewayV2HTTPResponse first = prepay("prepay-0001", openIdBody());
    APIGatewayV2HTTPResponse again = prepay("prepay-0001", openIdBody());

    assertThat(first.getStatusCode()).isEqualTo(200);
    JsonNode p = json(first);
    String message =
        p.get("appId").asText()
            + "\n"
            + p.get("timeStamp").asText()
            + "\n"
            + p.get("nonceStr").asText()
            + "\n"
            + p.get("package").asText()
            + "\n";
    Signature verifier = Signature.getInstance("SHA256withRSA");
    verifier.initVerify(wechat.merchantPublicKey());
    verifier.update(message.getBytes(StandardCharsets.UTF_8));
    assertThat(verifier.verify(Base64.getDecoder().decode(p.get("paySign").asText()))).isTrue();
    assertThat(p.get("signType").asText()).isEqualTo("RSA");
    String prepayId = wechat.trade("prepay-0001").orElseThrow().prepayId();
    assertThat(p.get("package").asText()).isEqualTo("prepay_id=" + prepayId);
    assertThat(stack.dump("SELECT prepay_id, prepaid_at IS NOT NULL FROM orders"))
        .containsExactly(prepayId + "|1|");
    // a repeat: fresh parameters for the same prepay_id
    assertThat(again.getStatusCode()).isEqualTo(200);
    assertThat(json(again).get("prepayId").asText()).isEqualTo(prepayId);
    assertThat(json(again).get("nonceStr").asText()).isNotEqualTo(p.get("nonceStr").asText());
    // time_expire is the order's deadline (WeChat keeps it to the second)
    long expireAt =
        stack
            .app()
            .orders()
            .find(TenantIds.DEFAULT, "prepay-0001")
            .orElseThrow()
            .expireAt()
            .getEpochSecond();
    assertThat(wechat.trade("prepay-0001").orElseThrow().timeExpire().getEpochSecond())
        .isEqualTo(expireAt);
  }

  @Test
  void closedPaidAndExpiredOrdersAreConflictsAndUnknownIs404() throws Exception {
    stack.place("closed-0001", "u1", 600, null, new OrderItem("sku-tea", 1));
    stack.app().closer().close(TenantIds.DEFAULT, List.of("closed-0001"), CloseReason.USER_CANCEL);
    stack.place("paid-000001", "u1", 600, null, new OrderItem("sku-tea", 1));
    prepay("paid-000001", openIdBody());
    wechat.pay("paid-000001");
    stack
        .app()
        .closer()
        .close(TenantIds.DEFAULT, List.of("paid-000001"), CloseReason.USER_CANCEL); // -> paid path
    stack.place("expired-001", "u1", 600, null, new OrderItem("sku-tea", 1));
    expireNow(stack, "expired-001");
    int prepays = wechat.callCount(Endpoint.PREPAY);

    APIGatewayV2HTTPResponse closed = prepay("closed-0001", openIdBody());
    APIGatewayV2HTTPResponse paid = prepay("paid-000001", openIdBody());
    APIGatewayV2HTTPResponse expired = prepay("expired-001", openIdBody());
    APIGatewayV2HTTPResponse unknown = prepay("nosuch-0001", openIdBody());

    assertThat(closed.getStatusCode()).isEqualTo(409);
    assertThat(json(closed).at("/error/code").asText()).isEqualTo("ORDER_NOT_UNPAID");
    assertThat(paid.getStatusCode()).isEqualTo(409);
    assertThat(expired.getStatusCode()).isEqualTo(409);
    assertThat(json(expired).at("/error/code").asText()).isEqualTo("ORDER_EXPIRED");
    assertThat(unknown.getStatusCode()).isEqualTo(404);
    assertThat(wechat.callCount(Endpoint.PREPAY)).isEqualTo(prepays);
  }

  @Test
  void badBodiesAre400AndWeChatOutagesAre503() throws Exception {
    stack.place("bad-000001", "u1", 600, null, new OrderItem("sku-tea", 1));
    wechat.injectFault(Endpoint.PREPAY, Fault.SYSTEM_ERROR, 1);

    assertThat(prepay("bad-000001", "{}").getStatusCode()).isEqualTo(400);
    assertThat(prepay("bad-000001", "{\"openId\":\"a b\"}").getStatusCode()).isEqualTo(400);
    assertThat(prepay("bad-000001", "{\"openId\":\"x\",\"extra\":1}").getStatusCode())
        .isEqualTo(400);
    assertThat(prepay("bad-000001", "not json").getStatusCode()).isEqualTo(400);
    APIGatewayV2HTTPResponse outage = prepay("bad-000001", openIdBody());
    APIGatewayV2HTTPResponse after = prepay("bad-000001", openIdBody());

    assertThat(outage.getStatusCode()).isEqualTo(503);
    assertThat(json(outage).at("/error/code").asText()).isEqualTo("WECHAT_UNAVAILABLE");
    assertThat(after.getStatusCode()).isEqualTo(200);
  }
}
