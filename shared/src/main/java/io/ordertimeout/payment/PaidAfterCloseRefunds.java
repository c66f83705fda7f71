package io.ordertimeout.payment;

import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.mysql.Tx;
import io.ordertimeout.wechat.PaymentGateway;
import io.ordertimeout.wechat.PaymentRejectedException;
import io.ordertimeout.wechat.PaymentTransientException;
import io.ordertimeout.wechat.RefundResult;
import io.ordertimeout.wechat.RefundStatus;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Refunds a recorded paid-after-close case through WeChat's refund API, on the trade the order's
 * binding names. The out_refund_no is derived from the bound out_trade_no (unique per merchant, as
 * out_refund_no must be), so any number of retries (duplicate notifications, compensation) name one
 * refund at WeChat, which answers a repeated out_refund_no with the refund it has. The refund is
 * tracked in {@link Refunds} to WeChat's final word.
 */
final class PaidAfterCloseRefunds {
  private static final Logger log = LoggerFactory.getLogger(PaidAfterCloseRefunds.class);

  /** WeChat shows the reason to the payer (at most 80 characters). */
  private static final String REASON = "订单已超时关闭，款项原路退回";

  private final Tx tx;
  private final PaymentGateway gateway;
  private final Metrics metrics;
  private final TradeBindings bindings;
  private final Refunds refunds;

  PaidAfterCloseRefunds(
      Tx tx, PaymentGateway gateway, Metrics metrics, TradeBindings bindings, Refunds refunds) {
    this.tx = tx;
    this.gateway = gateway;
    this.metrics = metrics;
    this.bindings = bindings;
    this.refunds = refunds;
  }

  /** out_trade_no is at most 32 characters; "-pac" keeps it within out_refund_no's 64. */
  static String outRefundNo(String outTradeNo) {
    return outTradeNo + "-pac";
  }

  /** PROCESSING and SUCCESS: WeChat holds the refund; asking again would change nothing. */
  static boolean settled(String refundStatus) {
    return "PROCESSING".equals(refundStatus) || "SUCCESS".equals(refundStatus);
  }

  private record Case(String tenantId, long amountFen, String outRefundNo, String status) {}

  /**
   * Requests the refund unless WeChat already holds it. A transient failure is recorded and
   * rethrown (the caller's retry tries again); a rejection is recorded, counted and left for a
   * human, since repeating the same request cannot succeed.
   *
   * @return WeChat's answer; null when the refund was settled before, or could not be requested
   */
  RefundResult refund(String tenantId, String orderId) {
    Case pac =
        tx.read(
            "load paid-after-close " + tenantId + "/" + orderId, c -> load(c, tenantId, orderId));
    if (pac == null || settled(pac.status())) {
      return null;
    }
    if (gateway == null) {
      record(tenantId, orderId, null, "no payment gateway configured");
      metrics.count("paid_after_close_refund_failures", 1);
      return null;
    }
    TradeBinding binding;
    try {
      binding = bindings.resolve(tenantId, orderId);
    } catch (IllegalArgumentException e) {
      record(tenantId, orderId, null, e.getMessage());
      metrics.count("paid_after_close_refund_rejected", 1);
      return null;
    }
    if (!binding.reachable()) {
      record(tenantId, orderId, null, "WeChat trade unreachable: " + binding.problem());
      metrics.count("paid_after_close_refund_rejected", 1);
      log.error("refund of paid-after-close order {} needs a human: {}", orderId, binding);
      return null;
    }
    try {
      // tracked in refunds (written before the call); its status reaches paid_after_close there
      RefundResult result =
          refunds.request(
              new Refunds.Request(
                  pac.tenantId(),
                  orderId,
                  binding.trade(),
                  pac.outRefundNo(),
                  pac.amountFen(),
                  REASON,
                  Refunds.Purpose.PAID_AFTER_CLOSE));
      record(tenantId, orderId, result, null);
      metrics.count("paid_after_close_refunds", 1);
      return result;
    } catch (PaymentTransientException e) {
      record(tenantId, orderId, null, e.getMessage());
      metrics.count("paid_after_close_refund_failures", 1);
      throw e;
    } catch (RefundSpacingException e) {
      record(tenantId, orderId, null, e.getMessage());
      return null; // PENDING: compensation sends it once the minute passed
    } catch (PaymentRejectedException e) {
      record(tenantId, orderId, null, e.getMessage());
      metrics.count("paid_after_close_refund_rejected", 1);
      log.error("refund of paid-after-close order {} rejected; needs a human: {}", orderId, e);
      return null;
    }
  }

  private static Case load(Connection c, String tenantId, String orderId) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT tenant_id, amount_fen, out_refund_no, refund_status FROM paid_after_close"
                + " WHERE tenant_id = ? AND order_id = ?")) {
      ps.setString(1, tenantId);
      ps.setString(2, orderId);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next()
            ? new Case(
                rs.getString("tenant_id"),
                rs.getLong("amount_fen"),
                rs.getString("out_refund_no"),
                rs.getString("refund_status"))
            : null;
      }
    }
  }

  private void record(String tenantId, String orderId, RefundResult result, String error) {
    String status =
        result == null || result.status() == RefundStatus.NOT_FOUND ? null : result.status().name();
    tx.inTransaction(
        "record refund of paid-after-close " + orderId,
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement(
                  "UPDATE paid_after_close SET refund_attempts = refund_attempts + 1,"
                      // a notification may have settled it since the answer: never back
                      + " refund_status = IF(refund_status IN ('SUCCESS', 'CLOSED'),"
                      + " refund_status, COALESCE(?, refund_status)),"
                      + " refund_id = COALESCE(?, refund_id), last_error = ?"
                      + " WHERE tenant_id = ? AND order_id = ?")) {
            ps.setString(1, status);
            ps.setString(2, result == null ? null : result.refundId());
            ps.setString(3, error == null ? null : truncate(error));
            ps.setString(4, tenantId);
            ps.setString(5, orderId);
            return ps.executeUpdate();
          }
        });
  }

  private static String truncate(String s) {
    return s.length() <= 512 ? s : s.substring(0, 512);
  }
}
