package io.ordertimeout.reconcile;

import io.ordertimeout.mysql.OrderStore;
import io.ordertimeout.mysql.Statements;
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
 * The refunds this system asked WeChat for, by out_refund_no, for matching the bill's REFUND lines:
 * table refunds, where every refund is written before WeChat is called, whatever its purpose.
 */
final class RecordedRefunds {
  /** A refund recorded for one of the tenant's orders. */
  record Refund(String orderId, String outRefundNo, long amountFen) {}

  private RecordedRefunds() {}

  /** The tenant's recorded refunds among {@code outRefundNos}, by out_refund_no. */
  static Map<String, Refund> find(Connection c, String tenantId, Collection<String> outRefundNos)
      throws SQLException {
    Map<String, Refund> out = new HashMap<>();
    if (outRefundNos.isEmpty()) {
      return out;
    }
    String sql =
        "SELECT order_id, out_refund_no, amount_fen FROM refunds"
            + " WHERE tenant_id = ? AND out_refund_no IN (%s)";
    for (List<String> part : Statements.inLists(sql, new ArrayList<>(outRefundNos))) {
      try (PreparedStatement ps =
          c.prepareStatement(String.format(sql, OrderStore.placeholders(part.size())))) {
        ps.setString(1, tenantId);
        OrderStore.bind(ps, 2, part);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            Refund r =
                new Refund(
                    rs.getString("order_id"),
                    rs.getString("out_refund_no"),
                    rs.getLong("amount_fen"));
            out.put(r.outRefundNo(), r);
          }
        }
      }
    }
    return out;
  }

  /** The category of a REFUND line of the tenant's trade. */
  static LineCategory match(Refund recorded, long billRefundFen) {
    if (recorded == null) {
      return LineCategory.REFUND_UNKNOWN;
    }
    return recorded.amountFen() == billRefundFen
        ? LineCategory.REFUND_MATCHED
        : LineCategory.REFUND_AMOUNT_MISMATCH;
  }
}
