package io.ordertimeout.wechat;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.ordertimeout.embedded.wechat.Delivery;
import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import io.ordertimeout.testing.Await;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The simulator's webhook deliveries, received by a JDK server and parsed by the gateway. */
class NotificationDeliveryTest {

  static final String TENANT = WeChatPayGatewayTest.TENANT;
  WeChatPaySimulator wechat;
  WeChatPayGateway gateway;
  HttpServer webhook;
  final List<PaymentNotification> accepted = new CopyOnWriteArrayList<>();
  final AtomicInteger failuresToAnswer = new AtomicInteger();

  @BeforeEach
  void start() throws IOException {
    wechat = WeChatPaySimulator.start();
    gateway = WeChatPayGatewayTest.gatewayFor(wechat, Clock.systemUTC(), Duration.ofSeconds(1));
    webhook = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    webhook.createContext("/notify", this::receive);
    webhook.start();
    wechat.setWebhookUrl(
        URI.create("http://127.0.0.1:" + webhook.getAddress().getPort() + "/notify"));
    wechat.setRetryScale(0.001); // 15 s -> 15 ms
  }

  @AfterEach
  void stop() {
    wechat.close();
    webhook.stop(0);
  }

  /**
   * Like payment-notify: parse (headers arrive as "Wechatpay-nonce"), answer 5xx to make WeChat
   * retry.
   */
  private void receive(HttpExchange exchange) throws IOException {
    try (exchange) {
      exchange.sendResponseHeaders(answer(exchange), -1);
    }
  }

  private int answer(HttpExchange exchange) throws IOException {
    Map<String, String> headers = new HashMap<>();
    exchange.getRequestHeaders().forEach((k, v) -> headers.put(k, v.get(0)));
    String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
    try {
      PaymentNotification n = gateway.parseNotification(TENANT, headers, body);
      if (failuresToAnswer.getAndDecrement() > 0) {
        return 500;
      }
      accepted.add(n);
      return 204;
    } catch (InvalidNotificationException e) {
      return 401;
    }
  }

  private String prepaid() {
    String outTradeNo = WeChatPayGatewayTest.newTradeNo();
    gateway.prepay(TENANT, WeChatPayGatewayTest.command(outTradeNo, 990));
    return outTradeNo;
  }

  private void awaitAccepted(int count) {
    Await.reached(
        Await.await(count + " notification(s) accepted", Duration.ofSeconds(10)),
        () -> accepted.size() >= count);
  }

  @Test
  void aRefusedNotificationIsRetriedWithTheSameIdUntilAccepted() throws Exception {
    failuresToAnswer.set(2);
    String outTradeNo = prepaid();

    wechat.pay(outTradeNo);
    awaitAccepted(1);
    // the webhook answers before the simulator records the delivery: wait for the record too
    Await.reached(
        Await.await("3 deliveries recorded", Duration.ofSeconds(10)),
        () -> wechat.deliveries().size() >= 3);

    List<Delivery> attempts = wechat.deliveries();
    assertThat(attempts).extracting(Delivery::attempt).containsExactly(1, 2, 3);
    assertThat(attempts).extracting(Delivery::status).containsExactly(500, 500, 204);
    assertThat(attempts)
        .extracting(Delivery::notificationId)
        .containsOnly(accepted.get(0).notificationId());
    assertThat(accepted.get(0).outTradeNo()).isEqualTo(outTradeNo);
  }

  @Test
  void duplicatedNotificationsArriveAsTheSameEventWithFreshNonces() throws Exception {
    wechat.setNotificationCopies(3);
    String outTradeNo = prepaid();

    wechat.pay(outTradeNo);
    awaitAccepted(3);

    assertThat(accepted).extracting(PaymentNotification::outTradeNo).containsOnly(outTradeNo);
    assertThat(accepted).extracting(PaymentNotification::notificationId).doesNotHaveDuplicates();
    assertThat(accepted).extracting(PaymentNotification::nonce).doesNotHaveDuplicates();
  }

  @Test
  void severalPaymentsAreDeliveredInTheShuffledOrder() throws Exception {
    List<String> trades = IntStream.range(0, 6).mapToObj(i -> prepaid()).toList();

    wechat.payShuffled(trades, 42L);
    awaitAccepted(trades.size());

    List<String> arrival = accepted.stream().map(PaymentNotification::outTradeNo).toList();
    assertThat(arrival).containsExactlyInAnyOrderElementsOf(trades).isNotEqualTo(trades);
  }

  @Test
  void aForgedNotificationSentToTheWebhookIsRefused() {
    String outTradeNo = prepaid();
    wechat.setWebhookUrl(null); // the genuine notification is lost
    wechat.pay(outTradeNo);
    wechat.setWebhookUrl(
        URI.create("http://127.0.0.1:" + webhook.getAddress().getPort() + "/notify"));

    int status =
        wechat.sendRawNotification(wechat.notification(outTradeNo).tamperCiphertext().build());

    assertThat(status).isEqualTo(401);
    assertThat(accepted).isEmpty();
  }
}
