package io.ordertimeout.admin;

import io.ordertimeout.mysql.Tx;
import io.ordertimeout.payment.TradeBinding;
import io.ordertimeout.payment.TradeBindings;
import io.ordertimeout.wechat.PaymentGateway;
import java.sql.PreparedStatement;
import java.sql.ResultSet;

/**
 * An operator's way out of a trade no call may act on: an UNPAID order whose WeChat trade cannot be
 * told apart from another tenant's (two tenants of one merchant prepaid the same id before trade
 * bindings recorded the merchant: {@link TradeBinding.Problem#SHARED_TRADE}) or lies at a merchant
 * the tenant no longer has ({@link TradeBinding.Problem#MERCHANT_CHANGED}). The close path leaves
 * such an order UNPAID and compensation flags it TRADE_UNREACHABLE. The operator checks the trade
 * in the merchant platform (its payer, amount and description name the order it was made for) and,
 * for the order it is NOT, disowns it: the order's binding and prepay mark go in one transaction
 * with its row locked, so its close asks WeChat nothing, and the other order, now the number's only
 * holder, is reachable again and closes or is paid as any other.
 *
 * <p>Refused for a trade the close path can reach (ask WeChat: force-close without disowning) and
 * for an order that is not UNPAID. Nothing else changes: stock and coupon are the close's to
 * release.
 */
public final class TradeDisowning {
  /** What a disowning found. */
  public enum Outcome {
    DISOWNED,
    NOT_FOUND,
    NOT_UNPAID,
    REACHABLE
  }

  private final Tx tx;
  private final TradeBindings bindings;
  private final PaymentGateway gateway;

  public TradeDisowning(Tx tx, TradeBindings bindings, PaymentGateway gateway) {
    this.tx = tx;
    this.bindings = bindings;
    this.gateway = gateway;
  }

  /** Disowns the trade of the tenant's UNPAID order, when the close path cannot reach it. */
  public Outcome disown(String tenantId, String orderId) {
    if (gateway == null) {
      // without WeChat Pay the close path asks nothing of any trade
      return Outcome.REACHABLE;
    }
    String mchid = gateway.merchantId(tenantId);
    if (bindings.resolve(tenantId, orderId).reachable()) {
      return Outcome.REACHABLE;
    }
    return tx.inTransaction(
        "disowning the trade of order " + tenantId + "/" + orderId,
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement(
                  "SELECT status FROM orders WHERE tenant_id = ? AND order_id = ? FOR UPDATE")) {
            ps.setString(1, tenantId);
            ps.setString(2, orderId);
            try (ResultSet rs = ps.executeQuery()) {
              if (!rs.next()) {
                return Outcome.NOT_FOUND;
              }
              if (!"UNPAID".equals(rs.getString("status"))) {
                return Outcome.NOT_UNPAID;
              }
            }
          }
          // only the unreachable shapes: a row without mchid, or one of another merchant
          try (PreparedStatement ps =
              c.prepareStatement(
                  "DELETE FROM wechat_trades WHERE tenant_id = ? AND order_id = ?"
                      + " AND (mchid IS NULL OR mchid <> ?)")) {
            ps.setString(1, tenantId);
            ps.setString(2, orderId);
            ps.setString(3, mchid);
            ps.executeUpdate();
          }
          try (PreparedStatement ps =
              c.prepareStatement(
                  "UPDATE orders SET prepaid_at = NULL, prepay_id = NULL, version = version + 1"
                      + " WHERE tenant_id = ? AND order_id = ? AND status = 'UNPAID'")) {
            ps.setString(1, tenantId);
            ps.setString(2, orderId);
            ps.executeUpdate();
          }
          return Outcome.DISOWNED;
        });
  }
}
