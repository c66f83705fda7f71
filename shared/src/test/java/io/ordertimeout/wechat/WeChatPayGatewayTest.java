package io.ordertimeout.wechat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ordertimeout.embedded.wechat.Endpoint;
import io.ordertimeout.embedded.wechat.Fault;
import io.ordertimeout.embedded.wechat.TradeSnapshot;
import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import java.nio.charset.StandardCharsets;
import java.security.Signature;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The gateway through the real wechatpay-java SDK against the simulator. */
class WeChatPayGatewayTest {

  static final String TENANT = "tenant-a";
  static WeChatPaySimulator wechat;
  static WeChatPayGateway gateway;

  @BeforeAll
  static void start() {
    wechat = WeChatPaySimulator.start();
    gateway = gatewayFor(wechat, Clock.systemUTC(), Duration.ofMillis(800));
  }

  @AfterAll
  static void stop() {
    wechat.close();
  }

  static WeChatPayGateway gatewayFor(WeChatPaySimulator sim, Clock clock, Duration readTimeout) {
    MerchantCredentials credentials =
        new MerchantCredentials(
            sim.mchid(),
            sim.appid(),
            sim.merchantSerialNumber(),
            sim.merchantPrivateKeyPem(),
            sim.apiV3Key(),
            sim.platformPublicKeyId(),
            sim.platformPublicKeyPem(),
            "https://mall.example.com/wechat/notify/" + TENANT);
    GatewaySettings settings =
        GatewaySettings.production().withReadTimeout(readTimeout).withBaseUrl(sim.baseUrl());
    return new WeChatPayGateway(
        new StaticMerchantDirectory(Map.of(TENANT, credentials)), clock, settings);
  }

  static String newTradeNo() {
    return "OT" + UUID.randomUUID().toString().replace("-", "").substring(0, 24);
  }

  static String prepaid(long amountFen) {
    String outTradeNo = newTradeNo();
    gateway.prepay(TENANT, command(outTradeNo, amountFen));
    return outTradeNo;
  }

  static PrepayCommand command(String outTradeNo, long amountFen) {
    return new PrepayCommand(
        outTradeNo,
        "2 x tea",
        amountFen,
        "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o",
        Instant.now().plus(Duration.ofMinutes(15)));
  }

  @Test
  void prepayAnswersRequestPaymentParametersSignedWithTheMerchantKey() throws Exception {
    String outTradeNo = newTradeNo();

    MiniProgramPayment payment = gateway.prepay(TENANT, command(outTradeNo, 1999));

    TradeSnapshot trade = wechat.trade(outTradeNo).orElseThrow();
    assertThat(payment.packageValue()).isEqualTo("prepay_id=" + trade.prepayId());
    assertThat(payment.appId()).isEqualTo(wechat.appid());
    assertThat(payment.signType()).isEqualTo("RSA");
    String message =
        payment.appId()
            + "\n"
            + payment.timeStamp()
            + "\n"
            + payment.nonceStr()
            + "\n"
            + payment.packageValue()
            + "\n";
    Signature verifier = Signature.getInstance("SHA256withRSA");
    verifier.initVerify(wechat.merchantPublicKey());
    verifier.update(message.getBytes(StandardCharsets.UTF_8));
    assertThat(verifier.verify(Base64.getDecoder().decode(payment.paySign()))).isTrue();
    assertThat(trade.amountFen()).isEqualTo(1999);
    assertThat(trade.timeExpire()).isAfter(Instant.now());
  }

  @Test
  void repeatedPrepayIsIdempotentButChangedParametersAreRejected() {
    String outTradeNo = newTradeNo();
    PrepayCommand first = command(outTradeNo, 500);
    String prepayId = gateway.prepay(TENANT, first).prepayId();

    assertThat(gateway.prepay(TENANT, first).prepayId()).isEqualTo(prepayId);
    assertThatThrownBy(() -> gateway.prepay(TENANT, command(outTradeNo, 501)))
        .isInstanceOfSatisfying(
            PaymentRejectedException.class,
            e -> {
              assertThat(e.code()).isEqualTo("OUT_TRADE_NO_USED");
              assertThat(e.httpStatus()).isEqualTo(403);
              assertThat(e.reference()).isEqualTo(outTradeNo);
            });
  }

  @Test
  void queryFollowsTheTradeFromNotPayToSuccess() {
    String outTradeNo = prepaid(2500);
    assertThat(gateway.query(TENANT, WeChatTrade.ofTenantMerchant(outTradeNo)).state())
        .isEqualTo(TradeState.NOTPAY);

    TradeSnapshot paid = wechat.pay(outTradeNo);
    TradeStatus status = gateway.query(TENANT, WeChatTrade.ofTenantMerchant(outTradeNo));

    assertThat(status.state()).isEqualTo(TradeState.SUCCESS);
    assertThat(status.transactionId()).isEqualTo(paid.transactionId());
    assertThat(status.amountFen()).isEqualTo(2500L);
    assertThat(status.successTime()).isEqualTo(paid.successTime());
  }

  @Test
  void queryReportsUserPayingAndUnknownTrades() {
    String outTradeNo = prepaid(100);
    wechat.setUserPaying(outTradeNo);

    assertThat(gateway.query(TENANT, WeChatTrade.ofTenantMerchant(outTradeNo)).state())
        .isEqualTo(TradeState.USERPAYING);
    assertThat(gateway.query(TENANT, WeChatTrade.ofTenantMerchant(newTradeNo())).state())
        .isEqualTo(TradeState.NOT_FOUND);
  }

  @Test
  void closeClosesAnUnpaidTradeAndRepeatingItIsHarmless() {
    String outTradeNo = prepaid(300);

    assertThat(gateway.close(TENANT, WeChatTrade.ofTenantMerchant(outTradeNo)))
        .isEqualTo(WeChatCloseOutcome.CLOSED);
    assertThat(gateway.close(TENANT, WeChatTrade.ofTenantMerchant(outTradeNo)))
        .isEqualTo(WeChatCloseOutcome.CLOSED);
    assertThat(gateway.query(TENANT, WeChatTrade.ofTenantMerchant(outTradeNo)).state())
        .isEqualTo(TradeState.CLOSED);
  }

  @Test
  void closeOfAPaidTradeAnswersAlreadyPaidAndLeavesItPaid() {
    String outTradeNo = prepaid(300);
    wechat.pay(outTradeNo);

    assertThat(gateway.close(TENANT, WeChatTrade.ofTenantMerchant(outTradeNo)))
        .isEqualTo(WeChatCloseOutcome.ALREADY_PAID);
    assertThat(gateway.query(TENANT, WeChatTrade.ofTenantMerchant(outTradeNo)).state())
        .isEqualTo(TradeState.SUCCESS);
  }

  @Test
  void closeWhileTheUserIsPayingIsTransientAndDoesNotClose() {
    String outTradeNo = prepaid(300);
    wechat.setUserPaying(outTradeNo);

    assertThatThrownBy(() -> gateway.close(TENANT, WeChatTrade.ofTenantMerchant(outTradeNo)))
        .isInstanceOfSatisfying(
            PaymentTransientException.class,
            e -> {
              assertThat(e.code()).isEqualTo("USERPAYING");
              assertThat(e.operation()).isEqualTo("close");
              assertThat(e.reference()).isEqualTo(outTradeNo);
            });
    assertThat(gateway.query(TENANT, WeChatTrade.ofTenantMerchant(outTradeNo)).state())
        .isEqualTo(TradeState.USERPAYING);
  }

  @Test
  void closeOfATradeWeChatNeverSawIsNotFound() {
    assertThat(gateway.close(TENANT, WeChatTrade.ofTenantMerchant(newTradeNo())))
        .isEqualTo(WeChatCloseOutcome.NOT_FOUND);
  }

  @Test
  void refundOfAPaidTradeCompletesAndTheTradeTurnsRefund() {
    String outTradeNo = prepaid(880);
    wechat.pay(outTradeNo);
    String outRefundNo = "RF" + outTradeNo;

    RefundResult created =
        gateway.refund(
            TENANT, WeChatTrade.ofTenantMerchant(outTradeNo), outRefundNo, 880, "paid after close");
    // WeChat settles a refund after accepting it (the simulator: 200 ms later)
    RefundResult queried =
        io.ordertimeout.testing.Await.until(
            "refund " + outRefundNo + " settled",
            () -> gateway.queryRefund(TENANT, outRefundNo),
            r -> r.status() != RefundStatus.PROCESSING);

    assertThat(created.status()).isEqualTo(RefundStatus.PROCESSING);
    assertThat(created.refundFen()).isEqualTo(880L);
    assertThat(queried.status()).isEqualTo(RefundStatus.SUCCESS);
    assertThat(queried.refundId()).isEqualTo(created.refundId());
    assertThat(gateway.query(TENANT, WeChatTrade.ofTenantMerchant(outTradeNo)).state())
        .isEqualTo(TradeState.REFUND);
    assertThat(gateway.queryRefund(TENANT, "RF" + newTradeNo()).status())
        .isEqualTo(RefundStatus.NOT_FOUND);
  }

  /**
   * This merchant's notify URL is a proxy of its own (.../wechat/notify/..., not the webhook's
   * path): the refund names no notify_url, and WeChat posts to the merchant platform's refund URL.
   */
  @Test
  void aRefundOfAMerchantWithItsOwnNotifyUrlNamesNone() {
    String outTradeNo = prepaid(880);
    wechat.pay(outTradeNo);

    gateway.refund(
        TENANT,
        WeChatTrade.ofTenantMerchant(outTradeNo),
        "RF" + outTradeNo,
        880,
        "paid after close");

    assertThat(wechat.refundStatus("RF" + outTradeNo)).isPresent();
    assertThat(wechat.refundNotifyUrl("RF" + outTradeNo)).isEmpty();
  }

  @Test
  void refundOfAnUnpaidTradeIsRejected() {
    String outTradeNo = prepaid(880);

    assertThatThrownBy(
            () ->
                gateway.refund(
                    TENANT,
                    WeChatTrade.ofTenantMerchant(outTradeNo),
                    "RF" + outTradeNo,
                    880,
                    "test"))
        .isInstanceOfSatisfying(
            PaymentRejectedException.class, e -> assertThat(e.code()).isEqualTo("INVALID_REQUEST"));
  }

  @Test
  void systemErrorAndFrequencyLimitAreTransientAndTheNextCallSucceeds() {
    String outTradeNo = prepaid(300);
    wechat.injectFault(Endpoint.QUERY, Fault.SYSTEM_ERROR, 1);
    wechat.injectFault(Endpoint.CLOSE, Fault.FREQUENCY_LIMITED, 1);

    assertThatThrownBy(() -> gateway.query(TENANT, WeChatTrade.ofTenantMerchant(outTradeNo)))
        .isInstanceOfSatisfying(
            PaymentTransientException.class, e -> assertThat(e.code()).isEqualTo("SYSTEM_ERROR"));
    assertThatThrownBy(() -> gateway.close(TENANT, WeChatTrade.ofTenantMerchant(outTradeNo)))
        .isInstanceOfSatisfying(
            PaymentTransientException.class,
            e -> assertThat(e.code()).isEqualTo("FREQUENCY_LIMITED"));
    assertThat(gateway.query(TENANT, WeChatTrade.ofTenantMerchant(outTradeNo)).state())
        .isEqualTo(TradeState.NOTPAY);
    assertThat(gateway.close(TENANT, WeChatTrade.ofTenantMerchant(outTradeNo)))
        .isEqualTo(WeChatCloseOutcome.CLOSED);
  }

  @Test
  void aCallThatHangsPastTheReadTimeoutIsTransient() {
    String outTradeNo = prepaid(300);
    wechat.setHangTime(Duration.ofSeconds(5));
    wechat.injectFault(Endpoint.QUERY, Fault.HANG, 1);
    int callsBefore = wechat.callCount(Endpoint.QUERY);
    long started = System.nanoTime();

    assertThatThrownBy(() -> gateway.query(TENANT, WeChatTrade.ofTenantMerchant(outTradeNo)))
        .isInstanceOfSatisfying(
            PaymentTransientException.class, e -> assertThat(e.code()).isEqualTo("TIMEOUT"));

    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(3));
    assertThat(wechat.callCount(Endpoint.QUERY) - callsBefore).isEqualTo(1);
  }

  @Test
  void slowButTimelyAnswersStillSucceed() {
    String outTradeNo = prepaid(300);
    wechat.setLatency(Endpoint.QUERY, Duration.ofMillis(300));
    try {
      assertThat(gateway.query(TENANT, WeChatTrade.ofTenantMerchant(outTradeNo)).state())
          .isEqualTo(TradeState.NOTPAY);
    } finally {
      wechat.setLatency(Endpoint.QUERY, Duration.ZERO);
    }
  }

  @Test
  void aMerchantKeyWeChatDoesNotKnowIsRejectedWithSignError() {
    try (WeChatPaySimulator other = WeChatPaySimulator.start()) {
      // wechat's mchid, but another merchant key and serial: WeChat cannot verify the request
      GatewaySettings toWechat = GatewaySettings.production().withBaseUrl(wechat.baseUrl());
      MerchantCredentials mixed =
          new MerchantCredentials(
              wechat.mchid(),
              wechat.appid(),
              other.merchantSerialNumber(),
              other.merchantPrivateKeyPem(),
              wechat.apiV3Key(),
              wechat.platformPublicKeyId(),
              wechat.platformPublicKeyPem(),
              "https://x/n");
      WeChatPayGateway forged =
          new WeChatPayGateway(
              new StaticMerchantDirectory(Map.of(TENANT, mixed)), Clock.systemUTC(), toWechat);

      assertThatThrownBy(() -> forged.query(TENANT, WeChatTrade.ofTenantMerchant(newTradeNo())))
          .isInstanceOfSatisfying(
              PaymentRejectedException.class,
              e -> {
                assertThat(e.code()).isEqualTo("SIGN_ERROR");
                assertThat(e.httpStatus()).isEqualTo(401);
              });
    }
  }

  @Test
  void anAnswerSignedWithAnotherPlatformKeyIsNotTrusted() {
    try (WeChatPaySimulator impostor = WeChatPaySimulator.start()) {
      // our merchant keys are unknown to the impostor, so it answers 401; the point is the reverse
      // case:
      // a gateway that trusts `impostor`'s public key must refuse `wechat`'s signed answers
      MerchantCredentials trustsImpostor =
          new MerchantCredentials(
              wechat.mchid(),
              wechat.appid(),
              wechat.merchantSerialNumber(),
              wechat.merchantPrivateKeyPem(),
              wechat.apiV3Key(),
              wechat.platformPublicKeyId(),
              impostor.platformPublicKeyPem(),
              "https://x/n");
      WeChatPayGateway misled =
          new WeChatPayGateway(
              new StaticMerchantDirectory(Map.of(TENANT, trustsImpostor)),
              Clock.systemUTC(),
              GatewaySettings.production().withBaseUrl(wechat.baseUrl()));
      String outTradeNo = prepaid(300);

      assertThatThrownBy(() -> misled.query(TENANT, WeChatTrade.ofTenantMerchant(outTradeNo)))
          .isInstanceOfSatisfying(
              PaymentTransientException.class,
              e -> assertThat(e.code()).isEqualTo("INVALID_RESPONSE"));
    }
  }
}
