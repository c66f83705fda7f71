package io.ordertimeout.payment;

import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.OrderStatus;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.mysql.DbTime;
import io.ordertimeout.mysql.Tx;
import io.ordertimeout.outbox.Outbox;
import io.ordertimeout.payment.PaymentMismatchException.Kind;
import io.ordertimeout.redis.TimerIndex;
import io.ordertimeout.wechat.PaymentGateway;
import io.ordertimeout.wechat.RefundResult;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLIntegrityConstraintViolationException;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The paid path (docs/concepts/design.md, the paid path), shared by the payment notification and
 * the close path.
 *
 * <p>One transaction: lock the order, check it against the trade, then UNPAID -> PAID with its SELL
 * ledger rows, the coupon USED and reserved stock moved to sold (one UPDATE per SKU, last: the lock
 * order of package {@code io.ordertimeout.mysql}). Only after the commit is the timer removed. A
 * second SUCCESS for a PAID order changes nothing; a SUCCESS for a CLOSED order is recorded once in
 * paid_after_close and refunded, and its stock stays where it is (someone else may have bought it
 * since).
 *
 * <p>Over 300 lines: the paid path is one transaction with three outcomes (paid, already paid, paid
 * after close) plus the re-check of an already-applied trade; kept together so the lock order and
 * the outcomes read in one place.
 */
public final class PaymentService {
  private static final Logger log = LoggerFactory.getLogger(PaymentService.class);

  private final Tx tx;
  private final TimerIndex timers;
  private final Metrics metrics;
  private final PaidAfterCloseRefunds refunds;
  private final TradeBindings bindings;
  private final Refunds trackedRefunds;

  /**
   * @param gateway refunds paid-after-close cases; null when payments are not configured (cases are
   *     then recorded and left PENDING for compensation)
   */
  public PaymentService(Tx tx, TimerIndex timers, Metrics metrics, PaymentGateway gateway) {
    this.tx = tx;
    this.timers = timers;
    this.metrics = metrics;
    this.bindings = new TradeBindings(tx, gateway);
    this.trackedRefunds = new Refunds(tx, gateway, metrics);
    this.refunds = new PaidAfterCloseRefunds(tx, gateway, metrics, bindings, trackedRefunds);
  }

  /**
   * Every refund asked of WeChat, tracked to its outcome; for the refund webhook and compensation.
   */
  public Refunds refunds() {
    return trackedRefunds;
  }

  /** Which WeChat trade each order uses; for the close path, notifications and compensation. */
  public TradeBindings bindings() {
    return bindings;
  }

  private record Applied(PaymentOutcome outcome, boolean firstRecord) {}

  /**
   * Applies one paid trade. For PAID_AFTER_CLOSE the refund is requested after the commit.
   *
   * @throws PaymentMismatchException unknown order (of the trade's tenant), other amount, other
   *     transaction
   * @throws io.ordertimeout.wechat.PaymentTransientException the case is recorded but WeChat did
   *     not take the refund yet; a retry of the same trade tries the refund again
   */
  public PaymentOutcome apply(PaidTrade trade) {
    Applied applied =
        tx.inTransaction(
            "apply payment " + trade.transactionId() + " to order " + trade.orderId(),
            c -> applyInTransaction(c, trade));
    afterCommit(trade, applied);
    return applied.outcome();
  }

  /**
   * True when this trade is already fully applied: the order PAID by this very transaction, or a
   * paid-after-close case whose refund WeChat has accepted. Read-only, for the webhook's replay
   * rule.
   */
  public boolean alreadySettled(PaidTrade trade) {
    return tx.read(
        "check payment " + trade.transactionId() + " of order " + trade.orderId(),
        c -> settled(c, trade));
  }

  private static boolean settled(Connection c, PaidTrade trade) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT o.status, o.transaction_id, p.transaction_id AS pac_transaction_id,"
                + " p.refund_status FROM orders o LEFT JOIN paid_after_close p"
                + " ON p.tenant_id = o.tenant_id AND p.order_id = o.order_id"
                + " WHERE o.tenant_id = ? AND o.order_id = ?")) {
      // The trade's tenant's order only: another tenant's order of the same id is another order.
      ps.setString(1, trade.tenantId());
      ps.setString(2, trade.orderId());
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return false;
        }
        OrderStatus status = OrderStatus.valueOf(rs.getString("status"));
        if (status.paid()) {
          return trade.transactionId().equals(rs.getString("transaction_id"));
        }
        return status == OrderStatus.CLOSED
            && trade.transactionId().equals(rs.getString("pac_transaction_id"))
            && PaidAfterCloseRefunds.settled(rs.getString("refund_status"));
      }
    }
  }

  private void afterCommit(PaidTrade trade, Applied applied) {
    switch (applied.outcome()) {
      case PAID -> {
        metrics.count("orders_paid", 1);
        removeTimer(trade.tenantId(), trade.orderId());
      }
      case ALREADY_PAID -> {
        metrics.count("payment_duplicates", 1);
        removeTimer(trade.tenantId(), trade.orderId());
      }
      case PAID_AFTER_CLOSE -> {
        if (applied.firstRecord()) {
          metrics.count("paid_after_close", 1);
          log.warn(
              "paid after close: order {} (tenant {}) was paid by {} ({} fen) after it closed;"
                  + " refunding",
              trade.orderId(),
              trade.tenantId(),
              trade.transactionId(),
              trade.amountFen());
        }
        refunds.refund(trade.tenantId(), trade.orderId());
      }
    }
  }

  /**
   * The commit already made the order final; a timer left behind only costs the closer one "already
   * final" ack, so a Redis failure here must not turn a committed payment into an error.
   */
  private void removeTimer(String tenantId, String orderId) {
    try {
      timers.remove(tenantId, DeadlineKind.PAYMENT_TIMEOUT, List.of(orderId));
    } catch (RuntimeException e) {
      metrics.count("timer_remove_failures", 1);
      log.warn("order {} is final but its timer stays until the closer acks it: {}", orderId, e);
    }
  }

  private static Applied applyInTransaction(Connection c, PaidTrade trade) throws SQLException {
    LockedOrder order = lock(c, trade);
    OrderStatus status = OrderStatus.valueOf(order.status());
    // PAID and every state after it (SHIPPED ... COMPLETED): a repeated notification is settled.
    switch (status.paid() ? OrderStatus.PAID : status) {
      case PAID -> {
        if (!trade.transactionId().equals(order.transactionId())) {
          throw new PaymentMismatchException(
              Kind.TRANSACTION_MISMATCH,
              trade.orderId(),
              "already "
                  + status
                  + " (paid by "
                  + order.transactionId()
                  + "), now reported paid by "
                  + trade.transactionId());
        }
        return new Applied(PaymentOutcome.ALREADY_PAID, false);
      }
      case CLOSED -> {
        return new Applied(PaymentOutcome.PAID_AFTER_CLOSE, recordPaidAfterClose(c, trade));
      }
      case UNPAID -> {
        markPaid(c, trade);
        List<OrderItem> items = items(c, trade.tenantId(), trade.orderId());
        sellLedger(c, trade.tenantId(), trade.orderId(), items);
        // The `paid` event commits with the payment (an own row of the locked order).
        Outbox.paid(c, trade.orderId(), trade.tenantId(), trade.transactionId());
        // The lock order (package io.ordertimeout.mysql): coupon before stock, stock last.
        useCoupon(c, trade.tenantId(), trade.orderId(), order.couponId());
        sellStock(c, trade.tenantId(), trade.orderId(), items);
        return new Applied(PaymentOutcome.PAID, false);
      }
      default -> throw new IllegalStateException("order " + trade.orderId() + " is " + status);
    }
  }

  private record LockedOrder(String status, String couponId, String transactionId) {}

  /** Locks the order row and checks it against the trade; every refusal happens before a write. */
  private static LockedOrder lock(Connection c, PaidTrade trade) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT status, amount_fen, coupon_id, transaction_id FROM orders"
                + " WHERE tenant_id = ? AND order_id = ? FOR UPDATE")) {
      ps.setString(1, trade.tenantId());
      ps.setString(2, trade.orderId());
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          // Another tenant's order of the same id is not looked at: it is another order.
          throw new PaymentMismatchException(
              Kind.UNKNOWN_ORDER,
              trade.orderId(),
              "tenant " + trade.tenantId() + " has no such order (" + trade.transactionId() + ")");
        }
        if (trade.amountFen() != rs.getLong("amount_fen")) {
          throw new PaymentMismatchException(
              Kind.AMOUNT_MISMATCH,
              trade.orderId(),
              "paid " + trade.amountFen() + " fen, order amount " + rs.getLong("amount_fen"));
        }
        return new LockedOrder(
            rs.getString("status"), rs.getString("coupon_id"), rs.getString("transaction_id"));
      }
    }
  }

  private static void markPaid(Connection c, PaidTrade trade) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "UPDATE orders SET status = 'PAID', transaction_id = ?, paid_at = COALESCE(?, NOW(3)),"
                + " version = version + 1 WHERE tenant_id = ? AND order_id = ? AND status = 'UNPAID'")) {
      ps.setString(1, trade.transactionId());
      DbTime.bind(ps, 2, trade.successTime());
      ps.setString(3, trade.tenantId());
      ps.setString(4, trade.orderId());
      if (ps.executeUpdate() != 1) {
        // The row is locked by this transaction and was UNPAID: a mismatch means an assumption
        // broke.
        throw new IllegalStateException(
            "order " + trade.orderId() + " locked UNPAID did not update");
      }
    }
  }

  private static List<OrderItem> items(Connection c, String tenantId, String orderId)
      throws SQLException {
    List<OrderItem> items = new ArrayList<>();
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT sku_id, quantity FROM order_items WHERE tenant_id = ? AND order_id = ?"
                + " ORDER BY sku_id")) {
      ps.setString(1, tenantId);
      ps.setString(2, orderId);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          items.add(new OrderItem(rs.getString("sku_id"), rs.getInt("quantity")));
        }
      }
    }
    return items;
  }

  /** SELL rows; UNIQUE(order, sku, kind) turns any double sale into a rolled-back error. */
  private static void sellLedger(
      Connection c, String tenantId, String orderId, List<OrderItem> items) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO stock_movements (tenant_id, order_id, sku_id, kind, quantity)"
                + " VALUES (?,?,?,'SELL',?)")) {
      for (OrderItem item : items) {
        ps.setString(1, tenantId);
        ps.setString(2, orderId);
        ps.setString(3, item.skuId());
        ps.setInt(4, item.quantity());
        ps.addBatch();
      }
      ps.executeBatch();
    }
  }

  /** Reserved -> sold, one UPDATE per SKU in SKU order (the lock order every stock writer uses). */
  private static void sellStock(
      Connection c, String tenantId, String orderId, List<OrderItem> items) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "UPDATE stock SET reserved = reserved - ?, sold = sold + ?"
                + " WHERE tenant_id = ? AND sku_id = ? AND reserved >= ?")) {
      for (OrderItem item : items) {
        ps.setInt(1, item.quantity());
        ps.setInt(2, item.quantity());
        ps.setString(3, tenantId);
        ps.setString(4, item.skuId());
        ps.setInt(5, item.quantity());
        if (ps.executeUpdate() != 1) {
          throw new IllegalStateException(
              "selling "
                  + item.quantity()
                  + " of SKU "
                  + item.skuId()
                  + " for order "
                  + orderId
                  + " found less reserved; nothing was paid");
        }
      }
    }
  }

  private static void useCoupon(Connection c, String tenantId, String orderId, String couponId)
      throws SQLException {
    if (couponId == null) {
      return;
    }
    try (PreparedStatement ps =
        c.prepareStatement(
            "UPDATE coupons SET status = 'USED'"
                + " WHERE tenant_id = ? AND coupon_id = ? AND status = 'LOCKED'"
                + " AND locked_by_order = ?")) {
      ps.setString(1, tenantId);
      ps.setString(2, couponId);
      ps.setString(3, orderId);
      if (ps.executeUpdate() != 1) {
        throw new IllegalStateException(
            "coupon " + couponId + " of UNPAID order " + orderId + " is not LOCKED by it");
      }
    }
  }

  /** MySQL's ER_DUP_ENTRY. */
  private static final int DUPLICATE_KEY = 1062;

  /**
   * Inserts the case once; answers whether this call inserted it. The SELECT tells a duplicate
   * apart, and the order row this transaction locked keeps anyone else from inserting the case in
   * between; a plain INSERT then either inserts or fails on the key. No upsert count is read: an
   * upsert that changes nothing counts 1 or 0 depending on Connector/J's useAffectedRows, which an
   * operator's JDBC URL may set.
   */
  private static boolean recordPaidAfterClose(Connection c, PaidTrade trade) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT 1 FROM paid_after_close WHERE tenant_id = ? AND order_id = ?")) {
      ps.setString(1, trade.tenantId());
      ps.setString(2, trade.orderId());
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next()) {
          return false;
        }
      }
    }
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO paid_after_close (order_id, tenant_id, transaction_id, amount_fen,"
                + " detected_by, out_refund_no) VALUES (?,?,?,?,?,?)")) {
      ps.setString(1, trade.orderId());
      ps.setString(2, trade.tenantId());
      ps.setString(3, trade.transactionId());
      ps.setLong(4, trade.amountFen());
      ps.setString(5, trade.source().name());
      ps.setString(
          6,
          PaidAfterCloseRefunds.outRefundNo(
              TradeBindings.outTradeNoOf(c, trade.tenantId(), trade.orderId())));
      ps.executeUpdate();
      return true;
    } catch (SQLIntegrityConstraintViolationException e) {
      if (e.getErrorCode() != DUPLICATE_KEY) {
        throw e;
      }
      // InnoDB rolls back only this statement; the transaction goes on without inserting.
      return false;
    }
  }

  /** The refund step alone, for compensation to retry PENDING cases. */
  public RefundResult retryRefund(String tenantId, String orderId) {
    return refunds.refund(tenantId, orderId);
  }
}
