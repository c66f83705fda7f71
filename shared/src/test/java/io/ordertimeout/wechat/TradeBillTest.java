package io.ordertimeout.wechat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ordertimeout.embedded.wechat.TradeBillWriter;
import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import io.ordertimeout.testing.TestStack;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The trade bill through the real SDK against the simulator: WeChat's format (backquoted fields,
 * header, summary), gzip, the SHA1 digest checked before the bill is handed out, a day without
 * trades, a day to come.
 */
class TradeBillTest {
  private static final String OPEN_ID = "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o";
  private static final ZoneId SHANGHAI = ZoneId.of("Asia/Shanghai");

  private WeChatPaySimulator wechat;
  private PaymentGateway gateway;

  @BeforeEach
  void setUp() {
    wechat = WeChatPaySimulator.start();
    gateway =
        new WeChatPayGateway(
            new StaticMerchantDirectory(Map.of("default", TestStack.credentialsFor(wechat))),
            Clock.systemUTC(),
            GatewaySettings.production()
                .withReadTimeout(Duration.ofSeconds(5))
                .withBaseUrl(wechat.baseUrl()));
  }

  @AfterEach
  void tearDown() {
    wechat.close();
  }

  private void paidTrade(String outTradeNo, long fen) {
    gateway.prepay(
        "default",
        new PrepayCommand(outTradeNo, "商品,含逗号", fen, OPEN_ID, Instant.now().plusSeconds(600)));
    wechat.pay(outTradeNo);
  }

  private static List<BillLine> read(TradeBill bill) {
    List<BillLine> lines = new ArrayList<>();
    try (TradeBillReader reader = bill.open()) {
      for (BillLine line = reader.next(); line != null; line = reader.next()) {
        lines.add(line);
      }
    }
    return lines;
  }

  @Test
  void todaysBillListsEveryPaymentAndRefundWithTheirAmounts() {
    paidTrade("bill-trade-01", 1234);
    paidTrade("bill-trade-02", 1);
    gateway.refund(
        "default", WeChatTrade.ofTenantMerchant("bill-trade-02"), "bill-refund-01", 1, "test");
    String transaction = wechat.trade("bill-trade-01").orElseThrow().transactionId();

    List<BillLine> lines;
    try (TradeBill bill = gateway.tradeBill("default", LocalDate.now(SHANGHAI))) {
      lines = read(bill);
    }

    assertThat(lines).hasSize(3);
    BillLine first =
        lines.get(0).outTradeNo().equals("bill-trade-01") ? lines.get(0) : lines.get(1);
    assertThat(first.payment()).isTrue();
    assertThat(first.mchid()).isEqualTo(wechat.mchid());
    assertThat(first.transactionId()).isEqualTo(transaction);
    assertThat(first.totalFen()).isEqualTo(1234);
    assertThat(first.settlementFen()).isEqualTo(1234);
    BillLine refund = lines.get(2);
    assertThat(refund.refund()).isTrue();
    assertThat(refund.outTradeNo()).isEqualTo("bill-trade-02");
    assertThat(refund.outRefundNo()).isEqualTo("bill-refund-01");
    assertThat(refund.refundFen()).isEqualTo(1);
    assertThat(wechat.tradeBills().downloads()).isEqualTo(1);
  }

  @Test
  void aDownloadWhoseDigestDoesNotMatchIsRefusedAndLeavesNoFile() throws Exception {
    paidTrade("bill-trade-03", 500);
    wechat.tradeBills().corruptDownloads(1);
    long before = tempBills();

    assertThatThrownBy(() -> gateway.tradeBill("default", LocalDate.now(SHANGHAI)))
        .isInstanceOfSatisfying(
            PaymentTransientException.class,
            e -> assertThat(e.code()).isEqualTo("DIGEST_MISMATCH"));
    assertThat(tempBills()).isEqualTo(before);

    try (TradeBill bill = gateway.tradeBill("default", LocalDate.now(SHANGHAI))) {
      assertThat(read(bill)).extracting(BillLine::outTradeNo).containsExactly("bill-trade-03");
    }
  }

  @Test
  void aDayWithoutTradesIsAnEmptyBillAndADayToComeIsRefused() {
    paidTrade("bill-trade-04", 500);
    try (TradeBill bill = gateway.tradeBill("default", LocalDate.now(SHANGHAI).minusDays(1))) {
      assertThat(read(bill)).isEmpty();
    }
    assertThatThrownBy(() -> gateway.tradeBill("default", LocalDate.now(SHANGHAI).plusDays(2)))
        .isInstanceOfSatisfying(
            PaymentRejectedException.class, e -> assertThat(e.code()).isEqualTo("PARAM_ERROR"));
  }

  @Test
  void theWritersFormatIsWeChatsAndTheReaderChecksItsSummary() {
    StringWriter text = new StringWriter();
    TradeBillWriter writer = new TradeBillWriter(text, "wxappid", "1900000109");
    writer.payment(
        LocalDateTime.of(2026, 12, 4, 10, 0).atZone(SHANGHAI).toInstant(),
        "4200000001",
        "order-0001",
        OPEN_ID,
        2550,
        "a, b");
    writer.finish();
    String bill = text.toString();
    String[] rows = bill.split("\r\n");

    assertThat(rows[0]).isEqualTo(String.join(",", TradeBillFormat.COLUMNS));
    assertThat(rows[1])
        .startsWith("`2026-12-04 10:00:00,`wxappid,`1900000109,`0,`,`4200000001,`order-0001,")
        .contains(",`SUCCESS,`OTHERS,`CNY,`25.50,`0.00,")
        .contains(",`a, b,`,`0.15300,`0.60%,`25.50,`0.00,`");
    assertThat(rows[2]).isEqualTo(String.join(",", TradeBillFormat.SUMMARY_COLUMNS));
    assertThat(rows[3]).isEqualTo("`1,`25.50,`0.00,`0.00,`0.15300,`25.50,`0.00");
    try (TradeBillReader reader = TradeBillReader.of(bill)) {
      BillLine line = reader.next();
      assertThat(line.tradeTime()).isEqualTo(LocalDateTime.of(2026, 12, 4, 10, 0));
      assertThat(line.totalFen()).isEqualTo(2550);
      assertThat(reader.next()).isNull();
    }
    String cut = bill.replace("`1,`25.50", "`2,`25.50");
    try (TradeBillReader reader = TradeBillReader.of(cut)) {
      reader.next();
      assertThatThrownBy(reader::next).hasMessageContaining("counts 2 lines, the bill has 1");
    }
  }

  private static long tempBills() throws Exception {
    try (var files = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
      return files.filter(p -> p.getFileName().toString().startsWith("tradebill-")).count();
    }
  }
}
