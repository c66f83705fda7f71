package io.ordertimeout.embedded.wechat;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The simulator on the wire, without the SDK. */
class WeChatPaySimulatorTest {

  static WeChatPaySimulator wechat;
  final HttpClient http = HttpClient.newHttpClient();

  @BeforeAll
  static void start() {
    wechat = WeChatPaySimulator.start();
  }

  @AfterAll
  static void stop() {
    wechat.close();
  }

  private HttpResponse<String> get(String path, String authorization) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(wechat.baseUrl() + path));
    if (authorization != null) {
      request.header("Authorization", authorization);
    }
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private String signedAuthorization(String method, String url, String body) {
    String ts = String.valueOf(Instant.now().getEpochSecond());
    String nonce = WeChatCrypto.nonce(32);
    String signature =
        WeChatCrypto.sign(
            wechat.merchantPrivateKey(),
            method + "\n" + url + "\n" + ts + "\n" + nonce + "\n" + body + "\n");
    return NotificationBuilder.SIGNATURE_TYPE
        + " mchid=\""
        + wechat.mchid()
        + "\",nonce_str=\""
        + nonce
        + "\",timestamp=\""
        + ts
        + "\",serial_no=\""
        + wechat.merchantSerialNumber()
        + "\",signature=\""
        + signature
        + "\"";
  }

  @Test
  void anUnsignedRequestIsAnsweredWithSignErrorAndCounted() throws Exception {
    int before = wechat.callCount(Endpoint.QUERY);

    HttpResponse<String> response =
        get("/v3/pay/transactions/out-trade-no/X1?mchid=" + wechat.mchid(), null);

    assertThat(response.statusCode()).isEqualTo(401);
    assertThat(response.body()).contains("\"code\":\"SIGN_ERROR\"");
    assertThat(wechat.callCount(Endpoint.QUERY)).isEqualTo(before + 1);
  }

  @Test
  void aHeldCallIsCountedOnArrivalAndAnsweredOnlyOnceItsGateOpens() throws Exception {
    String url = "/v3/pay/transactions/out-trade-no/HELD?mchid=" + wechat.mchid();
    int before = wechat.callCount(Endpoint.QUERY);
    CompletableFuture<HttpResponse<String>> answer;
    try (WeChatPaySimulator.Gate gate = wechat.hold(Endpoint.QUERY)) {
      answer = CompletableFuture.supplyAsync(() -> getUnchecked(url));
      while (wechat.callCount(Endpoint.QUERY) == before) {
        Thread.sleep(5);
      }
      Thread.sleep(200);

      assertThat(answer).as("held at the gate").isNotDone();
      assertThat(get("/v3/refund/domestic/refunds/R1", null).statusCode())
          .as("another endpoint's call is not held")
          .isEqualTo(401);
      assertThat(answer).isNotDone();
      gate.open();
      assertThat(answer.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(401);
    }
    HttpResponse<String> after = get(url, null);

    assertThat(after.statusCode()).as("the gate closed with the try").isEqualTo(401);
    assertThat(wechat.callCount(Endpoint.QUERY)).isEqualTo(before + 2);
  }

  private HttpResponse<String> getUnchecked(String path) {
    try {
      return get(path, null);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void answersAreSignedWithThePlatformKeyUnderJdkCasedHeaderNames() throws Exception {
    String url = "/v3/pay/transactions/out-trade-no/NOPE?mchid=" + wechat.mchid();

    HttpResponse<String> response = get(url, signedAuthorization("GET", url, ""));

    assertThat(response.statusCode()).isEqualTo(404);
    assertThat(response.body()).contains("ORDER_NOT_EXIST");
    String ts = response.headers().firstValue("wechatpay-timestamp").orElseThrow();
    String nonce = response.headers().firstValue("wechatpay-nonce").orElseThrow();
    String signature = response.headers().firstValue("wechatpay-signature").orElseThrow();
    assertThat(response.headers().firstValue("wechatpay-serial"))
        .contains(wechat.platformPublicKeyId());
    assertThat(
            WeChatCrypto.verify(
                wechat.platformPublicKey(),
                ts + "\n" + nonce + "\n" + response.body() + "\n",
                signature))
        .isTrue();
    assertThat(response.headers().map().keySet())
        .contains("wechatpay-timestamp")
        .doesNotContain("Wechatpay-Timestamp");
  }

  @Test
  void wechatsRetryScheduleSpansTwentyFourHoursAndFourMinutes() {
    Duration total =
        NotificationSender.WECHAT_RETRY_SCHEDULE.stream().reduce(Duration.ZERO, Duration::plus);

    assertThat(NotificationSender.WECHAT_RETRY_SCHEDULE).hasSize(15);
    assertThat(total).isEqualTo(Duration.ofHours(24).plusMinutes(4));
  }

  @Test
  void keysAndIdsHaveWeChatsShapes() {
    assertThat(wechat.platformPublicKeyId()).matches("PUB_KEY_ID_\\d{28}");
    assertThat(wechat.merchantSerialNumber()).matches("[0-9A-F]{40}");
    assertThat(wechat.apiV3Key().getBytes(StandardCharsets.US_ASCII)).hasSize(32);
    assertThat(wechat.platformPublicKeyPem()).startsWith("-----BEGIN PUBLIC KEY-----");
  }
}
