package io.ordertimeout.wechat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ordertimeout.embedded.wechat.SignedNotification;
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

/**
 * Sub-merchant tenants of one service provider through the real SDK's partner services against the
 * simulator acting as the provider: prepay, query, close, refund and the provider's notifications,
 * routed by sub_mchid.
 */
class PartnerGatewayTest {
  static final String SHOP_A = "shop-a";
  static final String SHOP_B = "shop-b";
  static final String SUB_A = "1900000201";
  static final String SUB_B = "1900000202";
  static final String SUB_APPID_A = "wx1111111111111111";
  static final String OPENID = "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o";

  static WeChatPaySimulator provider;
  static WeChatPayGateway gateway;

  @BeforeAll
  static void start() {
    provider = WeChatPaySimulator.start(Clock.systemUTC(), "1900000100");
    provider.subMerchants().register(SUB_A, SUB_APPID_A);
    provider.subMerchants().register(SUB_B, null);
    gateway =
        new WeChatPayGateway(
            new StaticMerchantDirectory(
                Map.of(
                    SHOP_A, subMerchant(provider, SUB_A, SUB_APPID_A),
                    SHOP_B, subMerchant(provider, SUB_B, null))),
            Clock.systemUTC(),
            GatewaySettings.production().withBaseUrl(provider.baseUrl()));
  }

  @AfterAll
  static void stop() {
    provider.close();
  }

  static MerchantCredentials subMerchant(WeChatPaySimulator sim, String sub, String subAppid) {
    return new MerchantCredentials(
        sim.mchid(),
        sim.appid(),
        sim.merchantSerialNumber(),
        sim.merchantPrivateKeyPem(),
        sim.apiV3Key(),
        sim.platformPublicKeyId(),
        sim.platformPublicKeyPem(),
        "https://mall.example.com/wechatpay/notify",
        new SubMerchant(sub, subAppid));
  }

  static String newTradeNo() {
    return "SP" + UUID.randomUUID().toString().replace("-", "").substring(0, 24);
  }

  static PrepayCommand command(String outTradeNo, long amountFen) {
    return new PrepayCommand(
        outTradeNo, "1 x cake", amountFen, OPENID, Instant.now().plus(Duration.ofMinutes(15)));
  }

  @Test
  void prepayGoesThroughThePartnerApiAndPaySignCoversTheSubAppid() throws Exception {
    String outTradeNo = newTradeNo();

    MiniProgramPayment payment = gateway.prepay(SHOP_A, command(outTradeNo, 1999));

    TradeSnapshot trade = provider.subMerchants().trade(SUB_A, outTradeNo).orElseThrow();
    assertThat(provider.trade(outTradeNo)).isEmpty(); // not a trade of the provider's own
    assertThat(payment.packageValue()).isEqualTo("prepay_id=" + trade.prepayId());
    assertThat(payment.appId()).isEqualTo(SUB_APPID_A);
    assertThat(trade.amountFen()).isEqualTo(1999);
    assertThat(trade.payerOpenId()).isEqualTo(OPENID);
    Signature verifier = Signature.getInstance("SHA256withRSA");
    verifier.initVerify(provider.merchantPublicKey());
    verifier.update(
        (payment.appId()
                + "\n"
                + payment.timeStamp()
                + "\n"
                + payment.nonceStr()
                + "\n"
                + payment.packageValue()
                + "\n")
            .getBytes(StandardCharsets.UTF_8));
    assertThat(verifier.verify(Base64.getDecoder().decode(payment.paySign()))).isTrue();
    assertThat(provider.subMerchants().notifyUrl(SUB_A, outTradeNo))
        .contains("https://mall.example.com/wechatpay/notify/provider/1900000100");
  }

  @Test
  void aSubMerchantWithoutItsOwnAppidPaysUnderTheProvidersAppid() {
    String outTradeNo = newTradeNo();

    MiniProgramPayment payment = gateway.prepay(SHOP_B, command(outTradeNo, 300));

    assertThat(payment.appId()).isEqualTo(provider.appid());
    assertThat(provider.subMerchants().transaction(SUB_B, outTradeNo).path("sp_appid").asText())
        .isEqualTo(provider.appid());
  }

  @Test
  void oneOutTradeNoUnderTwoSubMerchantsIsTwoTrades() {
    String outTradeNo = newTradeNo();
    gateway.prepay(SHOP_A, command(outTradeNo, 100));
    gateway.prepay(SHOP_B, command(outTradeNo, 200));

    TradeSnapshot paid = provider.subMerchants().pay(SUB_A, outTradeNo);

    TradeStatus a = gateway.query(SHOP_A, new WeChatTrade(SUB_A, outTradeNo));
    TradeStatus b = gateway.query(SHOP_B, new WeChatTrade(SUB_B, outTradeNo));
    assertThat(a.state()).isEqualTo(TradeState.SUCCESS);
    assertThat(a.transactionId()).isEqualTo(paid.transactionId());
    assertThat(a.amountFen()).isEqualTo(100);
    assertThat(b.state()).isEqualTo(TradeState.NOTPAY);
    assertThat(b.amountFen()).isEqualTo(200);
  }

  @Test
  void queryOfATradeTheSubMerchantNeverMadeIsNotFound() {
    assertThat(gateway.query(SHOP_A, new WeChatTrade(SUB_A, newTradeNo())).state())
        .isEqualTo(TradeState.NOT_FOUND);
  }

  @Test
  void closeClosesOnlyTheSubMerchantsTradeAndAPaidOneAnswersAlreadyPaid() {
    String outTradeNo = newTradeNo();
    gateway.prepay(SHOP_A, command(outTradeNo, 100));
    gateway.prepay(SHOP_B, command(outTradeNo, 100));
    String paidNo = newTradeNo();
    gateway.prepay(SHOP_B, command(paidNo, 100));
    provider.subMerchants().pay(SUB_B, paidNo);

    assertThat(gateway.close(SHOP_A, new WeChatTrade(SUB_A, outTradeNo)))
        .isEqualTo(WeChatCloseOutcome.CLOSED);
    assertThat(gateway.close(SHOP_B, new WeChatTrade(SUB_B, paidNo)))
        .isEqualTo(WeChatCloseOutcome.ALREADY_PAID);

    assertThat(provider.subMerchants().trade(SUB_A, outTradeNo).orElseThrow().state().name())
        .isEqualTo("CLOSED");
    assertThat(provider.subMerchants().trade(SUB_B, outTradeNo).orElseThrow().state().name())
        .isEqualTo("NOTPAY");
  }

  @Test
  void refundNamesTheSubMerchantAndIsQueriedUnderIt() {
    String outTradeNo = newTradeNo();
    gateway.prepay(SHOP_A, command(outTradeNo, 880));
    provider.subMerchants().pay(SUB_A, outTradeNo);
    String outRefundNo = "RF" + outTradeNo;

    RefundResult refund =
        gateway.refund(SHOP_A, new WeChatTrade(SUB_A, outTradeNo), outRefundNo, 880, "closed");

    assertThat(refund.outTradeNo()).isEqualTo(outTradeNo);
    assertThat(refund.refundFen()).isEqualTo(880);
    assertThat(provider.subMerchants().trade(SUB_A, outTradeNo).orElseThrow().refundedFen())
        .isEqualTo(880);
    // accepted as PROCESSING; WeChat settles it a while later (the simulator: 200 ms)
    org.awaitility.Awaitility.await()
        .atMost(java.time.Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(gateway.queryRefund(SHOP_A, outRefundNo).status())
                    .isEqualTo(RefundStatus.SUCCESS));
    assertThat(gateway.queryRefund(SHOP_B, outRefundNo).status()).isEqualTo(RefundStatus.NOT_FOUND);
  }

  @Test
  void aTradeBoundUnderTheOtherSubMerchantIsRefusedBeforeAnythingIsSent() {
    assertThatThrownBy(() -> gateway.close(SHOP_A, new WeChatTrade(SUB_B, newTradeNo())))
        .isInstanceOfSatisfying(
            PaymentRejectedException.class, e -> assertThat(e.code()).isEqualTo("MCHID_MISMATCH"));
    assertThat(gateway.merchantId(SHOP_A)).isEqualTo(SUB_A);
  }

  @Test
  void providerNotificationIsRoutedToTheTenantItsSubMchidNames() {
    String outTradeNo = newTradeNo();
    gateway.prepay(SHOP_B, command(outTradeNo, 420));
    TradeSnapshot paid = provider.subMerchants().pay(SUB_B, outTradeNo);
    SignedNotification n = provider.subMerchants().notification(SUB_B, outTradeNo).build();

    ProviderNotification routed =
        gateway.parseProviderNotification(provider.mchid(), n.headers(), n.body());

    assertThat(routed.tenantId()).isEqualTo(SHOP_B);
    PaymentNotification p = routed.payment();
    assertThat(p.mchid()).isEqualTo(SUB_B);
    assertThat(p.appid()).isEqualTo(provider.appid());
    assertThat(p.outTradeNo()).isEqualTo(outTradeNo);
    assertThat(p.tradeState()).isEqualTo(TradeState.SUCCESS);
    assertThat(p.amountTotalFen()).isEqualTo(420);
    assertThat(p.transactionId()).isEqualTo(paid.transactionId());
  }

  @Test
  void aNotificationNamingASubMerchantNoTenantIsIsRefused() {
    String outTradeNo = newTradeNo();
    gateway.prepay(SHOP_A, command(outTradeNo, 420));
    provider.subMerchants().pay(SUB_A, outTradeNo);
    var forged = provider.subMerchants().transaction(SUB_A, outTradeNo).put("sub_mchid", "19");
    SignedNotification n = provider.subMerchants().notificationOf(forged).build();

    assertThatThrownBy(
            () -> gateway.parseProviderNotification(provider.mchid(), n.headers(), n.body()))
        .isInstanceOfSatisfying(
            InvalidNotificationException.class,
            e ->
                assertThat(e.reason())
                    .isEqualTo(InvalidNotificationException.Reason.MERCHANT_MISMATCH));
  }

  @Test
  void aNotificationWhoseSubAppidIsNotTheTenantsIsRefused() {
    String outTradeNo = newTradeNo();
    gateway.prepay(SHOP_A, command(outTradeNo, 420));
    provider.subMerchants().pay(SUB_A, outTradeNo);
    var forged =
        provider
            .subMerchants()
            .transaction(SUB_A, outTradeNo)
            .put("sub_appid", "wx000000000000000");
    SignedNotification n = provider.subMerchants().notificationOf(forged).build();

    assertThatThrownBy(
            () -> gateway.parseProviderNotification(provider.mchid(), n.headers(), n.body()))
        .isInstanceOfSatisfying(
            InvalidNotificationException.class,
            e ->
                assertThat(e.reason())
                    .isEqualTo(InvalidNotificationException.Reason.MERCHANT_MISMATCH));
  }

  @Test
  void aNotificationOfAnotherProviderOnThisProvidersUrlIsRefused() {
    String outTradeNo = newTradeNo();
    gateway.prepay(SHOP_A, command(outTradeNo, 420));
    provider.subMerchants().pay(SUB_A, outTradeNo);
    var forged =
        provider.subMerchants().transaction(SUB_A, outTradeNo).put("sp_mchid", "1900000999");
    SignedNotification n = provider.subMerchants().notificationOf(forged).build();

    assertThatThrownBy(
            () -> gateway.parseProviderNotification(provider.mchid(), n.headers(), n.body()))
        .isInstanceOfSatisfying(
            InvalidNotificationException.class,
            e ->
                assertThat(e.reason())
                    .isEqualTo(InvalidNotificationException.Reason.MERCHANT_MISMATCH));
  }

  @Test
  void aProviderNoTenantBelongsToAnswersLikeABadSignature() {
    String outTradeNo = newTradeNo();
    gateway.prepay(SHOP_A, command(outTradeNo, 420));
    provider.subMerchants().pay(SUB_A, outTradeNo);
    SignedNotification n = provider.subMerchants().notification(SUB_A, outTradeNo).build();

    assertThatThrownBy(() -> gateway.parseProviderNotification("1900000999", n.headers(), n.body()))
        .isInstanceOfSatisfying(
            InvalidNotificationException.class,
            e -> {
              assertThat(e.reason()).isEqualTo(InvalidNotificationException.Reason.UNKNOWN_TENANT);
              assertThat(e.publicMessage()).contains("BAD_SIGNATURE");
            });
  }

  @Test
  void aForgedSignatureOnTheProvidersUrlIsRefused() {
    String outTradeNo = newTradeNo();
    gateway.prepay(SHOP_A, command(outTradeNo, 420));
    provider.subMerchants().pay(SUB_A, outTradeNo);
    SignedNotification n =
        provider
            .subMerchants()
            .notification(SUB_A, outTradeNo)
            .signedWith(provider.merchantPrivateKey())
            .build();

    assertThatThrownBy(
            () -> gateway.parseProviderNotification(provider.mchid(), n.headers(), n.body()))
        .isInstanceOfSatisfying(
            InvalidNotificationException.class,
            e ->
                assertThat(e.reason())
                    .isEqualTo(InvalidNotificationException.Reason.BAD_SIGNATURE));
  }

  @Test
  void aPartnerNotificationOnASubMerchantTenantsOwnRouteIsRefused() {
    String outTradeNo = newTradeNo();
    gateway.prepay(SHOP_A, command(outTradeNo, 420));
    provider.subMerchants().pay(SUB_A, outTradeNo);
    SignedNotification n = provider.subMerchants().notification(SUB_A, outTradeNo).build();

    assertThatThrownBy(() -> gateway.parseNotification(SHOP_A, n.headers(), n.body()))
        .isInstanceOfSatisfying(
            InvalidNotificationException.class,
            e ->
                assertThat(e.reason())
                    .isEqualTo(InvalidNotificationException.Reason.MERCHANT_MISMATCH));
  }
}
