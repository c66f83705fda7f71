package io.ordertimeout.embedded.wechat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The simulator as a service provider (服务商): its merchant (mchid, appid, keys) is the provider
 * (sp_mchid, sp_appid), and each registered sub-merchant (特约商户) has its own trades, so one
 * out_trade_no may exist under two sub-merchants. Serves the partner APIs the SDK's {@code
 * partnerpayments.jsapi} service calls, and the refund API with sub_mchid:
 *
 * <ul>
 *   <li>POST /v3/pay/partner/transactions/jsapi (sp_appid, sp_mchid, sub_appid?, sub_mchid,
 *       payer.sp_openid or payer.sub_openid)
 *   <li>GET /v3/pay/partner/transactions/out-trade-no/{no}?sp_mchid=..&amp;sub_mchid=..
 *   <li>POST /v3/pay/partner/transactions/out-trade-no/{no}/close ({sp_mchid, sub_mchid})
 *   <li>POST /v3/refund/domestic/refunds with sub_mchid; GET .../refunds/{no}?sub_mchid=..
 * </ul>
 *
 * Each sub-merchant's trades follow a {@link TradeBook} (the same states and error codes as a
 * direct merchant's); requests and answers are translated to and from the partner format here.
 * Faults, latency and call counts are the direct endpoints' (PREPAY, QUERY, CLOSE, REFUND,
 * REFUND_QUERY): a fault aimed at QUERY hits the next query of either kind. A payment's
 * notification is in the partner format, signed and encrypted with the provider's keys, sent once
 * (with WeChat's retries) to the trade's notify_url when the simulator follows notify URLs, else to
 * the webhook URL; the per-trade notification controls (lose, copies, delay) are the direct
 * trades'.
 */
public final class SubMerchants implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final WeChatPaySimulator simulator;
  private final Clock clock;
  private final Map<String, SubMerchant> bySubMchid = new ConcurrentHashMap<>();

  /**
   * A sub-merchant's refund is PROCESSING when the create call answers and SUCCESS this long after,
   * as a direct merchant's is (RefundDesk); its outcome is learnt by query: a sub-merchant tenant's
   * refunds name no notify_url of their own.
   */
  private static final Duration REFUND_SETTLES_AFTER = Duration.ofMillis(200);

  private final java.util.concurrent.ScheduledExecutorService refundSettler =
      java.util.concurrent.Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "wechatpay-sim-partner-refunds");
            t.setDaemon(true);
            return t;
          });

  private record SubMerchant(String subMchid, String subAppid, String payerAppid, TradeBook book) {}

  SubMerchants(WeChatPaySimulator simulator, Clock clock) {
    this.simulator = simulator;
    this.clock = clock;
  }

  /**
   * Binds sub-merchant {@code subMchid} to this provider, as the provider's onboarding does at
   * WeChat. A prepay must name a registered sub_mchid, and its sub_appid exactly when {@code
   * subAppid} is not null (the mini-program is the sub-merchant's own).
   */
  public void register(String subMchid, String subAppid) {
    if (subMchid.equals(simulator.mchid())) {
      throw new IllegalArgumentException("sub_mchid " + subMchid + " is the provider's mchid");
    }
    String appidOfPayer = subAppid == null ? simulator.appid() : subAppid;
    bySubMchid.computeIfAbsent(
        subMchid,
        s ->
            new SubMerchant(
                s, subAppid, appidOfPayer, settlingRefunds(new TradeBook(s, appidOfPayer, clock))));
  }

  private TradeBook settlingRefunds(TradeBook book) {
    book.onRefundCreated(
        (outRefundNo, notifyUrl) ->
            refundSettler.schedule(
                () -> book.settleRefund(outRefundNo, "SUCCESS"),
                REFUND_SETTLES_AFTER.toMillis(),
                java.util.concurrent.TimeUnit.MILLISECONDS));
    return book;
  }

  @Override
  public void close() {
    refundSettler.shutdownNow();
  }

  /**
   * The payer pays the sub-merchant's trade: SUCCESS, and a partner TRANSACTION.SUCCESS
   * notification goes out.
   */
  public TradeSnapshot pay(String subMchid, String outTradeNo) {
    SubMerchant sub = require(subMchid);
    TradeSnapshot paid = sub.book().markPaid(outTradeNo);
    URI target = target(sub, outTradeNo);
    simulator
        .sender()
        .scheduleTo(target, notification(subMchid, outTradeNo), outTradeNo, Duration.ZERO);
    return paid;
  }

  /** The payer is entering the password (USERPAYING). */
  public void setUserPaying(String subMchid, String outTradeNo) {
    require(subMchid).book().markUserPaying(outTradeNo);
  }

  public Optional<TradeSnapshot> trade(String subMchid, String outTradeNo) {
    SubMerchant sub = bySubMchid.get(subMchid);
    return sub == null ? Optional.empty() : sub.book().snapshot(outTradeNo);
  }

  /** The notify_url the trade's first prepay sent. */
  public Optional<String> notifyUrl(String subMchid, String outTradeNo) {
    SubMerchant sub = bySubMchid.get(subMchid);
    return sub == null ? Optional.empty() : sub.book().notifyUrl(outTradeNo);
  }

  /** A correct partner notification for the trade's current state, to alter for attack tests. */
  public NotificationBuilder notification(String subMchid, String outTradeNo) {
    SubMerchant sub = require(subMchid);
    String transaction = partnerTransaction(sub, sub.book().transaction(outTradeNo)).toString();
    return new NotificationBuilder(
        transaction,
        simulator.platformPrivateKey(),
        simulator.platformPublicKeyId(),
        simulator.apiV3Key(),
        clock);
  }

  /**
   * A notification whose plaintext is {@code transaction} as given (any sp_mchid, sub_mchid, ...),
   * signed and encrypted with the provider's keys: what a compromised or confused sender could
   * post.
   */
  public NotificationBuilder notificationOf(ObjectNode transaction) {
    return new NotificationBuilder(
        transaction.toString(),
        simulator.platformPrivateKey(),
        simulator.platformPublicKeyId(),
        simulator.apiV3Key(),
        clock);
  }

  /** The partner-format transaction of a trade (the query's answer, a notification's plaintext). */
  public ObjectNode transaction(String subMchid, String outTradeNo) {
    SubMerchant sub = require(subMchid);
    return partnerTransaction(sub, sub.book().transaction(outTradeNo));
  }

  // ---- the partner APIs, called by ApiHandler ----

  ApiAnswer prepay(JsonNode request) {
    if (!simulator.mchid().equals(request.path("sp_mchid").asText())
        || !simulator.appid().equals(request.path("sp_appid").asText())) {
      return ApiAnswer.error(400, "APPID_MCHID_NOT_MATCH", "sp_appid和sp_mchid不匹配");
    }
    SubMerchant sub = bySubMchid.get(request.path("sub_mchid").asText(""));
    if (sub == null) {
      return ApiAnswer.error(400, "PARAM_ERROR", "sub_mchid不是该服务商的特约商户");
    }
    String subAppid = request.path("sub_appid").asText(null);
    if (!Objects.equals(sub.subAppid(), subAppid)) {
      return ApiAnswer.error(400, "APPID_MCHID_NOT_MATCH", "sub_appid和sub_mchid不匹配");
    }
    JsonNode payer = request.path("payer");
    String openid =
        subAppid == null ? payer.path("sp_openid").asText("") : payer.path("sub_openid").asText("");
    if (openid.isEmpty()) {
      return ApiAnswer.error(
          400, "PARAM_ERROR", subAppid == null ? "缺少参数 sp_openid" : "缺少参数 sub_openid");
    }
    ObjectNode direct = ((ObjectNode) request).deepCopy();
    direct.put("mchid", sub.subMchid()).put("appid", sub.payerAppid());
    direct.putObject("payer").put("openid", openid);
    return sub.book().prepay(direct);
  }

  ApiAnswer query(String outTradeNo, Map<String, String> params) {
    if (!simulator.mchid().equals(params.get("sp_mchid"))) {
      return ApiAnswer.error(400, "PARAM_ERROR", "sp_mchid is required and must be the caller's");
    }
    SubMerchant sub = bySubMchid.get(params.getOrDefault("sub_mchid", ""));
    if (sub == null) {
      return ApiAnswer.error(400, "PARAM_ERROR", "sub_mchid不是该服务商的特约商户");
    }
    ApiAnswer answer = sub.book().query(outTradeNo, sub.subMchid());
    return answer.status() == 200
        ? ApiAnswer.ok(partnerTransaction(sub, (ObjectNode) read(answer.body())))
        : answer;
  }

  ApiAnswer close(String outTradeNo, JsonNode request) {
    if (!simulator.mchid().equals(request.path("sp_mchid").asText())) {
      return ApiAnswer.error(400, "PARAM_ERROR", "sp_mchid is required and must be the caller's");
    }
    SubMerchant sub = bySubMchid.get(request.path("sub_mchid").asText(""));
    if (sub == null) {
      return ApiAnswer.error(400, "PARAM_ERROR", "sub_mchid不是该服务商的特约商户");
    }
    return sub.book().close(outTradeNo, JSON.createObjectNode().put("mchid", sub.subMchid()));
  }

  ApiAnswer refund(JsonNode request) {
    SubMerchant sub = bySubMchid.get(request.path("sub_mchid").asText(""));
    return sub == null
        ? ApiAnswer.error(400, "PARAM_ERROR", "sub_mchid不是该服务商的特约商户")
        : sub.book().refund(request);
  }

  ApiAnswer queryRefund(String outRefundNo, String subMchid) {
    SubMerchant sub = bySubMchid.get(subMchid);
    return sub == null
        ? ApiAnswer.error(404, "RESOURCE_NOT_EXISTS", "退款单不存在")
        : sub.book().queryRefund(outRefundNo);
  }

  // ---- translation ----

  /** A direct transaction as WeChat shows a sub-merchant's: sp_/sub_ fields, payer by appid. */
  private ObjectNode partnerTransaction(SubMerchant sub, ObjectNode direct) {
    ObjectNode out = JSON.createObjectNode();
    out.put("sp_appid", simulator.appid()).put("sp_mchid", simulator.mchid());
    if (sub.subAppid() != null) {
      out.put("sub_appid", sub.subAppid());
    }
    out.put("sub_mchid", sub.subMchid());
    direct
        .fields()
        .forEachRemaining(
            e -> {
              switch (e.getKey()) {
                case "appid", "mchid" -> {}
                case "payer" ->
                    out.putObject("payer")
                        .put(
                            sub.subAppid() == null ? "sp_openid" : "sub_openid",
                            e.getValue().path("openid").asText());
                default -> out.set(e.getKey(), e.getValue());
              }
            });
    return out;
  }

  private URI target(SubMerchant sub, String outTradeNo) {
    if (!simulator.followsNotifyUrl()) {
      return simulator.sender().webhookUrl();
    }
    return sub.book()
        .notifyUrl(outTradeNo)
        .flatMap(
            url -> {
              try {
                URI uri = URI.create(url);
                boolean http = "http".equals(uri.getScheme()) || "https".equals(uri.getScheme());
                return http && uri.getHost() != null ? Optional.of(uri) : Optional.empty();
              } catch (IllegalArgumentException e) {
                return Optional.empty();
              }
            })
        .orElse(simulator.sender().webhookUrl());
  }

  /** The trade book of sub-merchant {@code subMchid}; empty when it is not registered. */
  Optional<TradeBook> book(String subMchid) {
    return Optional.ofNullable(bySubMchid.get(subMchid)).map(SubMerchant::book);
  }

  private SubMerchant require(String subMchid) {
    SubMerchant sub = bySubMchid.get(subMchid);
    if (sub == null) {
      throw new IllegalArgumentException(
          "sub-merchant " + subMchid + " is not registered with provider " + simulator.mchid());
    }
    return sub;
  }

  private static JsonNode read(String body) {
    try {
      return JSON.readTree(body);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
