package io.ordertimeout.wechat;

import java.math.BigDecimal;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;

/**
 * The text format of WeChat Pay's trade bill (申请交易账单, bill_type ALL): a header row of 27 column
 * names, one row per payment or refund whose every field starts with a backquote (so that a
 * spreadsheet keeps long numbers as text), then a summary header and one summary row. Amounts are
 * yuan with two decimals (手续费 five). The simulator writes this format and the gateway reads it.
 */
public final class TradeBillFormat {
  /** The columns of the ALL bill, in order. */
  public static final List<String> COLUMNS =
      List.of(
          "交易时间", "公众账号ID", "商户号", "特约商户号", "设备号", "微信订单号", "商户订单号", "用户标识", "交易类型", "交易状态", "付款银行",
          "货币种类", "应结订单金额", "代金券金额", "微信退款单号", "商户退款单号", "退款金额", "充值券退款金额", "退款类型", "退款状态", "商品名称",
          "商户数据包", "手续费", "费率", "订单金额", "申请退款金额", "费率备注");

  /** The summary's columns, in order. */
  public static final List<String> SUMMARY_COLUMNS =
      List.of("总交易单数", "应结订单总金额", "退款总金额", "充值券退款总金额", "手续费总金额", "订单总金额", "申请退款总金额");

  /** 交易时间: 2026-12-04 10:15:30 (Beijing). */
  public static final DateTimeFormatter TRADE_TIME =
      DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss");

  private TradeBillFormat() {}

  /** "0.01" -> 1; amounts of the bill are yuan with two decimals. */
  public static long fen(String yuan) {
    if (yuan.isEmpty()) {
      return 0;
    }
    return new BigDecimal(yuan).movePointRight(2).longValueExact();
  }

  /** 1 -> "0.01". */
  public static String yuan(long fen) {
    return BigDecimal.valueOf(fen).movePointLeft(2).setScale(2).toPlainString();
  }

  /**
   * The fields of one backquoted row: "`a,`b,`" -> [a, b, ""]. Splits on ",`" so that a comma
   * inside a field (a product name) stays in it.
   *
   * @throws IllegalArgumentException a row that does not start with a backquote
   */
  public static String[] fields(String row) {
    if (row.isEmpty() || row.charAt(0) != '`') {
      throw new IllegalArgumentException("a bill row starts with a backquote: " + abbreviate(row));
    }
    return row.substring(1).split(",`", -1);
  }

  /** One detail row as a {@link BillLine}. */
  static BillLine line(String row) {
    String[] f = fields(row);
    if (f.length != COLUMNS.size()) {
      throw new IllegalArgumentException(
          "a bill row has " + COLUMNS.size() + " fields, not " + f.length + ": " + abbreviate(row));
    }
    return new BillLine(
        LocalDateTime.parse(f[0], TRADE_TIME),
        f[1],
        f[2],
        f[3],
        f[5],
        f[6],
        f[9],
        fen(f[12]),
        f[14],
        f[15],
        fen(f[16]),
        f[19],
        fen(f[24]),
        fen(f[25]));
  }

  static String abbreviate(String row) {
    return row.length() <= 120 ? row : row.substring(0, 120) + "...";
  }
}
