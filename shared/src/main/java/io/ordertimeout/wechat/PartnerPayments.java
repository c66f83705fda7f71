package io.ordertimeout.wechat;

import com.wechat.pay.java.core.exception.ServiceException;
import com.wechat.pay.java.service.partnerpayments.jsapi.JsapiServiceExtension;
import com.wechat.pay.java.service.partnerpayments.jsapi.model.Amount;
import com.wechat.pay.java.service.partnerpayments.jsapi.model.CloseOrderRequest;
import com.wechat.pay.java.service.partnerpayments.jsapi.model.Payer;
import com.wechat.pay.java.service.partnerpayments.jsapi.model.PrepayRequest;
import com.wechat.pay.java.service.partnerpayments.jsapi.model.PrepayWithRequestPaymentResponse;
import com.wechat.pay.java.service.partnerpayments.jsapi.model.QueryOrderByOutTradeNoRequest;
import com.wechat.pay.java.service.partnerpayments.jsapi.model.Transaction;

/**
 * The trade calls of a sub-merchant tenant, through the SDK's partner JSAPI service ({@code
 * /v3/pay/partner/transactions/...}) with the provider's keys: each names sp_mchid and sub_mchid,
 * and the prepay sp_appid and, when the sub-merchant has its own mini-program, sub_appid. The
 * answers are the same {@link TradeStatus} and {@link WeChatCloseOutcome} a direct merchant's calls
 * give, so nothing above the gateway knows the mode. Refunds use the direct refund API with
 * sub_mchid set, in {@link WeChatPayGateway}.
 */
final class PartnerPayments {

  private PartnerPayments() {}

  /**
   * The payer's openid is the sub_openid when the mini-program is the sub-merchant's own (its
   * sub_appid), else the sp_openid; wx.requestPayment's paySign is signed with the provider's key
   * over that same appid.
   */
  static MiniProgramPayment prepay(
      String tenantId, TenantClients tenant, PrepayCommand command, String timeExpire) {
    MerchantCredentials c = tenant.credentials();
    PrepayRequest request = new PrepayRequest();
    request.setSpMchid(c.mchid());
    request.setSpAppid(c.appid());
    request.setSubMchid(c.tradeMchid());
    request.setSubAppid(c.subMerchant().subAppid());
    request.setDescription(command.description());
    request.setOutTradeNo(command.outTradeNo());
    request.setNotifyUrl(c.notifyUrlFor(tenantId));
    request.setTimeExpire(timeExpire);
    Amount amount = new Amount();
    amount.setTotal(Math.toIntExact(command.amountFen()));
    amount.setCurrency("CNY");
    request.setAmount(amount);
    Payer payer = new Payer();
    if (c.subMerchant().subAppid() != null) {
      payer.setSubOpenid(command.payerOpenId());
    } else {
      payer.setSpOpenid(command.payerOpenId());
    }
    request.setPayer(payer);
    PrepayWithRequestPaymentResponse r =
        WeChatPayGateway.call(
            tenantId,
            "prepay",
            command.outTradeNo(),
            () -> jsapi(tenant).prepayWithRequestPayment(request, c.payerAppid()));
    return new MiniProgramPayment(
        r.getAppId(),
        r.getTimeStamp(),
        r.getNonceStr(),
        r.getPackageVal(),
        r.getSignType(),
        r.getPaySign());
  }

  static TradeStatus query(String tenantId, TenantClients tenant, WeChatTrade trade) {
    String outTradeNo = trade.outTradeNo();
    QueryOrderByOutTradeNoRequest request = new QueryOrderByOutTradeNoRequest();
    request.setOutTradeNo(outTradeNo);
    request.setSpMchid(tenant.credentials().mchid());
    request.setSubMchid(tenant.credentials().tradeMchid());
    return WeChatPayGateway.call(
        tenantId,
        "query",
        outTradeNo,
        () -> {
          try {
            return TradeStatus.of(outTradeNo, jsapi(tenant).queryOrderByOutTradeNo(request));
          } catch (ServiceException e) {
            if (WeChatErrors.isNotFound(e)) {
              return TradeStatus.notFound(outTradeNo);
            }
            throw e;
          }
        });
  }

  static WeChatCloseOutcome close(String tenantId, TenantClients tenant, WeChatTrade trade) {
    String outTradeNo = trade.outTradeNo();
    CloseOrderRequest request = new CloseOrderRequest();
    request.setOutTradeNo(outTradeNo);
    request.setSpMchid(tenant.credentials().mchid());
    request.setSubMchid(tenant.credentials().tradeMchid());
    return WeChatPayGateway.call(
        tenantId,
        "close",
        outTradeNo,
        () -> {
          try {
            jsapi(tenant).closeOrder(request);
            return WeChatCloseOutcome.CLOSED;
          } catch (ServiceException e) {
            return WeChatErrors.closeOutcome(e);
          }
        });
  }

  /** The sub_mchid a refund names: the sub-merchant's, none (null) for a direct merchant. */
  static String subMchid(TenantClients tenant) {
    return tenant.credentials().partner() ? tenant.credentials().tradeMchid() : null;
  }

  /** ACCEPT ("received, awaiting debit") is handled as USERPAYING, as for a direct merchant. */
  static TradeState tradeState(Transaction.TradeStateEnum state) {
    return state == Transaction.TradeStateEnum.ACCEPT
        ? TradeState.USERPAYING
        : TradeState.valueOf(state.name());
  }

  private static JsapiServiceExtension jsapi(TenantClients tenant) {
    return tenant.partnerJsapi();
  }
}
