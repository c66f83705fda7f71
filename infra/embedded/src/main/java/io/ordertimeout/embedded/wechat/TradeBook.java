package io.ordertimeout.embedded.wechat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Clock;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiConsumer;

/**
 * WeChat Pay's side of the trades: the state machine behind the five endpoints, with the HTTP
 * statuses and error codes of the APIv3 documentation. One lock guards everything; the simulator
 * serves tests, not load, so contention does not matter and every transition is trivially atomic.
 */
final class TradeBook {

  /** WeChat writes RFC 3339 times in Beijing time, e.g. 2018-06-08T10:34:56+08:00. */
  static final ZoneOffset BEIJING = ZoneOffset.ofHours(8);

  private static final ObjectMapper JSON = new ObjectMapper();

  private final String mchid;
  private final String appid;
  private final Clock clock;
  private final Map<String, SimulatedTrade> trades = new HashMap<>();
  private final Map<String, ObjectNode> refunds = new HashMap<>();
  private volatile BiConsumer<String, String> refundCreated = (outRefundNo, notifyUrl) -> {};

  TradeBook(String mchid, String appid, Clock clock) {
    this.mchid = mchid;
    this.appid = appid;
    this.clock = clock;
  }

  static String rfc3339(Instant instant) {
    return OffsetDateTime.ofInstant(instant.truncatedTo(ChronoUnit.SECONDS), BEIJING)
        .format(DateTimeFormatter.ISO_OFFSET_DATE_TIME);
  }

  synchronized ApiAnswer prepay(JsonNode request) {
    String outTradeNo = request.path("out_trade_no").asText("");
    if (outTradeNo.isEmpty() || !request.path("amount").has("total")) {
      return ApiAnswer.error(400, "PARAM_ERROR", "out_trade_no and amount.total are required");
    }
    if (!appid.equals(request.path("appid").asText())
        || !mchid.equals(request.path("mchid").asText())) {
      return ApiAnswer.error(400, "APPID_MCHID_NOT_MATCH", "appid和mch_id不匹配");
    }
    SimulatedTrade existing = trades.get(outTradeNo);
    return existing == null ? createTrade(outTradeNo, request) : repeatPrepay(existing, request);
  }

  private ApiAnswer createTrade(String outTradeNo, JsonNode request) {
    String expireText = request.path("time_expire").asText(null);
    Instant expire;
    try {
      expire = expireText == null ? null : OffsetDateTime.parse(expireText).toInstant();
    } catch (DateTimeParseException e) {
      return ApiAnswer.error(400, "PARAM_ERROR", "time_expire is not RFC 3339: " + expireText);
    }
    if (expire != null && !expire.isAfter(clock.instant())) {
      return ApiAnswer.error(400, "PARAM_ERROR", "time_expire已过期: " + expireText);
    }
    SimulatedTrade trade =
        new SimulatedTrade(
            outTradeNo,
            appid,
            mchid,
            request.path("description").asText(""),
            request.path("amount").path("total").asLong(),
            request.path("payer").path("openid").asText(""),
            expireText,
            expire,
            "wx" + WeChatCrypto.digits(26) + "00",
            request.path("notify_url").asText(null),
            fingerprint(request));
    trades.put(outTradeNo, trade);
    return ApiAnswer.ok(JSON.createObjectNode().put("prepay_id", trade.prepayId));
  }

  /** WeChat answers a repeated prepay with the same prepay_id, unless the parameters changed. */
  private ApiAnswer repeatPrepay(SimulatedTrade trade, JsonNode request) {
    if (trade.paid()) {
      return ApiAnswer.error(400, "ORDERPAID", "该订单已支付");
    }
    if (trade.state == TradeState.CLOSED) {
      return ApiAnswer.error(400, "ORDER_CLOSED", "订单已关闭");
    }
    if (!trade.fingerprint.equals(fingerprint(request))) {
      return ApiAnswer.error(403, "OUT_TRADE_NO_USED", "商户订单号重复: " + trade.outTradeNo);
    }
    return ApiAnswer.ok(JSON.createObjectNode().put("prepay_id", trade.prepayId));
  }

  private static JsonNode fingerprint(JsonNode request) {
    ObjectNode node = JSON.createObjectNode();
    for (String field : new String[] {"appid", "mchid", "description", "time_expire"}) {
      node.set(field, request.get(field));
    }
    node.set("total", request.path("amount").get("total"));
    node.set("openid", request.path("payer").get("openid"));
    return node;
  }

  /** Drops the trade (see WeChatPaySimulator#forget); answers whether there was one. */
  synchronized boolean forget(String outTradeNo) {
    return trades.remove(outTradeNo) != null;
  }

  synchronized ApiAnswer query(String outTradeNo, String queryMchid) {
    if (!mchid.equals(queryMchid)) {
      return ApiAnswer.error(400, "PARAM_ERROR", "mchid is required and must be the caller's");
    }
    SimulatedTrade trade = trades.get(outTradeNo);
    if (trade == null) {
      return ApiAnswer.error(404, "ORDER_NOT_EXIST", "订单不存在");
    }
    return ApiAnswer.ok(transaction(trade));
  }

  synchronized ApiAnswer close(String outTradeNo, JsonNode request) {
    if (!mchid.equals(request.path("mchid").asText())) {
      return ApiAnswer.error(400, "PARAM_ERROR", "mchid is required and must be the caller's");
    }
    SimulatedTrade trade = trades.get(outTradeNo);
    if (trade == null) {
      return ApiAnswer.error(404, "ORDER_NOT_EXIST", "订单不存在");
    }
    if (trade.paid()) {
      return ApiAnswer.error(400, "ORDERPAID", "订单已支付");
    }
    if (trade.state == TradeState.USERPAYING) {
      // APIv3 lists USERPAYING under HTTP 202: a 2xx that is not a success. See WeChatPaySimulator.
      return ApiAnswer.error(202, "USERPAYING", "用户支付中，需要输入密码");
    }
    trade.state = TradeState.CLOSED; // closing a closed order again is a success, as on WeChat
    return ApiAnswer.noContent();
  }

  synchronized ApiAnswer refund(JsonNode request) {
    String outRefundNo = request.path("out_refund_no").asText("");
    ObjectNode earlier = refunds.get(outRefundNo);
    if (earlier != null) {
      return ApiAnswer.ok(earlier); // same out_refund_no: WeChat answers the refund it already has
    }
    SimulatedTrade trade = trades.get(request.path("out_trade_no").asText(""));
    if (trade == null) {
      return ApiAnswer.error(404, "RESOURCE_NOT_EXISTS", "订单不存在");
    }
    if (!trade.paid()) {
      return ApiAnswer.error(400, "INVALID_REQUEST", "订单未支付，不能退款: " + trade.outTradeNo);
    }
    long amount = request.path("amount").path("refund").asLong();
    if (amount <= 0 || request.path("amount").path("total").asLong() != trade.amountFen) {
      return ApiAnswer.error(
          400, "PARAM_ERROR", "amount.refund > 0 and amount.total = order total");
    }
    if (trade.refundedFen + amount > trade.amountFen) {
      return ApiAnswer.error(403, "NOT_ENOUGH", "订单可退金额不足");
    }
    trade.refundedFen += amount;
    trade.state = TradeState.REFUND;
    ObjectNode refund = refundBody(trade, outRefundNo, amount);
    refunds.put(outRefundNo, refund);
    refundCreated.accept(outRefundNo, request.path("notify_url").asText(null));
    return ApiAnswer.ok(refund.deepCopy());
  }

  /** A refund is PROCESSING when created; RefundDesk settles it later, as WeChat does. */
  synchronized ApiAnswer queryRefund(String outRefundNo) {
    ObjectNode refund = refunds.get(outRefundNo);
    if (refund == null) {
      return ApiAnswer.error(404, "RESOURCE_NOT_EXISTS", "退款单不存在");
    }
    return ApiAnswer.ok(refund.deepCopy());
  }

  /** Called (under this book's lock) with each new refund's out_refund_no and notify_url. */
  void onRefundCreated(BiConsumer<String, String> listener) {
    this.refundCreated = listener;
  }

  /** The refund as a query answers it, if there is one. */
  synchronized Optional<ObjectNode> refund(String outRefundNo) {
    return Optional.ofNullable(refunds.get(outRefundNo)).map(ObjectNode::deepCopy);
  }

  /**
   * Moves a refund to {@code status} if WeChat would: PROCESSING to SUCCESS, CLOSED or ABNORMAL,
   * ABNORMAL to PROCESSING (the exception refund applied for). Answers the refund after the move,
   * empty when there is no such refund or it cannot move so.
   */
  synchronized Optional<ObjectNode> settleRefund(String outRefundNo, String status) {
    ObjectNode refund = refunds.get(outRefundNo);
    String from = refund == null ? "" : refund.path("status").asText();
    boolean allowed =
        "PROCESSING".equals(status) ? "ABNORMAL".equals(from) : "PROCESSING".equals(from);
    if (!allowed) {
      return Optional.empty();
    }
    refund.put("status", status);
    if ("SUCCESS".equals(status)) {
      refund.put("success_time", rfc3339(clock.instant()));
    }
    return Optional.of(refund.deepCopy());
  }

  String mchid() {
    return mchid;
  }

  private ObjectNode refundBody(SimulatedTrade trade, String outRefundNo, long amount) {
    ObjectNode body =
        JSON.createObjectNode()
            .put("refund_id", "50" + WeChatCrypto.digits(30))
            .put("out_refund_no", outRefundNo)
            .put("transaction_id", trade.transactionId)
            .put("out_trade_no", trade.outTradeNo)
            .put("channel", "ORIGINAL")
            .put("user_received_account", "支付用户零钱")
            .put("create_time", rfc3339(clock.instant()))
            .put("status", "PROCESSING")
            .put("funds_account", "AVAILABLE");
    body.putObject("amount")
        .put("total", trade.amountFen)
        .put("refund", amount)
        .put("payer_total", trade.amountFen)
        .put("payer_refund", amount)
        .put("settlement_total", trade.amountFen)
        .put("settlement_refund", amount)
        .put("discount_refund", 0)
        .put("currency", "CNY");
    return body;
  }

  /** The test control behind WeChatPaySimulator.pay: the user completed payment. */
  synchronized TradeSnapshot markPaid(String outTradeNo) {
    SimulatedTrade trade = payable(outTradeNo, "pay");
    trade.state = TradeState.SUCCESS;
    trade.transactionId = "42" + WeChatCrypto.digits(26);
    trade.successTime = clock.instant().truncatedTo(ChronoUnit.SECONDS);
    return trade.snapshot();
  }

  /**
   * The trade, if the payer could pay it now: USERPAYING, or NOTPAY with time_expire not passed.
   *
   * @throws IllegalArgumentException no such trade
   * @throws IllegalStateException "cannot {action} {out_trade_no} in state CLOSED", or expired
   */
  synchronized void requirePayable(String outTradeNo, String action) {
    payable(outTradeNo, action);
  }

  /** As {@link #requirePayable} without the time_expire check: a payment may still come. */
  synchronized void requireUnpaid(String outTradeNo, String action) {
    unpaid(outTradeNo, action);
  }

  /**
   * A payer already at the password sheet (USERPAYING) when time_expire passes may still complete:
   * WeChat took the payment before the expiry and finishes it after. A NOTPAY trade past it cannot
   * be paid any more.
   */
  private SimulatedTrade payable(String outTradeNo, String action) {
    SimulatedTrade trade = unpaid(outTradeNo, action);
    if (trade.state == TradeState.NOTPAY
        && trade.timeExpire != null
        && clock.instant().isAfter(trade.timeExpire)) {
      throw new IllegalStateException(
          "cannot "
              + action
              + " "
              + outTradeNo
              + ": time_expire "
              + trade.timeExpireText
              + " passed");
    }
    return trade;
  }

  private SimulatedTrade unpaid(String outTradeNo, String action) {
    SimulatedTrade trade = require(outTradeNo);
    if (trade.state != TradeState.NOTPAY && trade.state != TradeState.USERPAYING) {
      throw new IllegalStateException(
          "cannot " + action + " " + outTradeNo + " in state " + trade.state);
    }
    return trade;
  }

  /** The trade, if paid and not refunded: a payment notification can be sent again. */
  synchronized void requireSuccess(String outTradeNo, String action) {
    SimulatedTrade trade = require(outTradeNo);
    if (trade.state != TradeState.SUCCESS) {
      throw new IllegalStateException(
          "cannot " + action + " " + outTradeNo + " in state " + trade.state + " (not SUCCESS)");
    }
  }

  synchronized void markUserPaying(String outTradeNo) {
    SimulatedTrade trade = require(outTradeNo);
    if (trade.state != TradeState.NOTPAY) {
      throw new IllegalStateException(
          "cannot start paying " + outTradeNo + " in state " + trade.state);
    }
    trade.state = TradeState.USERPAYING;
  }

  /** The payer left the password sheet without paying: USERPAYING goes back to NOTPAY. */
  synchronized void markAbandoned(String outTradeNo) {
    SimulatedTrade trade = require(outTradeNo);
    if (trade.state != TradeState.USERPAYING) {
      throw new IllegalStateException(
          "cannot abandon paying " + outTradeNo + " in state " + trade.state + " (not USERPAYING)");
    }
    trade.state = TradeState.NOTPAY;
  }

  /** Reads the trades and the refunds under the book's lock (TradeBills builds a day's bill). */
  synchronized <T> T read(
      java.util.function.BiFunction<
              java.util.Collection<SimulatedTrade>, java.util.Collection<ObjectNode>, T>
          reader) {
    return reader.apply(trades.values(), refunds.values());
  }

  synchronized Optional<String> notifyUrl(String outTradeNo) {
    return Optional.ofNullable(trades.get(outTradeNo)).map(t -> t.notifyUrl);
  }

  synchronized Optional<TradeSnapshot> snapshot(String outTradeNo) {
    return Optional.ofNullable(trades.get(outTradeNo)).map(SimulatedTrade::snapshot);
  }

  /** The transaction object of the query answer and of the notification's plaintext. */
  synchronized ObjectNode transaction(String outTradeNo) {
    return transaction(require(outTradeNo));
  }

  private ObjectNode transaction(SimulatedTrade trade) {
    ObjectNode node =
        JSON.createObjectNode()
            .put("appid", trade.appid)
            .put("mchid", trade.mchid)
            .put("out_trade_no", trade.outTradeNo)
            .put("trade_state", trade.state.name())
            .put("trade_state_desc", describe(trade.state))
            .put("attach", "");
    ObjectNode amount =
        node.putObject("amount").put("total", trade.amountFen).put("currency", "CNY");
    amount.put("payer_currency", "CNY");
    if (trade.transactionId != null) {
      node.put("transaction_id", trade.transactionId)
          .put("trade_type", "JSAPI")
          .put("bank_type", "OTHERS")
          .put("success_time", rfc3339(trade.successTime));
      node.putObject("payer").put("openid", trade.payerOpenId);
      amount.put("payer_total", trade.amountFen);
    }
    return node;
  }

  private static String describe(TradeState state) {
    return switch (state) {
      case NOTPAY -> "订单未支付";
      case USERPAYING -> "用户支付中";
      case SUCCESS -> "支付成功";
      case CLOSED -> "订单已关闭";
      case REFUND -> "转入退款";
    };
  }

  private SimulatedTrade require(String outTradeNo) {
    SimulatedTrade trade = trades.get(outTradeNo);
    if (trade == null) {
      throw new IllegalArgumentException("no prepaid trade " + outTradeNo + " in the simulator");
    }
    return trade;
  }
}
