package io.ordertimeout.wechat;

import com.wechat.pay.java.service.partnerpayments.jsapi.model.Transaction;
import io.ordertimeout.wechat.InvalidNotificationException.Reason;
import java.util.Map;
import java.util.Objects;

/**
 * Verifies, decrypts and routes one notification posted to a service provider's URL ({@code POST
 * /wechatpay/notify/provider/{spMchid}}). The signature, freshness and decryption checks are {@link
 * NotificationReader}'s, with the provider's keys. The tenant comes from the decrypted resource
 * only: its sp_mchid must be the URL's provider, and its sub_mchid must be a tenant configured as
 * that provider's sub-merchant, with the same sp_appid and sub_appid; nothing outside the signed,
 * encrypted resource (the URL's other parts, headers, the payer) chooses the tenant.
 */
final class PartnerNotificationReader {
  private final NotificationReader reader;
  private final MerchantClients merchants;

  PartnerNotificationReader(NotificationReader reader, MerchantClients merchants) {
    this.reader = reader;
    this.merchants = merchants;
  }

  ProviderNotification read(String spMchid, Map<String, String> headers, String body) {
    String label = "provider " + spMchid;
    NotificationReader.Verified<Transaction> v =
        reader.verify(
            label, () -> merchants.forProvider(spMchid), headers, body, Transaction.class);
    Transaction t = v.resource();
    if (!spMchid.equals(t.getSpMchid())) {
      throw mismatch(label, t, "sp_mchid is not the URL's provider");
    }
    String tenantId =
        merchants
            .directory()
            .tenantOfSubMerchant(spMchid, t.getSubMchid())
            .orElseThrow(() -> mismatch(label, t, "no tenant is this sub-merchant"));
    MerchantCredentials tenant = merchants.directory().forTenant(tenantId);
    if (!tenant.appid().equals(t.getSpAppid())
        || !Objects.equals(tenant.subMerchant().subAppid(), blankToNull(t.getSubAppid()))) {
      throw mismatch(label, t, "sp_appid or sub_appid is not tenant " + tenantId + "'s");
    }
    return new ProviderNotification(tenantId, toNotification(label, body, v, t, tenant));
  }

  private static PaymentNotification toNotification(
      String label,
      String body,
      NotificationReader.Verified<Transaction> v,
      Transaction t,
      MerchantCredentials tenant) {
    if (t.getOutTradeNo() == null || t.getTradeState() == null || t.getAmount() == null) {
      throw new InvalidNotificationException(
          Reason.MALFORMED, label, "transaction lacks out_trade_no, trade_state or amount", null);
    }
    var envelope = NotificationReader.envelope(body);
    return new PaymentNotification(
        envelope.path("id").asText(null),
        envelope.path("event_type").asText(null),
        v.nonce(),
        v.timestamp(),
        t.getOutTradeNo(),
        t.getTransactionId(),
        PartnerPayments.tradeState(t.getTradeState()),
        t.getAmount().getTotal() == null ? 0 : t.getAmount().getTotal(),
        t.getSubMchid(),
        tenant.payerAppid(),
        WeChatPayGateway.instant(t.getSuccessTime()));
  }

  private static InvalidNotificationException mismatch(String label, Transaction t, String why) {
    return new InvalidNotificationException(
        Reason.MERCHANT_MISMATCH,
        label,
        "out_trade_no "
            + t.getOutTradeNo()
            + " names sp_mchid "
            + t.getSpMchid()
            + " sub_mchid "
            + t.getSubMchid()
            + ": "
            + why,
        null);
  }

  private static String blankToNull(String s) {
    return s == null || s.isBlank() ? null : s;
  }
}
