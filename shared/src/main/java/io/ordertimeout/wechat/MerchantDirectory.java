package io.ordertimeout.wechat;

/**
 * Where a tenant's merchant credentials come from (Secrets Manager in production, a map in tests).
 */
public interface MerchantDirectory {

  /**
   * @throws IllegalArgumentException when the tenant has no merchant account
   */
  MerchantCredentials forTenant(String tenantId);
}
