package io.ordertimeout.compensation;

import io.ordertimeout.mysql.Tx;
import io.ordertimeout.payment.Refunds;
import io.ordertimeout.wechat.PaymentGateway;
import io.ordertimeout.wechat.PaymentRejectedException;
import io.ordertimeout.wechat.PaymentTransientException;
import io.ordertimeout.wechat.RefundStatus;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * The refunds category's second half (after {@link WeChatAudit#pendingRefunds} sent the ones WeChat
 * never took): refunds WeChat accepted but whose outcome no notification brought are queried
 * ({@link Refunds#settle}). A refund is queried once it was sent longer than the notify grace ago
 * (60 s: WeChat notifies within seconds of the outcome, and its first retries come after 15 s and
 * 30 s), PROCESSING ones on every pass until they settle, ABNORMAL ones too, so that an exception
 * refund an operator applied for on the merchant platform is seen without its notification. Each
 * query spends one of the pass's WeChat queries.
 */
final class RefundAudit {
  private final Tx tx;
  private final Refunds refunds;
  private final PaymentGateway gateway;
  private final CompensationSettings settings;

  RefundAudit(Tx tx, Refunds refunds, PaymentGateway gateway, CompensationSettings settings) {
    this.tx = tx;
    this.refunds = refunds;
    this.gateway = gateway;
    this.settings = settings;
  }

  private record Key(String tenantId, String outRefundNo) {}

  void unsettled(Tally tally) {
    if (gateway == null) {
      return;
    }
    Key after = new Key("", "");
    while (tally.page("refunds")) {
      Key cursor = after;
      List<Key> page = tx.read("unsettled refunds", c -> page(c, cursor));
      for (Key refund : page) {
        if (!tally.wechatQuery("refunds")) {
          return;
        }
        settle(tally, refund);
      }
      if (page.size() < settings.pageSize()) {
        return;
      }
      after = page.get(page.size() - 1);
    }
  }

  private void settle(Tally tally, Key refund) {
    try {
      RefundStatus status = refunds.settle(refund.tenantId(), refund.outRefundNo());
      tally.add("refunds_queried", 1);
      if (status == RefundStatus.SUCCESS || status == RefundStatus.CLOSED) {
        tally.add("refunds_settled_by_query", 1);
      }
    } catch (PaymentTransientException | PaymentRejectedException | IllegalArgumentException e) {
      tally.add("wechat_errors", 1);
    }
  }

  /** Keyset pages by the primary key; the status filter keeps each page to unsettled rows. */
  private List<Key> page(Connection c, Key after) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT tenant_id, out_refund_no FROM refunds"
                + " WHERE status IN ('PROCESSING', 'ABNORMAL')"
                + " AND requested_at <= TIMESTAMPADD(MICROSECOND, ?, NOW(3))"
                + " AND (tenant_id > ? OR (tenant_id = ? AND out_refund_no > ?))"
                + " ORDER BY tenant_id, out_refund_no LIMIT ?")) {
      ps.setLong(1, -settings.notifyGrace().toMillis() * 1_000);
      ps.setString(2, after.tenantId());
      ps.setString(3, after.tenantId());
      ps.setString(4, after.outRefundNo());
      ps.setInt(5, settings.pageSize());
      List<Key> page = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          page.add(new Key(rs.getString("tenant_id"), rs.getString("out_refund_no")));
        }
      }
      return page;
    }
  }
}
