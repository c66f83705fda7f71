package io.ordertimeout.config;

import io.ordertimeout.domain.TenantIds;
import java.util.Set;

/**
 * OTC_ADMIN_PRINCIPALS: which IAM principals may call the admin API (/admin/*) and for which
 * tenants, JSON as OTC_TENANT_PRINCIPALS is and matched the same way ({@link PrincipalMap}): {@code
 * {"arn:aws:iam::123456789012:role/oncall":["*"],
 * "arn:aws:iam::123456789012:role/shop-a-support":["shop-a"]}}. {@code "*"} is every tenant and the
 * operations that act on no single tenant (pause, resume, compensation, dead letters by id or all
 * of them); a list of tenants admits only the routes that name one of them.
 *
 * <p>Deny by default: unset (or blank) admits nobody. IAM alone does not protect the admin routes:
 * an HTTP API has no resource policy, so any principal whose identity policy reaches {@code
 * /admin/*} (PowerUserAccess, a CI role, a mall role granted {@code <api>/*}) passes API Gateway.
 *
 * <p>OTC_PROBE_PRINCIPAL, when set, is the pre-traffic hook's role: admitted for the reserved
 * tenant {@link TenantIds#PROBE} only (TenantSettings says why).
 */
public record AdminSettings(PrincipalMap principals, PrincipalMap probe) {
  static final String VARIABLE = "OTC_ADMIN_PRINCIPALS";

  /** Nobody may call the admin API. */
  public static final AdminSettings NOBODY = new AdminSettings(null, null);

  /** Parses OTC_ADMIN_PRINCIPALS and OTC_PROBE_PRINCIPAL (either null or blank: unset). */
  public static AdminSettings parse(String json, String probePrincipal) {
    return new AdminSettings(
        PrincipalMap.parse(VARIABLE, json), TenantSettings.probe(probePrincipal));
  }

  /** As {@link #parse(String, String)} without a probe. */
  public static AdminSettings parse(String json) {
    return parse(json, null);
  }

  /**
   * The tenants {@code operatorArn} may administer ({@link PrincipalMap#ALL} among them for every
   * tenant and the global operations); empty for one the mapping does not name.
   */
  public Set<String> tenantsOf(String operatorArn) {
    if (probe != null && !probe.tenantsOf(operatorArn).isEmpty()) {
      return Set.of(TenantIds.PROBE);
    }
    return principals == null ? Set.of() : principals.tenantsOf(operatorArn);
  }

  @Override
  public String toString() {
    return "adminPrincipals="
        + (principals == null ? "unset (nobody)" : principals)
        + (probe == null ? "" : ", probePrincipal=" + probe.entries().keySet());
  }
}
