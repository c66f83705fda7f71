package io.ordertimeout.http;

import io.ordertimeout.admin.AdminRefusal;
import io.ordertimeout.config.AdminSettings;
import io.ordertimeout.config.PrincipalMap;
import java.util.Set;
import java.util.TreeSet;

/**
 * Who may do what on the admin API ({@link AdminSettings}, OTC_ADMIN_PRINCIPALS): an operator the
 * mapping does not name is refused every route (403 ADMIN_NOT_MAPPED) before its body is read; a
 * route that names one tenant needs that tenant or {@code "*"}, a route that acts on no single
 * tenant needs {@code "*"} (403 ADMIN_NOT_ALLOWED). A refusal changed nothing.
 */
public final class AdminAccess {
  private final AdminSettings settings;

  public AdminAccess(AdminSettings settings) {
    this.settings = settings;
  }

  /** Refuses (403 ADMIN_NOT_MAPPED) an operator who may administer nothing. */
  public void requireMapped(String operator) {
    if (settings.tenantsOf(operator).isEmpty()) {
      throw AdminRefusal.forbidden(
          "ADMIN_NOT_MAPPED",
          "caller " + operator + " may not use the admin API (OTC_ADMIN_PRINCIPALS)");
    }
  }

  /** Refuses (403 ADMIN_NOT_ALLOWED) an operator who may not administer {@code tenant}. */
  public void requireTenant(String operator, String tenant) {
    Set<String> allowed = settings.tenantsOf(operator);
    if (!allowed.contains(tenant) && !allowed.contains(PrincipalMap.ALL)) {
      throw AdminRefusal.forbidden(
          "ADMIN_NOT_ALLOWED",
          "caller "
              + operator
              + " may administer "
              + new TreeSet<>(allowed)
              + ", not tenant "
              + tenant
              + " (OTC_ADMIN_PRINCIPALS)");
    }
  }

  /**
   * Refuses (403 ADMIN_NOT_ALLOWED) an operator without {@code "*"}: {@code what} acts on no single
   * tenant (every tenant's sweep, compensation, dead letters by id or all of them).
   */
  public void requireAll(String operator, String what) {
    if (!settings.tenantsOf(operator).contains(PrincipalMap.ALL)) {
      throw AdminRefusal.forbidden(
          "ADMIN_NOT_ALLOWED",
          "caller "
              + operator
              + " may administer "
              + new TreeSet<>(settings.tenantsOf(operator))
              + " only; "
              + what
              + " acts for every tenant and needs \"*\" (OTC_ADMIN_PRINCIPALS)");
    }
  }
}
