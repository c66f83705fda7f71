package io.ordertimeout.wechat;

import java.util.Map;

/** A fixed tenant-to-credentials map, for tests, local runs and single-tenant deployments. */
public final class StaticMerchantDirectory implements MerchantDirectory {

  private final Map<String, MerchantCredentials> byTenant;

  public StaticMerchantDirectory(Map<String, MerchantCredentials> byTenant) {
    this.byTenant = Map.copyOf(byTenant);
  }

  @Override
  public MerchantCredentials forTenant(String tenantId) {
    MerchantCredentials credentials = byTenant.get(tenantId);
    if (credentials == null) {
      throw new IllegalArgumentException(
          "no WeChat Pay merchant for tenant " + tenantId + "; known tenants " + byTenant.keySet());
    }
    return credentials;
  }
}
