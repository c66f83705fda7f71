package io.ordertimeout.wechat;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import okhttp3.OkHttpClient;

/**
 * Each tenant's SDK objects, looked up in the directory on every call (a map lookup) and built once
 * per merchant account. Keyed by the account, not the tenant id: a single-merchant directory
 * answers one account for any tenant id, and the webhook's tenant ids come from a public URL, so a
 * cache per id would grow with whatever ids a prober sends.
 */
final class MerchantClients {
  private final MerchantDirectory directory;
  private final OkHttpClient okHttp;
  private final GatewaySettings settings;
  private final ConcurrentMap<MerchantCredentials, TenantClients> built = new ConcurrentHashMap<>();

  MerchantClients(MerchantDirectory directory, OkHttpClient okHttp, GatewaySettings settings) {
    this.directory = directory;
    this.okHttp = okHttp;
    this.settings = settings;
  }

  /**
   * @throws IllegalArgumentException the tenant has no merchant account (a configuration error)
   */
  TenantClients forTenant(String tenantId) {
    return of(directory.forTenant(tenantId));
  }

  /**
   * The tenant's clients for a call on {@code trade}: a trade bound under another mchid than the
   * tenant's merchant has now (the tenant's account changed since) is not this merchant's trade,
   * and nothing is sent.
   *
   * @throws PaymentRejectedException MCHID_MISMATCH
   */
  TenantClients forTrade(String tenantId, String operation, WeChatTrade trade) {
    TenantClients tenant = forTenant(tenantId);
    String mchid = tenant.credentials().tradeMchid();
    if (trade.mchid() != null && !trade.mchid().equals(mchid)) {
      throw new PaymentRejectedException(
          "MCHID_MISMATCH",
          0,
          tenantId,
          operation,
          trade.outTradeNo(),
          "the trade is bound to merchant "
              + trade.mchid()
              + ", the tenant's merchant is "
              + mchid);
    }
    return tenant;
  }

  /** The tenant named by the webhook's URL: one without a merchant is UNKNOWN_TENANT. */
  TenantClients forNotification(String tenantId) {
    MerchantCredentials merchant;
    try {
      merchant = directory.forTenant(tenantId);
    } catch (IllegalArgumentException e) {
      throw new InvalidNotificationException(
          InvalidNotificationException.Reason.UNKNOWN_TENANT, tenantId, e.getMessage(), e);
    }
    return of(merchant);
  }

  /**
   * The keys of service provider {@code spMchid}, named by the provider webhook's URL: a provider
   * no tenant is a sub-merchant of is UNKNOWN_TENANT, answered like a bad signature.
   */
  TenantClients forProvider(String spMchid) {
    return of(
        directory
            .provider(spMchid)
            .orElseThrow(
                () ->
                    new InvalidNotificationException(
                        InvalidNotificationException.Reason.UNKNOWN_TENANT,
                        "provider " + spMchid,
                        "no tenant is a sub-merchant of provider " + spMchid,
                        null)));
  }

  MerchantDirectory directory() {
    return directory;
  }

  private TenantClients of(MerchantCredentials merchant) {
    return built.computeIfAbsent(merchant, m -> TenantClients.build(m, okHttp, settings));
  }
}
