package io.ordertimeout.functions.notify;

import static org.assertj.core.api.Assertions.assertThat;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.amazonaws.services.lambda.runtime.tests.EventLoader;
import com.fasterxml.jackson.databind.JsonNode;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.wechat.SignedNotification;
import io.ordertimeout.testing.LambdaTestContext;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.testing.WeChatStackFixture;
import io.ordertimeout.util.Json;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A genuine notification that meets a database it cannot reach is answered 503 (WeChat retries)
 * with a fixed message and the request id: the body goes to whoever sent the request, and the
 * driver's message names the pool, hosts and SQL state.
 */
class WebhookUnavailableTest extends WeChatStackFixture {
  @Override
  protected TestStack newStack() {
    return TestStack.withWeChat("notify-503", wechat);
  }

  @Test
  void a503CarriesFixedTextAndTheRequestIdNeverTheExceptionsMessage() throws Exception {
    stack.seedSku("sku-tea", 10);
    stack.place("pay-503-01", "u1", 600, null, new OrderItem("sku-tea", 1));
    stack.app().prepays().prepay(TenantIds.DEFAULT, "pay-503-01", OPEN_ID, null);
    wechat.pay("pay-503-01");
    TestStack down = TestStack.withWeChat("notify-503-down", wechat);
    PaymentNotifyHandler handler = new PaymentNotifyHandler(down.app().paymentWebhook());
    down.closeDataSource();
    try {
      APIGatewayV2HTTPResponse r =
          handler.handleRequest(
              event(wechat.notification("pay-503-01").build()),
              new LambdaTestContext("payment-notify", 10_000));

      assertThat(r.getStatusCode()).isEqualTo(503);
      JsonNode body = Json.MAPPER.readTree(r.getBody());
      assertThat(body.path("code").asText()).isEqualTo("FAIL");
      assertThat(body.path("message").asText())
          .startsWith("temporarily unavailable, retry later; request ")
          .doesNotContainIgnoringCase("hikari")
          .doesNotContain("otc-")
          .doesNotContain("SQL")
          .doesNotContain("Exception");
    } finally {
      down.close();
    }
  }

  private static APIGatewayV2HTTPEvent event(SignedNotification n) {
    APIGatewayV2HTTPEvent event =
        EventLoader.loadApiGatewayHttpEvent("../../events/payment-notify-wechat-success.json");
    Map<String, String> headers = new HashMap<>(event.getHeaders());
    n.headers().forEach((k, v) -> headers.put(k.toLowerCase(Locale.ROOT), v));
    event.setHeaders(headers);
    event.setBody(n.body());
    event.setIsBase64Encoded(false);
    return event;
  }
}
