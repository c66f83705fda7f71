package io.ordertimeout.reconcile;

import io.ordertimeout.mysql.OrderStore;
import io.ordertimeout.mysql.Statements;
import io.ordertimeout.wechat.PaymentGateway;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Which (tenant, order) each bill line's trade (mchid, out_trade_no) is bound to, in table
 * wechat_trades (payment.TradeBindings), looked up for a batch of lines in one query: never by
 * guessing from the out_trade_no. A binding without mchid (a trade older than the bindings) counts
 * for the merchant its tenant has now.
 */
final class TradeOwners {
  /** A bound order, and its state here. {@code status} is null when the order row is gone. */
  record Owner(
      String tenantId, String orderId, String status, long amountFen, String transactionId) {}

  private final PaymentGateway gateway;
  private final Map<String, String> merchantOfTenant = new HashMap<>();

  TradeOwners(PaymentGateway gateway) {
    this.gateway = gateway;
  }

  /** The bound orders of each of {@code outTradeNos} under {@code mchid}. */
  Map<String, List<Owner>> of(Connection c, String mchid, Collection<String> outTradeNos)
      throws SQLException {
    Map<String, List<Owner>> out = new HashMap<>();
    if (outTradeNos.isEmpty()) {
      return out;
    }
    String sql =
        "SELECT t.tenant_id, t.order_id, t.mchid, t.out_trade_no, o.status, o.amount_fen,"
            + " o.transaction_id FROM wechat_trades t LEFT JOIN orders o"
            + " ON o.tenant_id = t.tenant_id AND o.order_id = t.order_id"
            + " WHERE t.out_trade_no IN (%s)";
    for (List<String> part : Statements.inLists(sql, new ArrayList<>(outTradeNos))) {
      try (PreparedStatement ps =
          c.prepareStatement(String.format(sql, OrderStore.placeholders(part.size())))) {
        OrderStore.bind(ps, 1, part);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            String tenant = rs.getString("tenant_id");
            String bound = rs.getString("mchid");
            if (bound == null ? !mchid.equals(merchantOf(tenant)) : !mchid.equals(bound)) {
              continue;
            }
            out.computeIfAbsent(rs.getString("out_trade_no"), k -> new ArrayList<>(1))
                .add(
                    new Owner(
                        tenant,
                        rs.getString("order_id"),
                        rs.getString("status"),
                        rs.getLong("amount_fen"),
                        rs.getString("transaction_id")));
          }
        }
      }
    }
    return out;
  }

  private String merchantOf(String tenantId) {
    return merchantOfTenant.computeIfAbsent(
        tenantId,
        t -> {
          try {
            return gateway.merchantId(t);
          } catch (IllegalArgumentException e) {
            return "";
          }
        });
  }
}
