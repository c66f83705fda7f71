package io.ordertimeout.wechat;

import com.wechat.pay.java.core.exception.ServiceException;
import com.wechat.pay.java.core.exception.WechatPayException;
import com.wechat.pay.java.service.billdownload.DigestBillEntity;
import com.wechat.pay.java.service.billdownload.model.BillType;
import com.wechat.pay.java.service.billdownload.model.GetTradeBillRequest;
import com.wechat.pay.java.service.billdownload.model.TarType;
import com.wechat.pay.java.service.payments.jsapi.model.Amount;
import com.wechat.pay.java.service.payments.jsapi.model.CloseOrderRequest;
import com.wechat.pay.java.service.payments.jsapi.model.Payer;
import com.wechat.pay.java.service.payments.jsapi.model.PrepayRequest;
import com.wechat.pay.java.service.payments.jsapi.model.PrepayWithRequestPaymentResponse;
import com.wechat.pay.java.service.payments.jsapi.model.QueryOrderByOutTradeNoRequest;
import com.wechat.pay.java.service.payments.model.Transaction;
import com.wechat.pay.java.service.refund.model.AmountReq;
import com.wechat.pay.java.service.refund.model.CreateRequest;
import com.wechat.pay.java.service.refund.model.QueryByOutRefundNoRequest;
import com.wechat.pay.java.service.refund.model.Refund;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import okhttp3.ConnectionPool;
import okhttp3.OkHttpClient;

/**
 * {@link PaymentGateway} on wechatpay-java in public key mode. Build one per execution environment
 * (in a handler's static init): tenants' SDK clients are created on first use and cached, and all
 * share one OkHttp connection pool.
 *
 * <p>Over 300 lines: one adapter per WeChat call (prepay, query, close, refund, refund query, the
 * payment and refund notifications, the trade bill's download and digest check), each a request
 * mapping and an answer translation around the one {@code call()} that turns SDK failures into the
 * port's exceptions.
 */
public final class WeChatPayGateway implements PaymentGateway {

  /** WeChat writes and expects RFC 3339 in Beijing time. */
  private static final ZoneOffset BEIJING = ZoneOffset.ofHours(8);

  /**
   * WeChat closes idle keep-alive connections after 8 s; dropping ours at 7 s avoids a dead reuse.
   */
  private static final int KEEP_ALIVE_SECONDS = 7;

  private final MerchantClients merchants;
  private final NotificationReader notifications;
  private final PartnerNotificationReader providerNotifications;
  private final RefundNotificationReader refundNotifications;

  public WeChatPayGateway(MerchantDirectory directory, Clock clock) {
    this(directory, clock, GatewaySettings.production());
  }

  /**
   * @param settings with a base URL override, every request goes there (the simulator)
   */
  public WeChatPayGateway(MerchantDirectory directory, Clock clock, GatewaySettings settings) {
    Objects.requireNonNull(settings, "settings");
    this.merchants =
        new MerchantClients(
            Objects.requireNonNull(directory, "directory"), okHttp(settings), settings);
    this.notifications = new NotificationReader(Objects.requireNonNull(clock, "clock"));
    this.providerNotifications = new PartnerNotificationReader(notifications, merchants);
    this.refundNotifications = new RefundNotificationReader(notifications);
  }

  private static OkHttpClient okHttp(GatewaySettings settings) {
    OkHttpClient.Builder builder =
        new OkHttpClient.Builder()
            .connectionPool(new ConnectionPool(5, KEEP_ALIVE_SECONDS, TimeUnit.SECONDS))
            .addInterceptor(new WeChatHeaderInterceptor());
    if (settings.baseUrlOverride() != null) {
      builder.addInterceptor(new BaseUrlInterceptor(settings.baseUrlOverride()));
    }
    return builder.build();
  }

  @Override
  public String merchantId(String tenantId) {
    return clients(tenantId).credentials().tradeMchid();
  }

  @Override
  public MiniProgramPayment prepay(String tenantId, PrepayCommand command) {
    TenantClients tenant = clients(tenantId, "prepay", command.trade());
    if (tenant.credentials().partner()) {
      return PartnerPayments.prepay(tenantId, tenant, command, rfc3339(command.timeExpire()));
    }
    PrepayRequest request = prepayRequest(tenantId, tenant.credentials(), command);
    PrepayWithRequestPaymentResponse r =
        call(
            tenantId,
            "prepay",
            command.outTradeNo(),
            () -> tenant.jsapi().prepayWithRequestPayment(request));
    return new MiniProgramPayment(
        r.getAppId(),
        r.getTimeStamp(),
        r.getNonceStr(),
        r.getPackageVal(),
        r.getSignType(),
        r.getPaySign());
  }

  private static PrepayRequest prepayRequest(
      String tenantId, MerchantCredentials merchant, PrepayCommand command) {
    PrepayRequest request = new PrepayRequest();
    request.setAppid(merchant.appid());
    request.setMchid(merchant.mchid());
    request.setDescription(command.description());
    request.setOutTradeNo(command.outTradeNo());
    request.setNotifyUrl(merchant.notifyUrlFor(tenantId));
    request.setTimeExpire(rfc3339(command.timeExpire()));
    Amount amount = new Amount();
    amount.setTotal(Math.toIntExact(command.amountFen()));
    amount.setCurrency("CNY");
    request.setAmount(amount);
    Payer payer = new Payer();
    payer.setOpenid(command.payerOpenId());
    request.setPayer(payer);
    return request;
  }

  @Override
  public TradeStatus query(String tenantId, WeChatTrade trade) {
    TenantClients tenant = clients(tenantId, "query", trade);
    if (tenant.credentials().partner()) {
      return PartnerPayments.query(tenantId, tenant, trade);
    }
    String outTradeNo = trade.outTradeNo();
    QueryOrderByOutTradeNoRequest request = new QueryOrderByOutTradeNoRequest();
    request.setOutTradeNo(outTradeNo);
    request.setMchid(tenant.credentials().mchid());
    return call(
        tenantId,
        "query",
        outTradeNo,
        () -> {
          try {
            return TradeStatus.of(outTradeNo, tenant.jsapi().queryOrderByOutTradeNo(request));
          } catch (ServiceException e) {
            if (WeChatErrors.isNotFound(e)) {
              return TradeStatus.notFound(outTradeNo);
            }
            throw e;
          }
        });
  }

  @Override
  public WeChatCloseOutcome close(String tenantId, WeChatTrade trade) {
    TenantClients tenant = clients(tenantId, "close", trade);
    if (tenant.credentials().partner()) {
      return PartnerPayments.close(tenantId, tenant, trade);
    }
    String outTradeNo = trade.outTradeNo();
    CloseOrderRequest request = new CloseOrderRequest();
    request.setOutTradeNo(outTradeNo);
    request.setMchid(tenant.credentials().mchid());
    return call(
        tenantId,
        "close",
        outTradeNo,
        () -> {
          try {
            tenant.jsapi().closeOrder(request);
            return WeChatCloseOutcome.CLOSED;
          } catch (ServiceException e) {
            return WeChatErrors.closeOutcome(e);
          }
        });
  }

  @Override
  public RefundResult refund(
      String tenantId, WeChatTrade trade, String outRefundNo, long amountFen, String reason) {
    TenantClients tenant = clients(tenantId, "refund", trade);
    CreateRequest request = new CreateRequest();
    request.setOutTradeNo(trade.outTradeNo());
    request.setOutRefundNo(outRefundNo);
    request.setReason(reason);
    request.setSubMchid(PartnerPayments.subMchid(tenant)); // null (left out) for a direct merchant
    // where WeChat posts the refund's outcome; null: the merchant platform's refund URL, if any
    request.setNotifyUrl(RefundNotifyUrls.forTenant(tenant.credentials(), tenantId));
    AmountReq amount = new AmountReq();
    amount.setRefund(amountFen);
    amount.setTotal(amountFen);
    amount.setCurrency("CNY");
    request.setAmount(amount);
    return call(
        tenantId,
        "refund",
        outRefundNo,
        () -> toRefund(tenant.refunds().create(withTotal(tenantId, trade, request))));
  }

  /** WeChat wants the order total next to the refund amount; the query tells us the total. */
  private CreateRequest withTotal(String tenantId, WeChatTrade trade, CreateRequest request) {
    TradeStatus status = query(tenantId, trade);
    if (status.amountFen() != null) {
      request.getAmount().setTotal(status.amountFen());
    }
    return request;
  }

  @Override
  public RefundResult queryRefund(String tenantId, String outRefundNo) {
    TenantClients tenant = clients(tenantId);
    QueryByOutRefundNoRequest request = new QueryByOutRefundNoRequest();
    request.setOutRefundNo(outRefundNo);
    request.setSubMchid(PartnerPayments.subMchid(tenant));
    return call(
        tenantId,
        "queryRefund",
        outRefundNo,
        () -> {
          try {
            return toRefund(tenant.refunds().queryByOutRefundNo(request));
          } catch (ServiceException e) {
            if (WeChatErrors.isNotFound(e)) {
              return RefundResult.notFound(outRefundNo);
            }
            throw e;
          }
        });
  }

  private static RefundResult toRefund(Refund r) {
    RefundStatus status =
        r.getStatus() == null
            ? RefundStatus.PROCESSING
            : RefundStatus.valueOf(r.getStatus().name());
    Long refunded = r.getAmount() == null ? null : r.getAmount().getRefund();
    return new RefundResult(
        r.getOutRefundNo(), r.getOutTradeNo(), r.getRefundId(), status, refunded);
  }

  @Override
  public TradeBill tradeBill(String tenantId, LocalDate day) {
    TenantClients tenant = clients(tenantId);
    // a sub-merchant's bill is the provider's bill for its sub_mchid; its trades are bound under it
    String mchid = tenant.credentials().tradeMchid();
    GetTradeBillRequest request = new GetTradeBillRequest();
    request.setSubMchid(PartnerPayments.subMchid(tenant)); // null (left out) for a direct merchant
    request.setBillDate(day.toString());
    request.setBillType(BillType.ALL);
    // gzip: a 100,000-line bill is about 25 MB of text and a few MB on the wire
    request.setTarType(TarType.GZIP);
    return call(
        tenantId,
        "tradeBill",
        day.toString(),
        () -> {
          try {
            return new TradeBill(mchid, day, download(tenantId, day, tenant, request));
          } catch (ServiceException e) {
            if ("NO_STATEMENT_EXIST".equals(e.getErrorCode())) {
              return new TradeBill(mchid, day, null);
            }
            if ("STATEMENT_CREATING".equals(e.getErrorCode())) {
              throw new PaymentTransientException(
                  e.getErrorCode(), tenantId, "tradeBill", day.toString(), e.getErrorMessage(), e);
            }
            throw e;
          }
        });
  }

  /**
   * Streams the download through the SDK's digest into a temporary file and keeps the file only
   * when the digest matches (the SDK digests the unzipped text).
   */
  private static Path download(
      String tenantId, LocalDate day, TenantClients tenant, GetTradeBillRequest request) {
    DigestBillEntity bill = tenant.bills().getTradeBill(request);
    Path file = null;
    try (InputStream in = bill.getInputStream()) {
      file = Files.createTempFile("tradebill-" + day + "-", ".csv");
      Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      deleteQuietly(file);
      throw new PaymentTransientException(
          "IO_ERROR", tenantId, "tradeBill", day.toString(), e.toString(), e);
    }
    if (!bill.verifyHash()) {
      deleteQuietly(file);
      throw new PaymentTransientException(
          "DIGEST_MISMATCH",
          tenantId,
          "tradeBill",
          day.toString(),
          "the downloaded bill's SHA1 is not the tradebill answer's hash_value",
          null);
    }
    return file;
  }

  private static void deleteQuietly(Path file) {
    if (file != null) {
      try {
        Files.deleteIfExists(file);
      } catch (IOException e) {
        throw new UncheckedIOException("delete the partial bill " + file, e);
      }
    }
  }

  @Override
  public PaymentNotification parseNotification(
      String tenantId, Map<String, String> headers, String body) {
    return notifications.read(tenantId, () -> merchants.forNotification(tenantId), headers, body);
  }

  @Override
  public ProviderNotification parseProviderNotification(
      String spMchid, Map<String, String> headers, String body) {
    return providerNotifications.read(spMchid, headers, body);
  }

  @Override
  public RefundNotification parseRefundNotification(
      String tenantId, Map<String, String> headers, String body) {
    return refundNotifications.read(
        tenantId, () -> merchants.forNotification(tenantId), headers, body);
  }

  private TenantClients clients(String tenantId) {
    return merchants.forTenant(tenantId);
  }

  private TenantClients clients(String tenantId, String operation, WeChatTrade trade) {
    return merchants.forTrade(tenantId, operation, trade);
  }

  /**
   * Runs one SDK call; anything but a definite answer leaves as Transient- or RejectedException.
   */
  static <T> T call(String tenantId, String operation, String reference, Supplier<T> action) {
    try {
      return action.get();
    } catch (PaymentTransientException | PaymentRejectedException e) {
      throw e;
    } catch (WechatPayException | IllegalArgumentException | IllegalStateException e) {
      throw WeChatErrors.translate(e, tenantId, operation, reference);
    } catch (RuntimeException e) {
      if (e.getClass().getName().startsWith("com.google.gson.")) {
        // ServiceException's constructor parses the error body with Gson; a proxy's HTML 502 breaks
        // it
        throw WeChatErrors.translate(e, tenantId, operation, reference);
      }
      throw e;
    }
  }

  static TradeState tradeState(Transaction.TradeStateEnum state) {
    // ACCEPT ("received, awaiting debit") is not paid and not closable yet: the same handling as
    // USERPAYING
    return state == Transaction.TradeStateEnum.ACCEPT
        ? TradeState.USERPAYING
        : TradeState.valueOf(state.name());
  }

  static Instant instant(String rfc3339) {
    return rfc3339 == null || rfc3339.isEmpty() ? null : OffsetDateTime.parse(rfc3339).toInstant();
  }

  private static String rfc3339(Instant instant) {
    return OffsetDateTime.ofInstant(instant.truncatedTo(ChronoUnit.SECONDS), BEIJING)
        .format(DateTimeFormatter.ISO_OFFSET_DATE_TIME);
  }
}
