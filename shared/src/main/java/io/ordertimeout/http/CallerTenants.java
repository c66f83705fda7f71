package io.ordertimeout.http;

import io.ordertimeout.config.TenantSettings;
import java.util.Set;
import java.util.TreeSet;

/**
 * The tenant a request acts for: the one it names (an X-Tenant-Id header, or the body's tenantId on
 * {@code POST /orders} and {@code POST /coupons}), which must be one of its caller's tenants
 * ({@link TenantSettings}); a caller with exactly one tenant may name none. Refusals: 403
 * PRINCIPAL_NOT_MAPPED, 403 TENANT_NOT_ALLOWED, 400 TENANT_REQUIRED, 400 TENANT_MISMATCH (header
 * and body name different tenants), 400 INVALID_TENANT_ID.
 */
public final class CallerTenants {
  private final TenantSettings settings;

  public CallerTenants(TenantSettings settings) {
    this.settings = settings;
  }

  /** Refuses (403 PRINCIPAL_NOT_MAPPED) a caller that may act for no tenant, before its body. */
  public void requireMapped(String callerArn) {
    if (settings.tenantsOf(callerArn).isEmpty()) {
      throw notMapped(callerArn);
    }
  }

  /**
   * @param callerArn the IAM caller, null when the request carries none
   * @param header the X-Tenant-Id header, null when absent
   * @param body the body's tenantId, null when absent or for a route without one
   */
  public String resolve(String callerArn, String header, String body) {
    if (header != null && !PlaceOrderRequests.TENANT_ID.matcher(header).matches()) {
      throw ApiError.badRequest(
          "INVALID_TENANT_ID", "X-Tenant-Id must be 1-32 characters of [0-9A-Za-z_-]");
    }
    if (header != null && body != null && !header.equals(body)) {
      throw ApiError.badRequest(
          "TENANT_MISMATCH",
          "X-Tenant-Id '" + header + "' and the body's tenantId '" + body + "' differ");
    }
    String named = header != null ? header : body;
    Set<String> allowed = settings.tenantsOf(callerArn);
    if (allowed.isEmpty()) {
      throw notMapped(callerArn);
    }
    if (named == null) {
      if (allowed.size() == 1 && !allowed.contains(TenantSettings.ALL)) {
        return allowed.iterator().next();
      }
      throw ApiError.badRequest(
          "TENANT_REQUIRED",
          "caller "
              + callerArn
              + " may act for "
              + new TreeSet<>(allowed)
              + "; name one in X-Tenant-Id");
    }
    if (allowed.contains(named) || allowed.contains(TenantSettings.ALL)) {
      return named;
    }
    throw new ApiError(
        403,
        "TENANT_NOT_ALLOWED",
        "caller " + callerArn + " may not act for tenant " + named + " (OTC_TENANT_PRINCIPALS)");
  }

  private static ApiError notMapped(String callerArn) {
    return new ApiError(
        403,
        "PRINCIPAL_NOT_MAPPED",
        "caller " + callerArn + " may act for no tenant (OTC_TENANT_PRINCIPALS)");
  }
}
