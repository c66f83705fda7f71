package io.ordertimeout.wechat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ordertimeout.embedded.wechat.SignedNotification;
import io.ordertimeout.embedded.wechat.TradeSnapshot;
import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import io.ordertimeout.wechat.InvalidNotificationException.Reason;
import java.security.KeyPairGenerator;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Notification verification and decryption through the SDK's NotificationParser. */
class PaymentNotificationTest {

  static final String TENANT = WeChatPayGatewayTest.TENANT;
  static WeChatPaySimulator wechat;
  static WeChatPayGateway gateway;

  @BeforeAll
  static void start() {
    wechat = WeChatPaySimulator.start();
    gateway = WeChatPayGatewayTest.gatewayFor(wechat, Clock.systemUTC(), Duration.ofSeconds(1));
  }

  @AfterAll
  static void stop() {
    wechat.close();
  }

  private static String paidTrade(long amountFen) {
    String outTradeNo = WeChatPayGatewayTest.newTradeNo();
    gateway.prepay(TENANT, WeChatPayGatewayTest.command(outTradeNo, amountFen));
    wechat.pay(
        outTradeNo); // no webhook set: the simulator's own delivery is lost, we build our own
    return outTradeNo;
  }

  @Test
  void aGenuineNotificationDecryptsToThePaidTransaction() {
    String outTradeNo = paidTrade(4200);
    TradeSnapshot trade = wechat.trade(outTradeNo).orElseThrow();
    SignedNotification n = wechat.notification(outTradeNo).build();

    PaymentNotification parsed = gateway.parseNotification(TENANT, n.headers(), n.body());

    assertThat(parsed.outTradeNo()).isEqualTo(outTradeNo);
    assertThat(parsed.transactionId()).isEqualTo(trade.transactionId());
    assertThat(parsed.tradeState()).isEqualTo(TradeState.SUCCESS);
    assertThat(parsed.amountTotalFen()).isEqualTo(4200);
    assertThat(parsed.mchid()).isEqualTo(wechat.mchid());
    assertThat(parsed.appid()).isEqualTo(wechat.appid());
    assertThat(parsed.successTime()).isEqualTo(trade.successTime());
    assertThat(parsed.eventType()).isEqualTo("TRANSACTION.SUCCESS");
    assertThat(parsed.nonce()).isEqualTo(n.header("Wechatpay-Nonce"));
    assertThat(parsed.timestamp().getEpochSecond())
        .isEqualTo(Long.parseLong(n.header("Wechatpay-Timestamp")));
  }

  @Test
  void lowerCasedHeadersAsApiGatewayDeliversThemAreAccepted() {
    SignedNotification n = wechat.notification(paidTrade(100)).build();
    Map<String, String> lower = new HashMap<>();
    n.headers().forEach((k, v) -> lower.put(k.toLowerCase(Locale.ROOT), v));

    assertThat(gateway.parseNotification(TENANT, lower, n.body()).tradeState())
        .isEqualTo(TradeState.SUCCESS);
  }

  @Test
  void aReplayCarriesTheSameNonceSoTheCallerCanRefuseIt() {
    SignedNotification n = wechat.notification(paidTrade(100)).build();

    PaymentNotification first = gateway.parseNotification(TENANT, n.headers(), n.body());
    PaymentNotification replay = gateway.parseNotification(TENANT, n.headers(), n.body());

    assertThat(replay.nonce()).isEqualTo(first.nonce());
    assertThat(replay.notificationId()).isEqualTo(first.notificationId());
  }

  @Test
  void aNotificationSignedWithAnotherKeyIsRejected() throws Exception {
    KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
    generator.initialize(2048);
    SignedNotification forged =
        wechat
            .notification(paidTrade(100))
            .signedWith(generator.generateKeyPair().getPrivate())
            .build();

    assertRejected(forged, Reason.BAD_SIGNATURE);
  }

  @Test
  void aNotificationNamingAnotherPublicKeyIdIsRejected() {
    SignedNotification n =
        wechat
            .notification(paidTrade(100))
            .serial("PUB_KEY_ID_0000000000000000000000000000")
            .build();

    assertRejected(n, Reason.UNKNOWN_SERIAL);
  }

  @Test
  void anAlteredBodyNoLongerMatchesItsSignature() {
    SignedNotification n = wechat.notification(paidTrade(100)).build();

    assertRejected(
        n.withBody(n.body().replace("TRANSACTION.SUCCESS", "TRANSACTION.SUCCESS ")),
        Reason.BAD_SIGNATURE);
  }

  @Test
  void aStaleTimestampIsRejectedEvenWithAValidSignature() {
    SignedNotification stale =
        wechat
            .notification(paidTrade(100))
            .timestamp(Instant.now().minus(Duration.ofMinutes(6)))
            .build();

    assertRejected(stale, Reason.STALE_TIMESTAMP);
  }

  @Test
  void freshnessIsJudgedByTheInjectedClock() {
    SignedNotification n = wechat.notification(paidTrade(100)).build();
    Clock tenMinutesAhead = Clock.offset(Clock.systemUTC(), Duration.ofMinutes(10));
    WeChatPayGateway skewed =
        WeChatPayGatewayTest.gatewayFor(wechat, tenMinutesAhead, Duration.ofSeconds(1));

    assertThatThrownBy(() -> skewed.parseNotification(TENANT, n.headers(), n.body()))
        .isInstanceOfSatisfying(
            InvalidNotificationException.class,
            e -> assertThat(e.reason()).isEqualTo(Reason.STALE_TIMESTAMP));
  }

  @Test
  void aTamperedCiphertextFailsDecryption() {
    assertRejected(
        wechat.notification(paidTrade(100)).tamperCiphertext().build(), Reason.DECRYPTION_FAILED);
  }

  @Test
  void aResourceEncryptedWithAnotherApiV3KeyFailsDecryption() {
    SignedNotification n =
        wechat
            .notification(paidTrade(100))
            .encryptedWith("0123456789abcdef0123456789ABCDEF")
            .build();

    assertRejected(n, Reason.DECRYPTION_FAILED);
  }

  @Test
  void missingHeadersAreMalformedAndGarbageTimestampsInvalid() {
    SignedNotification n = wechat.notification(paidTrade(100)).build();
    Map<String, String> noNonce = new HashMap<>(n.headers());
    noNonce.remove("Wechatpay-Nonce");

    assertRejected(new SignedNotification(noNonce, n.body()), Reason.MALFORMED);
    assertRejected(n.withHeader("Wechatpay-Timestamp", "yesterday"), Reason.INVALID_TIMESTAMP);
    assertRejected(n.withBody(""), Reason.MALFORMED);
  }

  private static void assertRejected(SignedNotification n, Reason reason) {
    assertThatThrownBy(() -> gateway.parseNotification(TENANT, n.headers(), n.body()))
        .isInstanceOfSatisfying(
            InvalidNotificationException.class,
            e -> {
              assertThat(e.reason()).isEqualTo(reason);
              assertThat(e.getMessage()).contains(TENANT);
            });
  }
}
