package io.ordertimeout.domain;

import java.util.regex.Pattern;

/**
 * What a tenant id may look like where it arrives from outside (a URL path segment). The column is
 * {@code tenant_id VARCHAR(32)}; lower-case letters, digits, '_' and '-' keep it one URL segment
 * that needs no escaping, in logs, metrics and Redis keys alike.
 */
public final class TenantIds {
  /** 1 to 32 characters, the width of every tenant_id column. */
  public static final Pattern PATTERN = Pattern.compile("[a-z0-9_-]{1,32}");

  /**
   * The tenant every row had before tenants were part of the keys (schema V8 keeps existing data as
   * this tenant), and the one a caller acts for when OTC_TENANT_PRINCIPALS is unset.
   */
  public static final String DEFAULT = "default";

  /**
   * The tenant of the pre-traffic hook's sample requests (OTC_PROBE_PRINCIPAL): reserved, never
   * onboarded (TenantStore refuses it), so a sample finds no order, stock or coupon of it and can
   * write none (the tables' foreign keys name the tenants table).
   */
  public static final String PROBE = "otc-probe";

  private TenantIds() {}

  /** True for the ids no tenant may be onboarded with ({@link #PROBE}). */
  public static boolean reserved(String tenantId) {
    return PROBE.equals(tenantId);
  }

  public static boolean valid(String tenantId) {
    return tenantId != null && PATTERN.matcher(tenantId).matches();
  }
}
