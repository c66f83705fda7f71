package io.ordertimeout.wechat;

import java.util.Map;
import java.util.Optional;

/** A fixed tenant-to-credentials map, for tests, local runs and single-tenant deployments. */
public final class StaticMerchantDirectory implements MerchantDirectory {

  private final Map<String, MerchantCredentials> byTenant;
  private final SubMerchantIndex subMerchants;

  /**
   * @throws IllegalArgumentException when tenants contradict each other (see {@link
   *     SubMerchantIndex})
   */
  public StaticMerchantDirectory(Map<String, MerchantCredentials> byTenant) {
    this.byTenant = Map.copyOf(byTenant);
    this.subMerchants = SubMerchantIndex.of(this.byTenant);
  }

  @Override
  public Optional<String> tenantOfSubMerchant(String spMchid, String subMchid) {
    return subMerchants.tenantOf(spMchid, subMchid);
  }

  @Override
  public Optional<MerchantCredentials> provider(String spMchid) {
    return subMerchants.provider(spMchid);
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
