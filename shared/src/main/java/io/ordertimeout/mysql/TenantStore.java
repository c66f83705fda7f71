package io.ordertimeout.mysql;

import io.ordertimeout.domain.TenantIds;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code tenants} table: which tenants this deployment serves. Orders, stock and coupons of a
 * tenant without a row are refused by foreign keys; the timeout sweep and compensation read the
 * list to know whose timer keys to claim and audit.
 */
public final class TenantStore {
  private final Tx tx;

  public TenantStore(Tx tx) {
    this.tx = tx;
  }

  /**
   * Adds a tenant; true when it was added, false when it was there already (a retry changes
   * nothing).
   *
   * @throws IllegalArgumentException for an id that is not 1-32 of {@code [a-z0-9_-]}, or one
   *     reserved ({@link TenantIds#PROBE}, the pre-traffic hook's)
   */
  public boolean onboard(String tenantId) {
    if (!TenantIds.valid(tenantId)) {
      throw new IllegalArgumentException(
          "invalid tenant id '" + tenantId + "': 1 to 32 of [a-z0-9_-]");
    }
    if (TenantIds.reserved(tenantId)) {
      throw new IllegalArgumentException(
          "tenant id '"
              + tenantId
              + "' is reserved for the pre-traffic hook's samples (OTC_PROBE_PRINCIPAL)");
    }
    return tx.inTransaction(
        "onboard tenant " + tenantId,
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement("INSERT IGNORE INTO tenants (tenant_id) VALUES (?)")) {
            ps.setString(1, tenantId);
            return ps.executeUpdate() == 1;
          }
        });
  }

  public boolean exists(String tenantId) {
    return tx.read(
        "check tenant " + tenantId,
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement("SELECT 1 FROM tenants WHERE tenant_id = ?")) {
            ps.setString(1, tenantId);
            try (ResultSet rs = ps.executeQuery()) {
              return rs.next();
            }
          }
        });
  }

  /** Every tenant, in id order. */
  public List<String> all() {
    return tx.read(
        "list tenants",
        c -> {
          List<String> ids = new ArrayList<>();
          try (PreparedStatement ps =
                  c.prepareStatement("SELECT tenant_id FROM tenants ORDER BY tenant_id");
              ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              ids.add(rs.getString(1));
            }
          }
          return ids;
        });
  }
}
