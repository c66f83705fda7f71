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
import io.ordertimeout.testing.LogLines;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.testing.WeChatStackFixture;
import io.ordertimeout.util.Json;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * The webhook's limits on what an unauthenticated caller sends, each a request that once got a 5xx,
 * was verified at full size, or wrote its body to the log: a timestamp out of every date range is
 * 400, a body over 16 KiB is 413 before any key is used, a serial that is not the platform key's is
 * 401 without the SDK's ERROR line, and the WARN line of a refusal names the body by its length and
 * SHA-256, never by its content, nonce or signature.
 */
// alone in its JVM while it runs (the fast tier runs classes in parallel): it captures the root
// logger's lines
@Isolated
class WebhookLimitsTest extends WeChatStackFixture {
  static final String EVENT = "../../events/payment-notify-wechat-success.json";
  private PaymentNotifyHandler handler;

  @Override
  protected TestStack newStack() {
    return TestStack.withWeChat("webhook-limits", wechat);
  }

  @BeforeEach
  void setUp() {
    stack.seedSku("sku-tea", 10);
    handler = new PaymentNotifyHandler(stack.app().paymentWebhook());
  }

  @Test
  void aTimestampBeyondEveryDateIs400Not500() {
    SignedNotification n = genuine("limits-ts-huge");
    List<String> dbBefore = stack.databaseState();

    for (String ts : List.of("99999999999999999", "-99999999999999999")) {
      APIGatewayV2HTTPResponse response = handle(envelope(n.withHeader("Wechatpay-Timestamp", ts)));

      assertThat(response.getStatusCode()).as("timestamp %s", ts).isEqualTo(400);
      assertThat(message(response)).contains("INVALID_TIMESTAMP");
    }
    assertThat(stack.databaseState()).isEqualTo(dbBefore);
  }

  @Test
  void aBodyOf300KiBIs413AndNeverVerified() {
    SignedNotification n = genuine("limits-big-body");
    // the serial of no key: had the body been verified, the SDK would have logged its ERROR
    String body = "{\"pad\":\"" + "x".repeat(300 * 1024) + "\"}";
    SignedNotification big = n.withBody(body).withHeader("Wechatpay-Serial", "PUB_KEY_ID_NONE");

    try (LogLines log = LogLines.capture()) {
      APIGatewayV2HTTPResponse response = handle(envelope(big));

      assertThat(response.getStatusCode()).isEqualTo(413);
      assertThat(message(response)).contains("BODY_TOO_LARGE");
      assertThat(log.json()).allSatisfy(line -> assertThat(line.toString()).hasSizeLessThan(2048));
      assertThat(levels(log)).doesNotContain("ERROR");
    }
  }

  @Test
  void aWrongSerialIs401WithoutTheSdksErrorLine() {
    SignedNotification n =
        wechat.notification(paidOrder("limits-serial")).serial("PUB_KEY_ID_0000000000").build();

    try (LogLines log = LogLines.capture()) {
      APIGatewayV2HTTPResponse response = handle(envelope(n));

      assertThat(response.getStatusCode()).isEqualTo(401);
      assertThat(levels(log)).doesNotContain("ERROR");
    }
  }

  @Test
  void theRefusalsLogLineCarriesTheBodysLengthAndHashNeverTheBodyNonceOrSignature()
      throws Exception {
    SignedNotification n = genuine("limits-log");
    String body = n.body().replace("a", "b"); // the signature no longer matches
    SignedNotification altered = n.withBody(body);

    try (LogLines log = LogLines.capture()) {
      APIGatewayV2HTTPResponse response = handle(envelope(altered));

      assertThat(response.getStatusCode()).isEqualTo(401);
      String all = log.json().toString();
      assertThat(all)
          .contains(String.valueOf(body.getBytes(StandardCharsets.UTF_8).length))
          .contains(sha256(body))
          .doesNotContain(n.header("Wechatpay-Nonce"))
          .doesNotContain(n.header("Wechatpay-Signature"))
          .doesNotContain("ciphertext")
          .doesNotContain(Json.MAPPER.readTree(body).path("resource").path("ciphertext").asText());
    }
  }

  private static List<String> levels(LogLines log) {
    return log.json().stream().map(line -> line.path("level").asText()).toList();
  }

  private static String sha256(String body) throws Exception {
    return HexFormat.of()
        .formatHex(
            MessageDigest.getInstance("SHA-256").digest(body.getBytes(StandardCharsets.UTF_8)));
  }

  private static String message(APIGatewayV2HTTPResponse response) {
    try {
      JsonNode body = Json.MAPPER.readTree(response.getBody());
      assertThat(body.get("code").asText()).isEqualTo("FAIL");
      return body.get("message").asText();
    } catch (java.io.IOException e) {
      throw new AssertionError("response body is not JSON: " + response.getBody(), e);
    }
  }

  private APIGatewayV2HTTPResponse handle(APIGatewayV2HTTPEvent event) {
    return handler.handleRequest(event, new LambdaTestContext("payment-notify", 10_000));
  }

  private String paidOrder(String orderId) {
    stack.place(orderId, "u1", 600, null, new OrderItem("sku-tea", 1));
    stack.app().prepays().prepay(TenantIds.DEFAULT, orderId, OPEN_ID, null);
    wechat.pay(orderId); // no webhook set: the simulator's own delivery goes nowhere
    return orderId;
  }

  /** A genuine notification of a paid order, to be spoiled by each test. */
  private SignedNotification genuine(String orderId) {
    return wechat.notification(paidOrder(orderId)).build();
  }

  /** The sample event carrying the notification, headers lower-cased as API Gateway sends them. */
  private static APIGatewayV2HTTPEvent envelope(SignedNotification n) {
    APIGatewayV2HTTPEvent event = EventLoader.loadApiGatewayHttpEvent(EVENT);
    Map<String, String> headers = new HashMap<>(event.getHeaders());
    headers.keySet().removeIf(k -> k.startsWith("wechatpay-"));
    n.headers().forEach((k, v) -> headers.put(k.toLowerCase(Locale.ROOT), v));
    event.setHeaders(headers);
    event.setBody(n.body());
    event.setIsBase64Encoded(false);
    return event;
  }
}
