package io.ordertimeout.admin;

import io.ordertimeout.domain.TenantIds;
import java.util.regex.Pattern;

/**
 * Order ids as WeChat Pay's out_trade_no allows them: 6 to 32 of [0-9A-Za-z_-|*]; tenant ids as the
 * tenant_id columns hold them.
 */
public final class OrderIds {
  private static final Pattern ORDER_ID = Pattern.compile("[0-9A-Za-z_\\-|*]{6,32}");

  private OrderIds() {}

  static String require(String orderId) {
    if (orderId == null || !ORDER_ID.matcher(orderId).matches()) {
      throw AdminRefusal.badRequest(
          "INVALID_ORDER_ID",
          "order id must be 6-32 characters of [0-9A-Za-z_-|*], was '" + orderId + "'");
    }
    return orderId;
  }

  /** A tenant id named by an operator; 400 INVALID_TENANT_ID otherwise. */
  public static String requireTenant(String tenantId) {
    if (!TenantIds.valid(tenantId)) {
      throw AdminRefusal.badRequest(
          "INVALID_TENANT_ID", "tenantId must be 1-32 of [a-z0-9_-], was '" + tenantId + "'");
    }
    return tenantId;
  }
}
