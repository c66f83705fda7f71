package io.ordertimeout.payment;

import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.wechat.InvalidNotificationException;
import io.ordertimeout.wechat.PaymentGateway;
import io.ordertimeout.wechat.RefundNotification;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The refund webhook's use case: verify, bind to the tenant's refund, refuse replays, apply.
 * Returns only after the outcome is committed (the webhook then answers 204), else throws.
 *
 * <p><b>Tenancy.</b> The URL names the tenant whose keys verify the notification. The refund it
 * names must then be that tenant's twice over: its trade (mchid, out_trade_no) bound to an order of
 * the tenant ({@link TradeBindings}), and a refund of that very order tracked under the tenant by
 * its out_refund_no. Tenants sharing a merchant verify with the same keys, so a genuine
 * notification of tenant A's refund posted to tenant B's URL passes B's signature check; it is
 * refused as UNKNOWN_ORDER (404) before anything is written, and counted.
 *
 * <p><b>Replays</b> follow the payment webhook's rule ({@link NotificationService}): a refund
 * already in the notified status answers success whatever the nonce (WeChat's retry needs the 2xx);
 * any other request must bring a nonce not seen in the last 10 minutes (409 otherwise).
 *
 * <p>A refund of a bound order that this system never asked for (one made on the merchant platform)
 * is acknowledged and counted, not tracked: refusing it would only make WeChat retry it for a day.
 */
public final class RefundNotificationService {
  private static final Logger log = LoggerFactory.getLogger(RefundNotificationService.class);

  private final PaymentGateway gateway;
  private final TradeBindings bindings;
  private final Refunds refunds;
  private final NonceGuard nonces;
  private final Metrics metrics;

  public RefundNotificationService(
      PaymentGateway gateway,
      TradeBindings bindings,
      Refunds refunds,
      NonceGuard nonces,
      Metrics metrics) {
    this.gateway = gateway;
    this.bindings = bindings;
    this.refunds = refunds;
    this.nonces = nonces;
    this.metrics = metrics;
  }

  /** What the webhook did with one refund notification. */
  public enum Result {
    /** The refund moved to the notified status. */
    APPLIED,
    /** The refund was in that status already, or past it (a late, older word): nothing changed. */
    ALREADY_APPLIED,
    /** A refund of the tenant's order this system did not ask for: acknowledged, not tracked. */
    UNTRACKED
  }

  /**
   * @throws InvalidNotificationException bad signature, stale, malformed, another merchant
   * @throws PaymentMismatchException UNKNOWN_ORDER (the trade is no order of the URL's tenant),
   *     AMOUNT_MISMATCH (another amount than the tracked refund's)
   * @throws ReplayedNotificationException a nonce already used by an earlier request
   */
  public Result handle(String tenantId, Map<String, String> headers, String body) {
    RefundNotification n = parse(tenantId, headers, body);
    String orderId =
        bindings
            .orderOf(tenantId, n.mchid(), n.outTradeNo())
            .orElseThrow(() -> unbound(tenantId, n));
    Refunds.Tracked tracked = refunds.tracked(tenantId, n.outRefundNo());
    if (tracked == null || !tracked.orderId().equals(orderId)) {
      metrics.count("refund_notifications_untracked", 1);
      log.warn(
          "refund notification {} ({}) of order {}/{}: no refund {} tracked for it; acknowledged",
          n.refundId(),
          n.refundStatus(),
          tenantId,
          orderId,
          n.outRefundNo());
      return Result.UNTRACKED;
    }
    if (n.refundFen() != tracked.amountFen()) {
      metrics.count("refund_notifications_mismatched", 1);
      throw new PaymentMismatchException(
          PaymentMismatchException.Kind.AMOUNT_MISMATCH,
          orderId,
          "refund "
              + n.outRefundNo()
              + " notified for "
              + n.refundFen()
              + " fen, tracked for "
              + tracked.amountFen());
    }
    if (!Refunds.canMove(tracked.status(), n.refundStatus())) {
      metrics.count("refund_notification_duplicates", 1);
      return Result.ALREADY_APPLIED;
    }
    if (!nonces.firstUse(tenantId, n.nonce())) {
      metrics.count("refund_notifications_replayed", 1);
      throw new ReplayedNotificationException(n.outRefundNo(), n.nonce());
    }
    return apply(tenantId, n);
  }

  private Result apply(String tenantId, RefundNotification n) {
    try {
      boolean moved =
          refunds.apply(
              tenantId,
              n.outRefundNo(),
              new Refunds.Outcome(
                  n.refundStatus(), n.refundId(), n.successTime(), n.userReceivedAccount()),
              Refunds.Source.NOTIFY);
      metrics.count("refund_notifications_applied", 1);
      return moved ? Result.APPLIED : Result.ALREADY_APPLIED;
    } catch (RuntimeException e) {
      try {
        nonces.forget(tenantId, n.nonce());
      } catch (RuntimeException redisDown) {
        e.addSuppressed(redisDown); // the key expires within 10 minutes anyway
      }
      throw e;
    }
  }

  private PaymentMismatchException unbound(String tenantId, RefundNotification n) {
    metrics.count("refund_notifications_unbound", 1);
    log.warn(
        "refund notification {} for trade {}/{} on tenant {}'s URL: the trade is bound to no order"
            + " of that tenant; nothing applied",
        n.outRefundNo(),
        n.mchid(),
        n.outTradeNo(),
        tenantId);
    return new PaymentMismatchException(
        PaymentMismatchException.Kind.UNKNOWN_ORDER,
        n.outTradeNo(),
        "trade " + n.outTradeNo() + " is bound to no order of tenant " + tenantId);
  }

  private RefundNotification parse(String tenantId, Map<String, String> headers, String body) {
    try {
      return gateway.parseRefundNotification(tenantId, headers, body);
    } catch (InvalidNotificationException e) {
      if (e.reason() == InvalidNotificationException.Reason.UNKNOWN_TENANT) {
        metrics.count("refund_notifications_unknown_tenant", 1);
        log.warn("refund notification for tenant {} that has no merchant keys here", tenantId);
      }
      throw e;
    }
  }
}
