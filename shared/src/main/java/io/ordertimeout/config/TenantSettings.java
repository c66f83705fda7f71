package io.ordertimeout.config;

import io.ordertimeout.domain.TenantIds;
import java.util.Set;

/**
 * OTC_TENANT_PRINCIPALS: which tenants each IAM principal calling the order API (AWS_IAM auth) may
 * act for, as JSON {@code {"arn:aws:iam::123456789012:role/mall-a":["shop-a"],
 * "arn:aws:iam::123456789012:role/platform":["*"]}}; {@code "*"} is every tenant. Parsed and
 * matched by {@link PrincipalMap} (a role's entry also matches its assumed-role sessions).
 *
 * <p>Unset (or blank): {@link #UNSET}, every caller acts for the tenant {@code default} only, what
 * the API did before tenants were scoped.
 *
 * <p>OTC_PROBE_PRINCIPAL, when set, is the pre-traffic hook's role: that caller acts for the
 * reserved tenant {@link TenantIds#PROBE} only, whatever the mapping says or whether it is set, so
 * the hook's sample requests are answered (404, 400) as on a healthy version and never reach a real
 * tenant's data.
 */
public record TenantSettings(PrincipalMap principals, PrincipalMap probe) {
  /** Every tenant, as a value in the mapping. */
  public static final String ALL = PrincipalMap.ALL;

  /** The tenant every caller acts for when the mapping is unset. */
  public static final String DEFAULT_TENANT = TenantIds.DEFAULT;

  static final String VARIABLE = "OTC_TENANT_PRINCIPALS";
  static final String PROBE_VARIABLE = "OTC_PROBE_PRINCIPAL";

  public static final TenantSettings UNSET = new TenantSettings(null, null);

  /** Parses OTC_TENANT_PRINCIPALS; null or blank is {@link #UNSET}. */
  public static TenantSettings parse(String json) {
    return parse(json, null);
  }

  /** Parses OTC_TENANT_PRINCIPALS and OTC_PROBE_PRINCIPAL (either null or blank: unset). */
  public static TenantSettings parse(String json, String probePrincipal) {
    return new TenantSettings(PrincipalMap.parse(VARIABLE, json), probe(probePrincipal));
  }

  /** OTC_PROBE_PRINCIPAL as a one-entry mapping to {@link TenantIds#PROBE}; null when unset. */
  static PrincipalMap probe(String probePrincipal) {
    return probePrincipal == null || probePrincipal.isBlank()
        ? null
        : PrincipalMap.of(PROBE_VARIABLE, probePrincipal.trim(), Set.of(TenantIds.PROBE));
  }

  public boolean isSet() {
    return principals != null;
  }

  /**
   * The tenants {@code callerArn} may act for ({@link #ALL} among them for every tenant); empty for
   * an unmapped caller. The probe: {@link TenantIds#PROBE} only. Unset: {@code default} for every
   * other caller, even one without an ARN.
   */
  public Set<String> tenantsOf(String callerArn) {
    if (probe != null && !probe.tenantsOf(callerArn).isEmpty()) {
      return Set.of(TenantIds.PROBE);
    }
    if (principals == null) {
      return Set.of(DEFAULT_TENANT);
    }
    return principals.tenantsOf(callerArn);
  }

  @Override
  public String toString() {
    return "tenantPrincipals="
        + (principals == null ? "unset (default tenant)" : principals)
        + (probe == null ? "" : ", probePrincipal=" + probe.entries().keySet());
  }
}
