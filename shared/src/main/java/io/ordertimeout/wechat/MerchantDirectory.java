package io.ordertimeout.wechat;

import java.util.Optional;

/**
 * Where a tenant's merchant credentials come from (Secrets Manager in production, a map in tests).
 */
public interface MerchantDirectory {

  /**
   * @throws IllegalArgumentException when the tenant has no merchant account
   */
  MerchantCredentials forTenant(String tenantId);

  /**
   * The tenant that is sub-merchant {@code subMchid} of service provider {@code spMchid}; empty
   * when none is (a directory of direct merchants only has none).
   */
  default Optional<String> tenantOfSubMerchant(String spMchid, String subMchid) {
    return Optional.empty();
  }

  /**
   * Credentials holding service provider {@code spMchid}'s keys (those of any of its sub-merchant
   * tenants); empty when no tenant is its sub-merchant.
   */
  default Optional<MerchantCredentials> provider(String spMchid) {
    return Optional.empty();
  }
}
