package io.ordertimeout.embedded.wechat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The simulator as a service provider, on the wire: the partner APIs and their refusals. */
class SubMerchantsTest {
  static final ObjectMapper JSON = new ObjectMapper();
  static final String SUB_A = "1900000201";
  static final String SUB_B = "1900000202";
  static final String SUB_APPID_A = "wx1111111111111111";

  static WeChatPaySimulator provider;
  final HttpClient http = HttpClient.newHttpClient();

  @BeforeAll
  static void start() {
    provider = WeChatPaySimulator.start();
    provider.subMerchants().register(SUB_A, SUB_APPID_A);
    provider.subMerchants().register(SUB_B, null);
  }

  @AfterAll
  static void stop() {
    provider.close();
  }

  private HttpResponse<String> send(String method, String url, String body) throws Exception {
    String ts = String.valueOf(Instant.now().getEpochSecond());
    String nonce = WeChatCrypto.nonce(32);
    String signature =
        WeChatCrypto.sign(
            provider.merchantPrivateKey(),
            method + "\n" + url + "\n" + ts + "\n" + nonce + "\n" + body + "\n");
    String auth =
        NotificationBuilder.SIGNATURE_TYPE
            + " mchid=\""
            + provider.mchid()
            + "\",nonce_str=\""
            + nonce
            + "\",timestamp=\""
            + ts
            + "\",serial_no=\""
            + provider.merchantSerialNumber()
            + "\",signature=\""
            + signature
            + "\"";
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(provider.baseUrl() + url))
            .header("Authorization", auth)
            .header("Content-Type", "application/json")
            .method(
                method,
                body.isEmpty()
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body));
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static String prepayBody(String sub, String subAppid, String no, String payer) {
    return "{\"sp_appid\":\""
        + provider.appid()
        + "\",\"sp_mchid\":\""
        + provider.mchid()
        + "\",\"sub_mchid\":\""
        + sub
        + "\""
        + (subAppid == null ? "" : ",\"sub_appid\":\"" + subAppid + "\"")
        + ",\"description\":\"tea\",\"out_trade_no\":\""
        + no
        + "\",\"notify_url\":\"https://mall.example.com/wechatpay/notify/provider/"
        + provider.mchid()
        + "\",\"time_expire\":\""
        + TradeBook.rfc3339(Instant.now().plus(10, ChronoUnit.MINUTES))
        + "\",\"amount\":{\"total\":300,\"currency\":\"CNY\"},\"payer\":"
        + payer
        + "}";
  }

  private static JsonNode json(HttpResponse<String> r) throws Exception {
    return JSON.readTree(r.body());
  }

  @Test
  void oneOutTradeNoUnderTwoSubMerchantsIsTwoTradesAnsweredInThePartnerFormat() throws Exception {
    String no = "SPW" + WeChatCrypto.digits(12);
    assertThat(
            send(
                    "POST",
                    "/v3/pay/partner/transactions/jsapi",
                    prepayBody(SUB_A, SUB_APPID_A, no, "{\"sub_openid\":\"o-a\"}"))
                .statusCode())
        .isEqualTo(200);
    assertThat(
            send(
                    "POST",
                    "/v3/pay/partner/transactions/jsapi",
                    prepayBody(SUB_B, null, no, "{\"sp_openid\":\"o-b\"}"))
                .statusCode())
        .isEqualTo(200);
    provider.subMerchants().pay(SUB_A, no);

    String query =
        "/v3/pay/partner/transactions/out-trade-no/"
            + no
            + "?sp_mchid="
            + provider.mchid()
            + "&sub_mchid=";
    JsonNode a = json(send("GET", query + SUB_A, ""));
    JsonNode b = json(send("GET", query + SUB_B, ""));

    assertThat(a.path("trade_state").asText()).isEqualTo("SUCCESS");
    assertThat(a.path("sp_mchid").asText()).isEqualTo(provider.mchid());
    assertThat(a.path("sub_mchid").asText()).isEqualTo(SUB_A);
    assertThat(a.path("sub_appid").asText()).isEqualTo(SUB_APPID_A);
    assertThat(a.path("payer").path("sub_openid").asText()).isEqualTo("o-a");
    assertThat(a.has("mchid")).isFalse();
    assertThat(b.path("trade_state").asText()).isEqualTo("NOTPAY");
    assertThat(b.path("sp_appid").asText()).isEqualTo(provider.appid());
    assertThat(b.has("sub_appid")).isFalse();
    assertThat(provider.trade(no)).isEmpty();
  }

  @Test
  void prepayRefusesAnUnknownSubMerchantAWrongSubAppidAndAMissingOpenid() throws Exception {
    String no = "SPX" + WeChatCrypto.digits(12);
    HttpResponse<String> unknown =
        send(
            "POST",
            "/v3/pay/partner/transactions/jsapi",
            prepayBody("1900000299", null, no, "{\"sp_openid\":\"o\"}"));
    HttpResponse<String> appid =
        send(
            "POST",
            "/v3/pay/partner/transactions/jsapi",
            prepayBody(SUB_B, SUB_APPID_A, no, "{\"sub_openid\":\"o\"}"));
    HttpResponse<String> openid =
        send(
            "POST",
            "/v3/pay/partner/transactions/jsapi",
            prepayBody(SUB_A, SUB_APPID_A, no, "{\"sp_openid\":\"o\"}"));

    assertThat(unknown.statusCode()).isEqualTo(400);
    assertThat(json(unknown).path("code").asText()).isEqualTo("PARAM_ERROR");
    assertThat(json(appid).path("code").asText()).isEqualTo("APPID_MCHID_NOT_MATCH");
    assertThat(json(openid).path("message").asText()).contains("sub_openid");
    assertThat(provider.subMerchants().trade(SUB_A, no)).isEmpty();
    assertThat(provider.subMerchants().trade(SUB_B, no)).isEmpty();
  }

  @Test
  void closeAndRefundActOnTheNamedSubMerchantsTradeOnly() throws Exception {
    String no = "SPY" + WeChatCrypto.digits(12);
    send(
        "POST",
        "/v3/pay/partner/transactions/jsapi",
        prepayBody(SUB_A, SUB_APPID_A, no, "{\"sub_openid\":\"o-a\"}"));
    send(
        "POST",
        "/v3/pay/partner/transactions/jsapi",
        prepayBody(SUB_B, null, no, "{\"sp_openid\":\"o-b\"}"));
    provider.subMerchants().pay(SUB_B, no);

    HttpResponse<String> close =
        send(
            "POST",
            "/v3/pay/partner/transactions/out-trade-no/" + no + "/close",
            "{\"sp_mchid\":\"" + provider.mchid() + "\",\"sub_mchid\":\"" + SUB_A + "\"}");
    HttpResponse<String> refund =
        send(
            "POST",
            "/v3/refund/domestic/refunds",
            "{\"sub_mchid\":\""
                + SUB_B
                + "\",\"out_trade_no\":\""
                + no
                + "\",\"out_refund_no\":\"R"
                + no
                + "\",\"amount\":{\"refund\":300,\"total\":300,\"currency\":\"CNY\"}}");
    HttpResponse<String> refundQuery =
        send("GET", "/v3/refund/domestic/refunds/R" + no + "?sub_mchid=" + SUB_B, "");
    // accepted as PROCESSING, settled by WeChat a while later (200 ms here)
    String settled = json(refundQuery).path("status").asText();
    for (int i = 0; i < 100 && !settled.equals("SUCCESS"); i++) {
      Thread.sleep(50);
      settled =
          json(send("GET", "/v3/refund/domestic/refunds/R" + no + "?sub_mchid=" + SUB_B, ""))
              .path("status")
              .asText();
    }
    HttpResponse<String> otherSubQuery =
        send("GET", "/v3/refund/domestic/refunds/R" + no + "?sub_mchid=" + SUB_A, "");

    assertThat(close.statusCode()).isEqualTo(204);
    assertThat(provider.subMerchants().trade(SUB_A, no).orElseThrow().state())
        .isEqualTo(TradeState.CLOSED);
    assertThat(refund.statusCode()).isEqualTo(200);
    assertThat(provider.subMerchants().trade(SUB_B, no).orElseThrow().refundedFen()).isEqualTo(300);
    assertThat(json(refundQuery).path("status").asText()).isIn("PROCESSING", "SUCCESS");
    assertThat(settled).isEqualTo("SUCCESS");
    assertThat(otherSubQuery.statusCode()).isEqualTo(404);
  }

  @Test
  void aQueryNamingAnotherProviderIsRefused() throws Exception {
    HttpResponse<String> r =
        send(
            "GET",
            "/v3/pay/partner/transactions/out-trade-no/SPZ1?sp_mchid=1900000999&sub_mchid=" + SUB_A,
            "");

    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(json(r).path("code").asText()).isEqualTo("PARAM_ERROR");
  }

  @Test
  void controlsRefuseASubMerchantNotRegistered() {
    assertThatThrownBy(() -> provider.subMerchants().pay("1900000299", "X1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not registered with provider " + provider.mchid());
    assertThatThrownBy(() -> provider.subMerchants().register(provider.mchid(), null))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
