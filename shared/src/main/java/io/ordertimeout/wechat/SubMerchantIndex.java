package io.ordertimeout.wechat;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Which tenant is which sub-merchant of which service provider, built once from a directory's
 * tenants and validated there: the provider webhook routes a notification by the (sp_mchid,
 * sub_mchid) of its verified resource, so each pair must name one tenant, and a provider must have
 * one set of keys.
 *
 * <p>Refused, with the tenants named: two tenants as the same sub-merchant of one provider (which
 * of them a notification is for could not be told); two tenants of one provider with different
 * provider keys, appid or notify URL (the provider has one of each); a sub_mchid that is another
 * tenant's direct mchid or a provider's sp_mchid (a mchid is one kind of account at WeChat).
 */
public final class SubMerchantIndex {
  private final Map<String, String> tenantBySubMerchant;
  private final Map<String, MerchantCredentials> providers;

  private SubMerchantIndex(
      Map<String, String> tenantBySubMerchant, Map<String, MerchantCredentials> providers) {
    this.tenantBySubMerchant = Map.copyOf(tenantBySubMerchant);
    this.providers = Map.copyOf(providers);
  }

  /**
   * @throws IllegalArgumentException on a contradiction between tenants
   */
  public static SubMerchantIndex of(Map<String, MerchantCredentials> byTenant) {
    Map<String, String> tenants = new HashMap<>();
    Map<String, MerchantCredentials> providers = new HashMap<>();
    Map<String, String> providerTenant = new HashMap<>();
    Map<String, String> directTenant = new HashMap<>();
    byTenant.forEach(
        (tenant, c) -> {
          if (!c.partner()) {
            directTenant.putIfAbsent(c.mchid(), tenant);
            return;
          }
          String twin = tenants.putIfAbsent(key(c.mchid(), c.tradeMchid()), tenant);
          if (twin != null) {
            throw new IllegalArgumentException(
                "tenants "
                    + twin
                    + " and "
                    + tenant
                    + " are both sub-merchant "
                    + c.tradeMchid()
                    + " of provider "
                    + c.mchid()
                    + ": its notifications could not be routed");
          }
          MerchantCredentials first = providers.putIfAbsent(c.mchid(), c);
          if (first != null && !sameProvider(first, c)) {
            throw new IllegalArgumentException(
                "tenants "
                    + providerTenant.get(c.mchid())
                    + " and "
                    + tenant
                    + " name provider "
                    + c.mchid()
                    + " with different keys, spAppid or notifyUrl: a provider has one of each");
          }
          providerTenant.putIfAbsent(c.mchid(), tenant);
        });
    byTenant.forEach(
        (tenant, c) -> {
          if (!c.partner()) {
            return;
          }
          String sub = c.tradeMchid();
          if (directTenant.containsKey(sub) || providers.containsKey(sub)) {
            throw new IllegalArgumentException(
                "subMchid "
                    + sub
                    + " of tenant "
                    + tenant
                    + " is also "
                    + (directTenant.containsKey(sub)
                        ? "the direct mchid of tenant " + directTenant.get(sub)
                        : "a provider's spMchid"));
          }
        });
    return new SubMerchantIndex(tenants, providers);
  }

  /** The tenant that is sub-merchant {@code subMchid} of provider {@code spMchid}. */
  public Optional<String> tenantOf(String spMchid, String subMchid) {
    return Optional.ofNullable(tenantBySubMerchant.get(key(spMchid, subMchid)));
  }

  /**
   * The credentials of one of the provider's sub-merchant tenants: all hold the provider's keys.
   */
  public Optional<MerchantCredentials> provider(String spMchid) {
    return Optional.ofNullable(providers.get(spMchid));
  }

  private static String key(String spMchid, String subMchid) {
    return spMchid + "/" + subMchid;
  }

  private static boolean sameProvider(MerchantCredentials a, MerchantCredentials b) {
    return a.appid().equals(b.appid())
        && a.merchantSerialNumber().equals(b.merchantSerialNumber())
        && a.privateKeyPem().equals(b.privateKeyPem())
        && a.apiV3Key().equals(b.apiV3Key())
        && a.wechatPayPublicKeyId().equals(b.wechatPayPublicKeyId())
        && a.wechatPayPublicKeyPem().equals(b.wechatPayPublicKeyPem())
        && Objects.equals(a.notifyUrl().trim(), b.notifyUrl().trim());
  }
}
