package io.ordertimeout.compensation;

import io.ordertimeout.close.OrderCloser;
import io.ordertimeout.compensation.Compensator.Unpaid;
import io.ordertimeout.mysql.DbTime;
import io.ordertimeout.mysql.Tx;
import io.ordertimeout.payment.PaidTrade;
import io.ordertimeout.payment.PaymentMismatchException;
import io.ordertimeout.payment.PaymentOutcome;
import io.ordertimeout.payment.PaymentService;
import io.ordertimeout.payment.TradeBinding;
import io.ordertimeout.wechat.PaymentGateway;
import io.ordertimeout.wechat.PaymentRejectedException;
import io.ordertimeout.wechat.PaymentTransientException;
import io.ordertimeout.wechat.TradeState;
import io.ordertimeout.wechat.TradeStatus;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Category e: WeChat's word on prepaid orders. A trade WeChat reports paid takes the paid path
 * (PaymentService), which makes an UNPAID order PAID and records and refunds a CLOSED one
 * (paid-after-close, docs/concepts/design.md, invariant 6). Pending paid-after-close refunds are
 * retried. Without a payment gateway the category does nothing: no order was ever prepaid.
 *
 * <p>WeChat is asked about the trade the order's binding names. An order whose trade cannot be told
 * apart from another tenant's (or whose merchant changed since) is flagged TRADE_UNREACHABLE, never
 * queried. A trade in state REFUND (paid, then refunded by the merchant) is flagged REFUNDED_TRADE:
 * marking the order PAID would sell stock whose money went back, refunding again would pay the
 * payer twice; an operator decides.
 */
final class WeChatAudit {
  private final Tx tx;
  private final PaymentService payments;
  private final PaymentGateway gateway;
  private final Flags flags;
  private final CompensationSettings settings;

  WeChatAudit(
      Tx tx,
      PaymentService payments,
      PaymentGateway gateway,
      Flags flags,
      CompensationSettings settings) {
    this.tx = tx;
    this.payments = payments;
    this.gateway = gateway;
    this.flags = flags;
    this.settings = settings;
  }

  /** UNPAID prepaid orders whose prepay is older than the notify grace: was the payment lost? */
  void lostNotifications(Tally tally, List<Unpaid> page) {
    if (gateway == null) {
      return;
    }
    for (Unpaid order : page) {
      if (order.notifyDue() && tally.wechatQuery("unpaid")) {
        PaymentOutcome outcome = applyIfPaid(tally, order.tenantId(), order.orderId());
        if (outcome == PaymentOutcome.PAID) {
          tally.add("lost_notifications_paid", 1);
        }
      }
    }
  }

  /**
   * Resolves the USERPAYING_STUCK flags of orders that are no longer UNPAID: the overdue category
   * just asked WeChat about each still-open one through the closer, which closed it (NOTPAY or
   * CLOSED at WeChat), took the paid path (SUCCESS) or flagged it again (still USERPAYING).
   */
  void settledUserPaying(Tally tally) {
    int resolved =
        tx.inTransaction(
            "resolve USERPAYING_STUCK flags of settled orders",
            c -> {
              try (PreparedStatement ps =
                  c.prepareStatement(
                      "UPDATE compensation_flags f JOIN orders o"
                          + " ON o.tenant_id = f.tenant_id AND o.order_id = f.subject"
                          + " SET f.resolved_at = NOW(3)"
                          + " WHERE f.kind = ? AND f.resolved_at IS NULL AND o.status <> 'UNPAID'")) {
                ps.setString(1, OrderCloser.USER_PAYING_STUCK_FLAG);
                return ps.executeUpdate();
              }
            });
    tally.add("userpaying_stuck_resolved", resolved);
  }

  private record Closed(String orderId, String tenantId, LocalDateTime closedAt) {}

  /** Prepaid orders CLOSED within the window that WeChat reports paid: paid-after-close. */
  void closedPrepaid(Tally tally) {
    if (gateway == null) {
      return;
    }
    LocalDateTime since =
        tx.read("closed window", c -> Sql.dbNowMinus(c, settings.closedWindow().toMillis()));
    Closed after = new Closed("", "", since);
    while (tally.page("closed_prepaid")) {
      Closed cursor = after;
      List<Closed> page = tx.read("closed prepaid orders", c -> closedPage(c, cursor));
      for (Closed order : page) {
        if (!tally.wechatQuery("closed_prepaid")) {
          return;
        }
        tally.add("closed_prepaid_checked", 1);
        if (applyIfPaid(tally, order.tenantId(), order.orderId())
            == PaymentOutcome.PAID_AFTER_CLOSE) {
          tally.add("paid_after_close_found", 1);
        }
      }
      if (page.size() < settings.pageSize()) {
        return;
      }
      after = page.get(page.size() - 1);
    }
  }

  /** Keyset pages by (closed_at, tenant_id, order_id): the closed_at index ends in the PK. */
  private List<Closed> closedPage(Connection c, Closed after) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT o.order_id, o.tenant_id, o.closed_at FROM orders o"
                + " WHERE o.closed_at >= ? AND (o.closed_at > ? OR (o.closed_at = ?"
                + " AND (o.tenant_id > ? OR (o.tenant_id = ? AND o.order_id > ?))))"
                + " AND o.status = 'CLOSED' AND (o.prepay_id IS NOT NULL OR o.prepaid_at IS NOT NULL)"
                + " AND NOT EXISTS (SELECT 1 FROM paid_after_close p"
                + " WHERE p.tenant_id = o.tenant_id AND p.order_id = o.order_id)"
                + " ORDER BY o.closed_at, o.tenant_id, o.order_id LIMIT ?")) {
      DbTime.bind(ps, 1, after.closedAt());
      DbTime.bind(ps, 2, after.closedAt());
      DbTime.bind(ps, 3, after.closedAt());
      ps.setString(4, after.tenantId());
      ps.setString(5, after.tenantId());
      ps.setString(6, after.orderId());
      ps.setInt(7, settings.pageSize());
      List<Closed> page = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          page.add(
              new Closed(
                  rs.getString("order_id"),
                  rs.getString("tenant_id"),
                  DbTime.utc(rs, "closed_at")));
        }
      }
      return page;
    }
  }

  /**
   * Queries WeChat and takes the paid path if the trade is paid; null when it is not, or WeChat
   * gave no answer (counted; the next run asks again).
   */
  private PaymentOutcome applyIfPaid(Tally tally, String tenantId, String orderId) {
    TradeStatus trade;
    TradeBinding binding;
    try {
      binding = payments.bindings().resolve(tenantId, orderId);
      if (!binding.reachable()) {
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("outTradeNo", binding.outTradeNo());
        evidence.put("problem", binding.problem().name());
        flags.raise(tally, "TRADE_UNREACHABLE", tenantId, orderId, evidence);
        return null;
      }
      trade = gateway.query(tenantId, binding.trade());
    } catch (PaymentTransientException | PaymentRejectedException | IllegalArgumentException e) {
      tally.add("wechat_errors", 1);
      return null;
    }
    if (trade.state() == TradeState.REFUND) {
      Map<String, Object> evidence = new LinkedHashMap<>();
      evidence.put("outTradeNo", binding.outTradeNo());
      evidence.put("transactionId", String.valueOf(trade.transactionId()));
      evidence.put("wechatAmountFen", String.valueOf(trade.amountFen()));
      flags.raise(tally, "REFUNDED_TRADE", tenantId, orderId, evidence);
      return null;
    }
    if (!trade.state().paid()) {
      return null;
    }
    try {
      return payments.apply(
          new PaidTrade(
              tenantId,
              orderId,
              trade.transactionId(),
              trade.amountFen() == null ? -1 : trade.amountFen(),
              trade.successTime(),
              PaidTrade.Source.CLOSE));
    } catch (PaymentTransientException e) {
      // recorded; only the refund waits (pendingRefunds retries it)
      return PaymentOutcome.PAID_AFTER_CLOSE;
    } catch (PaymentMismatchException e) {
      Map<String, Object> evidence = new LinkedHashMap<>();
      evidence.put("wechatState", trade.state().name());
      evidence.put("transactionId", String.valueOf(trade.transactionId()));
      evidence.put("wechatAmountFen", String.valueOf(trade.amountFen()));
      evidence.put("error", e.getMessage());
      flags.raise(tally, "PAYMENT_MISMATCH", tenantId, orderId, evidence);
      return null;
    }
  }

  /** paid_after_close rows still PENDING (WeChat never took the refund): ask again. */
  void pendingRefunds(Tally tally) {
    if (gateway == null) {
      return;
    }
    Closed after = new Closed("", "", LocalDateTime.of(1000, 1, 1, 0, 0));
    while (tally.page("refunds")) {
      Closed cursor = after;
      List<Closed> page = tx.read("pending refunds", c -> pendingPage(c, cursor));
      for (Closed pending : page) {
        if (!tally.timeLeft("refunds")) {
          return;
        }
        try {
          payments.retryRefund(pending.tenantId(), pending.orderId());
          tally.add("refunds_retried", 1);
        } catch (PaymentTransientException e) {
          tally.add("refunds_failed", 1);
        }
      }
      if (page.size() < settings.pageSize()) {
        return;
      }
      after = page.get(page.size() - 1);
    }
  }

  private List<Closed> pendingPage(Connection c, Closed after) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT order_id, tenant_id, detected_at FROM paid_after_close"
                + " WHERE refund_status = 'PENDING'"
                + " AND (detected_at > ? OR (detected_at = ? AND (tenant_id > ?"
                + " OR (tenant_id = ? AND order_id > ?))))"
                + " ORDER BY detected_at, tenant_id, order_id LIMIT ?")) {
      DbTime.bind(ps, 1, after.closedAt());
      DbTime.bind(ps, 2, after.closedAt());
      ps.setString(3, after.tenantId());
      ps.setString(4, after.tenantId());
      ps.setString(5, after.orderId());
      ps.setInt(6, settings.pageSize());
      List<Closed> page = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          page.add(
              new Closed(
                  rs.getString("order_id"),
                  rs.getString("tenant_id"),
                  DbTime.utc(rs, "detected_at")));
        }
      }
      return page;
    }
  }
}
