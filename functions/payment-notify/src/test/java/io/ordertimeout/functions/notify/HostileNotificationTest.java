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
import java.security.KeyPairGenerator;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Hostile requests to {@code POST /wechatpay/notify}, table-driven: each one is built from a
 * genuine notification of a paid order (signed by the simulator, carried in the sample event's
 * envelope), gets its documented 4xx with {@code {"code":"FAIL"}}, and leaves MariaDB and Redis
 * exactly as they were: the order stays UNPAID, no ledger row, no nonce remembered.
 */
class HostileNotificationTest extends WeChatStackFixture {
  static final String EVENT = "../../events/payment-notify-wechat-success.json";
  private PaymentNotifyHandler handler;

  @Override
  protected TestStack newStack() {
    return TestStack.withWeChat("hostile-notify", wechat);
  }

  @BeforeEach
  void setUp() {
    stack.seedSku("sku-tea", 10);
    handler = new PaymentNotifyHandler(stack.app().paymentWebhook());
  }

  /** An attack: how to spoil a genuine notification or its envelope, and what it must get. */
  record Attack(Function<Genuine, APIGatewayV2HTTPEvent> request, int status) {}

  /** A genuine notification of a paid order, and the builder to forge variants of it. */
  record Genuine(String orderId, SignedNotification notification) {}

  static Stream<Arguments> attacks() {
    return Stream.of(
        attack("forged signature (another RSA key)", 401, g -> envelope(forged(g.orderId()))),
        attack(
            "wrong public key id",
            401,
            g ->
                envelope(
                    simulatorOf(HostileNotificationTest.class)
                        .notification(g.orderId())
                        .serial("PUB_KEY_ID_0000000000")
                        .build())),
        attack(
            "expired timestamp (6 minutes old)",
            401,
            g ->
                envelope(
                    simulatorOf(HostileNotificationTest.class)
                        .notification(g.orderId())
                        .timestamp(Instant.now().minusSeconds(360))
                        .build())),
        attack(
            "timestamp 6 minutes in the future",
            401,
            g ->
                envelope(
                    simulatorOf(HostileNotificationTest.class)
                        .notification(g.orderId())
                        .timestamp(Instant.now().plusSeconds(360))
                        .build())),
        attack(
            "tampered ciphertext",
            400,
            g ->
                envelope(
                    simulatorOf(HostileNotificationTest.class)
                        .notification(g.orderId())
                        .tamperCiphertext()
                        .build())),
        attack(
            "encrypted with another APIv3 key",
            400,
            g ->
                envelope(
                    simulatorOf(HostileNotificationTest.class)
                        .notification(g.orderId())
                        .encryptedWith("0123456789abcdef0123456789abcdef")
                        .build())),
        attack(
            "body altered after signing",
            401,
            g -> envelope(g.notification().withBody(g.notification().body().replace("a", "b")))),
        attack("missing Wechatpay-Signature", 400, g -> without(g, "Wechatpay-Signature")),
        attack("missing Wechatpay-Timestamp", 400, g -> without(g, "Wechatpay-Timestamp")),
        attack("missing Wechatpay-Nonce", 400, g -> without(g, "Wechatpay-Nonce")),
        attack("missing Wechatpay-Serial", 400, g -> without(g, "Wechatpay-Serial")),
        attack(
            "non-numeric timestamp",
            400,
            g -> envelope(g.notification().withHeader("Wechatpay-Timestamp", "yesterday"))),
        attack(
            "timestamp beyond every date",
            400,
            g -> envelope(g.notification().withHeader("Wechatpay-Timestamp", "99999999999999999"))),
        attack(
            "negative timestamp beyond every date",
            400,
            g ->
                envelope(g.notification().withHeader("Wechatpay-Timestamp", "-99999999999999999"))),
        attack(
            "timestamp in Arabic-Indic digits",
            400,
            g -> envelope(g.notification().withHeader("Wechatpay-Timestamp", "١٧٦٤٥٧٦٠٠٠"))),
        attack("empty body", 400, g -> envelope(g.notification().withBody(""))),
        attack("malformed JSON body", 401, g -> envelope(g.notification().withBody("{\"id\":"))),
        attack(
            "10 MiB body",
            413,
            g -> envelope(g.notification().withBody("{\"pad\":\"" + "x".repeat(10 << 20) + "\"}"))),
        attack(
            "flagged base64 but not base64",
            400,
            g -> {
              APIGatewayV2HTTPEvent e = envelope(g.notification());
              e.setIsBase64Encoded(true);
              e.setBody("%%% not base64 %%%");
              return e;
            }),
        attack(
            "SQL and unicode in the headers",
            401,
            g ->
                envelope(
                    g.notification()
                        .withHeader("Wechatpay-Nonce", "' OR '1'='1 -- 订单")
                        .withHeader("Wechatpay-Serial", "PUB_KEY_ID_'; DROP TABLE orders; --"))));
  }

  private static Arguments attack(
      String name, int status, Function<Genuine, APIGatewayV2HTTPEvent> request) {
    return Arguments.of(name, new Attack(request, status));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("attacks")
  void aHostileNotificationGetsItsDocumented4xxAndChangesNothing(String name, Attack attack)
      throws Exception {
    Genuine genuine = paidAtWeChat("hostile-" + Integer.toHexString(name.hashCode()));
    APIGatewayV2HTTPEvent request = attack.request().apply(genuine);
    List<String> dbBefore = stack.databaseState();
    List<String> redisBefore = stack.redisState();

    APIGatewayV2HTTPResponse response =
        handler.handleRequest(request, new LambdaTestContext("payment-notify", 10_000));

    assertThat(response.getStatusCode()).as(name).isEqualTo(attack.status());
    JsonNode body = Json.MAPPER.readTree(response.getBody());
    assertThat(body.get("code").asText()).isEqualTo("FAIL");
    assertThat(body.get("message").asText()).isNotBlank();
    assertThat(stack.databaseState()).isEqualTo(dbBefore);
    assertThat(stack.redisState()).isEqualTo(redisBefore);
    assertThat(stack.dump("SELECT status FROM orders")).containsExactly("UNPAID|");
  }

  @org.junit.jupiter.api.Test
  void aReplayedNonceOnAnotherPaymentIsRefusedAndChangesNothingButTheFirst() throws Exception {
    Genuine first = paidAtWeChat("replay-first");
    Genuine second = paidAtWeChat("replay-second");
    String nonce = first.notification().header("Wechatpay-Nonce");
    assertThat(handle(envelope(first.notification())).getStatusCode()).isEqualTo(204);
    List<String> dbBefore = stack.databaseState();

    APIGatewayV2HTTPResponse replay =
        handle(envelope(wechat.notification(second.orderId()).nonce(nonce).build()));

    assertThat(replay.getStatusCode()).isEqualTo(409);
    assertThat(stack.databaseState()).isEqualTo(dbBefore);
    assertThat(stack.dump("SELECT order_id, status FROM orders ORDER BY order_id"))
        .containsExactly("replay-first|PAID|", "replay-second|UNPAID|");
  }

  private APIGatewayV2HTTPResponse handle(APIGatewayV2HTTPEvent event) {
    return handler.handleRequest(event, new LambdaTestContext("payment-notify", 10_000));
  }

  /** Places and prepays an order, and the user pays at WeChat; its notification is ours to send. */
  private Genuine paidAtWeChat(String orderId) {
    stack.place(orderId, "u1", 600, null, new OrderItem("sku-tea", 1));
    stack.app().prepays().prepay(TenantIds.DEFAULT, orderId, "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o", null);
    wechat.pay(orderId); // no webhook set: the simulator's own delivery goes nowhere
    return new Genuine(orderId, wechat.notification(orderId).build());
  }

  private static SignedNotification forged(String orderId) {
    try {
      KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
      generator.initialize(2048);
      return simulatorOf(HostileNotificationTest.class)
          .notification(orderId)
          .signedWith(generator.generateKeyPair().getPrivate())
          .build();
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static APIGatewayV2HTTPEvent without(Genuine g, String header) {
    APIGatewayV2HTTPEvent event = envelope(g.notification());
    Map<String, String> headers = new HashMap<>(event.getHeaders());
    headers.remove(header.toLowerCase(Locale.ROOT));
    event.setHeaders(headers);
    return event;
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
