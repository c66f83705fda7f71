package io.ordertimeout.payment;

import io.ordertimeout.domain.Order;
import io.ordertimeout.domain.OrderRejected;
import io.ordertimeout.domain.OrderStatus;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.mysql.OrderStore;
import io.ordertimeout.mysql.Tx;
import io.ordertimeout.wechat.MiniProgramPayment;
import io.ordertimeout.wechat.PaymentGateway;
import io.ordertimeout.wechat.PaymentRejectedException;
import io.ordertimeout.wechat.PaymentTransientException;
import io.ordertimeout.wechat.PrepayCommand;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * JSAPI prepay for an UNPAID order before its deadline.
 *
 * <p>Three steps, none holding a row lock across the WeChat call: (1) lock the order's row and, if
 * it is UNPAID and {@code expire_at > NOW(3)}, mark it prepaid (prepaid_at); the closer locks the
 * same row, so either it sees the mark and asks WeChat before closing, or it closed the order first
 * and the mark is refused. (2) Prepay at WeChat with time_expire = the order's deadline, so WeChat
 * itself refuses payment once the order is due. (3) Store the prepay_id, again conditional on
 * UNPAID. A repeated prepay sends the same parameters, WeChat answers the same prepay_id, and the
 * SDK signs fresh payment parameters for it.
 *
 * <p>Payment parameters leave this class only after step 3 committed, and the closer closes a
 * prepaid order only while its prepay_id is the one it asked WeChat about (OrderCloser). So a trade
 * created while a cancel or a timeout close was under way, after the closer found no trade at
 * WeChat, is either stored here first (the closer then closes it at WeChat before closing the
 * order) or refused here (the order is CLOSED; the trade is closed and no payer ever got it). That
 * holds for timeouts too, where WeChat judges time_expire by its own clock, which may run behind
 * the database's.
 *
 * <p>Step 1 also binds the order to its WeChat trade ({@link TradeBindings}): the out_trade_no the
 * prepay sends is the binding's, never assumed to be the order id. When WeChat refuses the prepay
 * for good, the prepaid_at this call set is taken back, so the close path does not ask WeChat about
 * a trade that was never created for this order.
 *
 * <p>Over 300 lines: the three steps, the binding in step 1 and the undo of step 1 after a refusal
 * are one protocol with the close path (its row-lock and prepay_id rules); kept together so the
 * rules read in one place.
 */
public final class PrepayService {
  private static final Logger log = LoggerFactory.getLogger(PrepayService.class);

  /**
   * WeChat answers these when the trade cannot be (re)prepaid; the order is not payable as asked.
   */
  private static final Set<String> CONFLICT_CODES =
      Set.of("ORDERPAID", "ORDER_PAID", "ORDER_CLOSED", "ORDERCLOSED", "OUT_TRADE_NO_USED");

  private final Tx tx;
  private final PaymentGateway gateway;
  private final Metrics metrics;
  private final TradeBindings bindings;

  /**
   * @param gateway null when payments are not configured: every prepay answers 503
   */
  public PrepayService(Tx tx, PaymentGateway gateway, Metrics metrics) {
    this.tx = tx;
    this.gateway = gateway;
    this.metrics = metrics;
    this.bindings = new TradeBindings(tx, gateway);
  }

  /** What step 1 found and did. */
  private record Marked(Order order, TradeBinding binding, boolean markedNow) {}

  /**
   * @param description null names the order ("Order <id>")
   * @throws OrderRejected NOT_FOUND, ORDER_NOT_UNPAID, ORDER_EXPIRED; PAYMENTS_DISABLED and
   *     WECHAT_*
   */
  public MiniProgramPayment prepay(
      String tenantId, String orderId, String openId, String description) {
    if (gateway == null) {
      // an unknown order (or another tenant's) is 404 here too, as where payments are on
      if (new OrderStore(tx).find(tenantId, orderId).isEmpty()) {
        throw notFound(orderId);
      }
      throw new OrderRejected(
          OrderRejected.Code.PAYMENTS_DISABLED, "WeChat Pay is not configured here");
    }
    String mchid = merchantOf(tenantId);
    Marked marked =
        tx.inTransaction(
            "mark order " + tenantId + "/" + orderId + " prepaid",
            c -> markPrepaid(c, tenantId, orderId, mchid));
    Order order = marked.order();
    PrepayCommand command =
        new PrepayCommand(
            marked.binding().trade(),
            description == null ? "Order " + orderId : description,
            order.amountFen(),
            openId,
            order.expireAt());
    MiniProgramPayment payment;
    try {
      payment = callWeChat(order, command);
    } catch (OrderRejected refused) {
      if (marked.markedNow() && refused.code() != OrderRejected.Code.WECHAT_UNAVAILABLE) {
        unmarkPrepaid(order);
      }
      throw refused;
    }
    storePrepayId(order, marked.binding(), payment.prepayId());
    metrics.count("orders_prepaid", 1);
    return payment;
  }

  /**
   * Decides on the locked row, never on the UPDATE's count: a repeated prepay leaves prepaid_at as
   * it was, and the count of an UPDATE that changes nothing is 1 or 0 depending on Connector/J's
   * useAffectedRows, which an operator's JDBC URL may set.
   */
  private Marked markPrepaid(Connection c, String tenantId, String orderId, String mchid)
      throws SQLException {
    boolean payable =
        lockedRowSays(
            c,
            "SELECT status = 'UNPAID' AND expire_at > NOW(3) FROM orders"
                + " WHERE tenant_id = ? AND order_id = ? FOR UPDATE",
            tenantId,
            orderId);
    boolean markedNow = false;
    TradeBinding binding = null;
    if (payable) {
      binding = bindings.bind(c, tenantId, orderId, mchid);
      if (!binding.reachable()) {
        // thrown in the transaction: nothing of this call stays
        metrics.count("prepay_trade_unreachable", 1);
        log.error(
            "prepay of order {}/{} refused: its WeChat trade {} is unreachable ({})",
            tenantId,
            orderId,
            binding.outTradeNo(),
            binding.problem());
        throw new OrderRejected(
            OrderRejected.Code.PREPAY_REFUSED,
            "the WeChat trade of order " + orderId + " cannot be used: " + binding.problem());
      }
      markedNow =
          !lockedRowSays(
              c,
              "SELECT prepaid_at IS NOT NULL FROM orders WHERE tenant_id = ? AND order_id = ?",
              tenantId,
              orderId);
      try (PreparedStatement ps =
          c.prepareStatement(
              "UPDATE orders SET prepaid_at = COALESCE(prepaid_at, NOW(3))"
                  + " WHERE tenant_id = ? AND order_id = ?")) {
        ps.setString(1, tenantId);
        ps.setString(2, orderId);
        ps.executeUpdate();
      }
    }
    Order order = OrderStore.find(c, tenantId, orderId).orElseThrow(() -> notFound(orderId));
    if (payable) {
      return new Marked(order, binding, markedNow);
    }
    if (order.status() != OrderStatus.UNPAID) {
      throw new OrderRejected(
          OrderRejected.Code.ORDER_NOT_UNPAID, "order " + orderId + " is " + order.status());
    }
    throw new OrderRejected(
        OrderRejected.Code.ORDER_EXPIRED,
        "order " + orderId + " passed its deadline " + order.expireAt());
  }

  /** The tenant's mchid; a tenant without a merchant account cannot prepay. */
  private String merchantOf(String tenantId) {
    try {
      return gateway.merchantId(tenantId);
    } catch (IllegalArgumentException e) {
      log.error("prepay for tenant {} without a merchant account: {}", tenantId, e.getMessage());
      throw new OrderRejected(
          OrderRejected.Code.WECHAT_REJECTED,
          "no WeChat Pay merchant is configured for the tenant");
    }
  }

  /**
   * WeChat refused the trade for good, so this call created none: the close path must not take the
   * order for prepaid. Only over the mark this call set (an earlier call's trade may exist) and
   * while no prepay_id is stored; a concurrent prepay of the same order that did create a trade
   * stores its prepay_id only while the order is UNPAID, and closes the trade when it is not.
   */
  private void unmarkPrepaid(Order order) {
    try {
      tx.inTransaction(
          "unmark order " + order.tenantId() + "/" + order.orderId() + " prepaid",
          c -> {
            try (PreparedStatement ps =
                c.prepareStatement(
                    "UPDATE orders SET prepaid_at = NULL WHERE tenant_id = ? AND order_id = ?"
                        + " AND status = 'UNPAID' AND prepay_id IS NULL")) {
              ps.setString(1, order.tenantId());
              ps.setString(2, order.orderId());
              return ps.executeUpdate();
            }
          });
    } catch (RuntimeException e) {
      // the close path then asks WeChat about a trade it will not find: NOT_FOUND closes the order
      log.warn("could not unmark refused prepay of order {}: {}", order.orderId(), e.toString());
    }
  }

  private static OrderRejected notFound(String orderId) {
    return new OrderRejected(OrderRejected.Code.NOT_FOUND, "order " + orderId + " does not exist");
  }

  /**
   * Runs {@code sql}, a SELECT ... FOR UPDATE of one order's row and one boolean column, with
   * {@code params} bound in order; false when there is no such order.
   */
  private static boolean lockedRowSays(Connection c, String sql, String... params)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setString(i + 1, params[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && rs.getBoolean(1);
      }
    }
  }

  private MiniProgramPayment callWeChat(Order order, PrepayCommand command) {
    try {
      return gateway.prepay(order.tenantId(), command);
    } catch (PaymentTransientException e) {
      metrics.count("prepay_wechat_failures", 1);
      throw new OrderRejected(
          OrderRejected.Code.WECHAT_UNAVAILABLE, "WeChat Pay did not answer; retry: " + e.code());
    } catch (PaymentRejectedException e) {
      if (CONFLICT_CODES.contains(e.code())) {
        throw new OrderRejected(
            OrderRejected.Code.PREPAY_REFUSED,
            "WeChat Pay refused order " + order.orderId() + ": " + e.code());
      }
      metrics.count("prepay_wechat_rejected", 1);
      log.error("prepay of order {} rejected by WeChat Pay: {}", order.orderId(), e.getMessage());
      throw new OrderRejected(
          OrderRejected.Code.WECHAT_REJECTED, "WeChat Pay rejected the prepay: " + e.code());
    }
  }

  private void storePrepayId(Order order, TradeBinding binding, String prepayId) {
    // A repeated prepay stores the prepay_id already there: decided on the locked row, as above.
    boolean stored =
        tx.inTransaction(
            "store prepay_id of order " + order.orderId(),
            c -> {
              boolean storable =
                  lockedRowSays(
                      c,
                      "SELECT status = 'UNPAID' AND (prepay_id IS NULL OR prepay_id = ?)"
                          + " FROM orders WHERE tenant_id = ? AND order_id = ? FOR UPDATE",
                      prepayId,
                      order.tenantId(),
                      order.orderId());
              if (storable) {
                try (PreparedStatement ps =
                    c.prepareStatement(
                        "UPDATE orders SET prepay_id = ? WHERE tenant_id = ? AND order_id = ?")) {
                  ps.setString(1, prepayId);
                  ps.setString(2, order.tenantId());
                  ps.setString(3, order.orderId());
                  ps.executeUpdate();
                }
              }
              return storable;
            });
    if (!stored) {
      Order now =
          tx.read(
                  "reload order " + order.orderId(),
                  c -> OrderStore.find(c, order.tenantId(), order.orderId()))
              .orElseThrow();
      if (now.status() == OrderStatus.CLOSED) {
        closeQuietly(order, binding);
      }
      throw new OrderRejected(
          OrderRejected.Code.ORDER_NOT_UNPAID,
          "order " + order.orderId() + " became " + now.status() + " meanwhile");
    }
  }

  /**
   * The order closed while WeChat created the trade (a cancel, which needs no deadline): close the
   * trade too, so the payer cannot pay it. Best effort: if this fails, time_expire still ends it
   * and a payment meanwhile becomes a paid-after-close refund.
   */
  private void closeQuietly(Order order, TradeBinding binding) {
    try {
      gateway.close(order.tenantId(), binding.trade());
    } catch (RuntimeException e) {
      log.warn(
          "could not close the WeChat trade of closed order {}: {}", order.orderId(), e.toString());
    }
  }
}
