package io.ordertimeout.embedded.wechat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;

/**
 * Writes a trade bill (申请交易账单, bill_type ALL) as WeChat Pay does: a header of the 27 column names,
 * one row per payment (交易状态 SUCCESS) or refund (REFUND) with every field prefixed by a backquote,
 * then the summary's header and its one row. Amounts are yuan with two decimals, the fee (0.6%)
 * with five. Rows are written as they come, so a bill of any size streams.
 */
public final class TradeBillWriter {
  static final String HEADER =
      "交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,交易状态,付款银行,货币种类,"
          + "应结订单金额,代金券金额,微信退款单号,商户退款单号,退款金额,充值券退款金额,退款类型,退款状态,商品名称,商户数据包,"
          + "手续费,费率,订单金额,申请退款金额,费率备注";
  static final String SUMMARY_HEADER = "总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额";

  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss");
  private static final BigDecimal FEE_RATE = new BigDecimal("0.006");

  private final Writer out;
  private final String appid;
  private final String mchid;
  private final String subMchid;
  private long lines;
  private long settlementFen;
  private long refundFen;
  private long totalFen;
  private long requestedRefundFen;
  private BigDecimal feeYuan = BigDecimal.ZERO.setScale(5);

  /** Writes the header at once. */
  public TradeBillWriter(Writer out, String appid, String mchid) {
    this(out, appid, mchid, "0");
  }

  /**
   * A service provider's bill of one sub-merchant: 商户号 {@code mchid} (the provider's), 特约商户号 {@code
   * subMchid}. Writes the header at once.
   */
  public TradeBillWriter(Writer out, String appid, String mchid, String subMchid) {
    this.out = out;
    this.appid = appid;
    this.mchid = mchid;
    this.subMchid = subMchid;
    write(HEADER);
  }

  /** A payment line: the trade paid at {@code successTime} (written in Beijing time). */
  public void payment(
      Instant successTime,
      String transactionId,
      String outTradeNo,
      String openid,
      long amountFen,
      String description) {
    BigDecimal fee = fee(amountFen);
    row(
        time(successTime),
        appid,
        mchid,
        subMchid,
        "",
        transactionId,
        outTradeNo,
        openid,
        "JSAPI",
        "SUCCESS",
        "OTHERS",
        "CNY",
        yuan(amountFen),
        "0.00",
        "0",
        "0",
        "0.00",
        "0.00",
        "",
        "",
        description,
        "",
        fee.toPlainString(),
        "0.60%",
        yuan(amountFen),
        "0.00",
        "");
    settlementFen += amountFen;
    totalFen += amountFen;
    feeYuan = feeYuan.add(fee);
  }

  /** A refund line: WeChat created refund {@code refundId} of the trade at {@code refundTime}. */
  public void refund(
      Instant refundTime,
      String transactionId,
      String outTradeNo,
      String openid,
      String refundId,
      String outRefundNo,
      long refundAmountFen,
      String refundStatus,
      String description) {
    row(
        time(refundTime),
        appid,
        mchid,
        subMchid,
        "",
        transactionId,
        outTradeNo,
        openid,
        "JSAPI",
        "REFUND",
        "OTHERS",
        "CNY",
        "0.00",
        "0.00",
        refundId,
        outRefundNo,
        yuan(refundAmountFen),
        "0.00",
        "ORIGINAL",
        refundStatus,
        description,
        "",
        "0.00000",
        "0.60%",
        "0.00",
        yuan(refundAmountFen),
        "");
    refundFen += refundAmountFen;
    requestedRefundFen += refundAmountFen;
  }

  /** Writes the summary; the writer is not closed. Answers the number of detail lines. */
  public long finish() {
    write(SUMMARY_HEADER);
    write(
        "`"
            + String.join(
                ",`",
                Long.toString(lines),
                yuan(settlementFen),
                yuan(refundFen),
                "0.00",
                feeYuan.toPlainString(),
                yuan(totalFen),
                yuan(requestedRefundFen)));
    try {
      out.flush();
    } catch (IOException e) {
      throw new UncheckedIOException("flush the trade bill", e);
    }
    return lines;
  }

  private void row(String... fields) {
    write("`" + String.join(",`", fields));
    lines++;
  }

  private void write(String line) {
    try {
      out.write(line);
      out.write("\r\n");
    } catch (IOException e) {
      throw new UncheckedIOException("write the trade bill", e);
    }
  }

  private static String time(Instant instant) {
    return LocalDateTime.ofInstant(instant, TradeBook.BEIJING).format(TIME);
  }

  static String yuan(long fen) {
    return BigDecimal.valueOf(fen).movePointLeft(2).setScale(2).toPlainString();
  }

  private static BigDecimal fee(long fen) {
    return BigDecimal.valueOf(fen)
        .multiply(FEE_RATE)
        .movePointLeft(2)
        .setScale(5, RoundingMode.HALF_UP);
  }
}
