package io.ordertimeout.payment;

import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.wechat.InvalidNotificationException;
import io.ordertimeout.wechat.PaymentGateway;
import io.ordertimeout.wechat.PaymentNotification;
import io.ordertimeout.wechat.ProviderNotification;
import io.ordertimeout.wechat.TradeState;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The payment-notify use case: verify, refuse replays, apply. Each method either returns (the
 * webhook answers 204) or throws, so success is only ever reported after the commit.
 *
 * <p><b>Replay rule and its order.</b> WeChat re-signs every retry with a fresh timestamp and
 * nonce, so a genuine retry never reuses a nonce; a reused nonce means the very same request came
 * again. That can be an attacker replaying a captured request, or the same delivery arriving twice
 * (a retried HTTP hop, a Lambda retry). We check "already applied" before the nonce: for a payment
 * already applied by this very transaction id, answering success again changes nothing and is what
 * WeChat needs to stop retrying, so those get 204 whatever their nonce. For everything else a
 * reused nonce is refused (409) before any write. The nonce is claimed only after the signature and
 * freshness checks passed (so garbage cannot fill Redis) and forgotten again when applying fails,
 * so an identical redelivery after a database outage is judged afresh instead of refused.
 *
 * <p><b>Trade binding.</b> The notification names a trade (mchid, out_trade_no), not an order: the
 * order is the one the trade is bound to ({@link TradeBindings}), and only if that order is the
 * URL's tenant's. Tenants that share a merchant verify with the same keys and keep separate nonces,
 * so a genuine notification of tenant A's trade replayed to tenant B's URL passes B's signature
 * check; it is refused here as UNKNOWN_ORDER (404) before anything is written, and counted.
 */
public final class NotificationService {
  private static final Logger log = LoggerFactory.getLogger(NotificationService.class);

  private final PaymentGateway gateway;
  private final PaymentService payments;
  private final NonceGuard nonces;
  private final Metrics metrics;

  public NotificationService(
      PaymentGateway gateway, PaymentService payments, NonceGuard nonces, Metrics metrics) {
    this.gateway = gateway;
    this.payments = payments;
    this.nonces = nonces;
    this.metrics = metrics;
  }

  /** What the webhook did with one notification. */
  public enum Result {
    /** Applied now: PAID, or a paid-after-close case recorded and refunded. */
    APPLIED,
    /** The payment was applied before; nothing changed. */
    ALREADY_APPLIED,
    /** Not a payment success (another event type or trade state): acknowledged, nothing done. */
    IGNORED
  }

  /**
   * @throws io.ordertimeout.wechat.InvalidNotificationException bad signature, stale, malformed
   * @throws ReplayedNotificationException a nonce already used by an earlier request
   * @throws PaymentMismatchException unknown order (of the URL's tenant), amount mismatch
   */
  public Result handle(String tenantId, Map<String, String> headers, String body) {
    return apply(tenantId, parse(tenantId, headers, body));
  }

  /**
   * A notification posted to service provider {@code spMchid}'s URL: verified with the provider's
   * keys, then handled as {@link #handle} for the tenant that is the sub-merchant its verified
   * resource names (its sub_mchid); the order is looked up by the trade (sub_mchid, out_trade_no)
   * among that tenant's bindings only.
   *
   * @throws io.ordertimeout.wechat.InvalidNotificationException as {@link #handle}; also a resource
   *     naming another provider or a sub-merchant no tenant is (MERCHANT_MISMATCH)
   */
  public Result handleProvider(String spMchid, Map<String, String> headers, String body) {
    ProviderNotification routed;
    try {
      routed = gateway.parseProviderNotification(spMchid, headers, body);
    } catch (InvalidNotificationException e) {
      if (e.reason() == InvalidNotificationException.Reason.UNKNOWN_TENANT) {
        metrics.count("payment_notifications_unknown_tenant", 1);
        log.warn("payment notification for provider {} that has no sub-merchant here", spMchid);
      }
      throw e;
    }
    return apply(routed.tenantId(), routed.payment());
  }

  private Result apply(String tenantId, PaymentNotification n) {
    if (!"TRANSACTION.SUCCESS".equals(n.eventType()) || n.tradeState() != TradeState.SUCCESS) {
      metrics.count("payment_notifications_ignored", 1);
      log.info("ignoring {} {} for order {}", n.eventType(), n.tradeState(), n.outTradeNo());
      return Result.IGNORED;
    }
    String orderId =
        payments
            .bindings()
            .orderOf(tenantId, n.mchid(), n.outTradeNo())
            .orElseThrow(() -> unbound(tenantId, n));
    PaidTrade trade =
        new PaidTrade(
            tenantId,
            orderId,
            n.transactionId(),
            n.amountTotalFen(),
            n.successTime(),
            PaidTrade.Source.NOTIFY);
    if (payments.alreadySettled(trade)) {
      metrics.count("payment_duplicates", 1);
      return Result.ALREADY_APPLIED;
    }
    if (!nonces.firstUse(tenantId, n.nonce())) {
      metrics.count("payment_notifications_replayed", 1);
      throw new ReplayedNotificationException(n.outTradeNo(), n.nonce());
    }
    return apply(trade, n.nonce());
  }

  private PaymentMismatchException unbound(String tenantId, PaymentNotification n) {
    metrics.count("payment_notifications_unbound", 1);
    log.warn(
        "payment notification {} for trade {}/{} on tenant {}'s URL: the trade is bound to no order"
            + " of that tenant; nothing applied",
        n.transactionId(),
        n.mchid(),
        n.outTradeNo(),
        tenantId);
    return new PaymentMismatchException(
        PaymentMismatchException.Kind.UNKNOWN_ORDER,
        n.outTradeNo(),
        "trade " + n.outTradeNo() + " is bound to no order of tenant " + tenantId);
  }

  /**
   * A URL naming a tenant without keys is answered like a bad signature; operators tell the two
   * apart by this counter and the log line (a merchant whose notify_url names a tenant not in the
   * secret yet, or someone probing tenant ids).
   */
  private PaymentNotification parse(String tenantId, Map<String, String> headers, String body) {
    try {
      return gateway.parseNotification(tenantId, headers, body);
    } catch (InvalidNotificationException e) {
      if (e.reason() == InvalidNotificationException.Reason.UNKNOWN_TENANT) {
        metrics.count("payment_notifications_unknown_tenant", 1);
        log.warn("payment notification for tenant {} that has no merchant keys here", tenantId);
      }
      throw e;
    }
  }

  private Result apply(PaidTrade trade, String nonce) {
    try {
      PaymentOutcome outcome = payments.apply(trade);
      return outcome == PaymentOutcome.ALREADY_PAID ? Result.ALREADY_APPLIED : Result.APPLIED;
    } catch (RuntimeException e) {
      forgetQuietly(trade.tenantId(), nonce, e);
      throw e;
    }
  }

  private void forgetQuietly(String tenantId, String nonce, RuntimeException cause) {
    try {
      nonces.forget(tenantId, nonce);
    } catch (RuntimeException redisDown) {
      cause.addSuppressed(redisDown); // the key expires within 10 minutes anyway
    }
  }
}
