package io.ordertimeout.close;

import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.payment.TradeBinding;
import io.ordertimeout.payment.TradeBindings;
import io.ordertimeout.wechat.PaymentGateway;
import io.ordertimeout.wechat.PaymentRejectedException;
import io.ordertimeout.wechat.PaymentTransientException;
import io.ordertimeout.wechat.TradeState;
import io.ordertimeout.wechat.TradeStatus;
import io.ordertimeout.wechat.WeChatCloseOutcome;
import io.ordertimeout.wechat.WeChatTrade;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Step 2 of the close path (docs/concepts/design.md, the close path) for orders that were prepaid:
 * ask WeChat what happened to the trade, and close it there before the database closes the order.
 *
 * <p>Calls run on a bounded pool (its size is the concurrency limit towards WeChat) and the whole
 * step waits at most {@code stepTimeout}: the SDK's own connect/read timeouts bound each call, and
 * the step timeout bounds a batch of many slow ones. Whatever has not answered by then is FAILED
 * and stays UNPAID for a later pass.
 *
 * <p>Every call names the trade the order's binding records ({@link TradeBindings}), never the bare
 * order id: tenants sharing a merchant may use the same order id, and one's close must not query or
 * close the other's trade. An order whose trade cannot be told apart from another tenant's stays
 * UNPAID (FAILED, counted as close_trade_unreachable) for an operator; compensation flags it.
 *
 * <p>A close-order answer is no proof on its own: a 204 or a 404 is confirmed by a query before the
 * order may close (see closeAtWeChat); RULE_LIMIT, SYSTEM_ERROR and FREQUENCY_LIMITED are transient
 * (FAILED, retried by a later pass), USERPAYING in either spelling defers.
 *
 * <p>A trade in state REFUND was paid and then refunded (by the merchant, by hand): no money stays
 * with the merchant and WeChat accepts no new payment on it, so it is not paid and the order may
 * close (counted as close_refunded_trade; compensation flags the closed order for an operator).
 */
public final class WeChatCloseStep {
  private static final Logger log = LoggerFactory.getLogger(WeChatCloseStep.class);

  /** WeChat's "the payer is entering the password" spellings (trade_state and close error code). */
  private static final Set<String> USER_PAYING = Set.of("USERPAYING", "USER_PAYING");

  private final PaymentGateway gateway;
  private final TradeBindings bindings;
  private final ExecutorService calls;
  private final Duration stepTimeout;
  private final Metrics metrics;

  /**
   * @param gateway null when payments are not configured: prepaid orders then stay UNPAID (FAILED)
   * @param bindings the trade of each order (PaymentService#bindings)
   * @param calls its thread count is the limit of concurrent WeChat calls
   */
  public WeChatCloseStep(
      PaymentGateway gateway,
      TradeBindings bindings,
      ExecutorService calls,
      Duration stepTimeout,
      Metrics metrics) {
    this.gateway = gateway;
    this.bindings = bindings;
    this.calls = calls;
    this.stepTimeout = stepTimeout;
    this.metrics = metrics;
  }

  /** What WeChat's answers mean for one order. */
  enum Verdict {
    /** Not paid and now closed (or never created) at WeChat: the database may close it. */
    CLOSABLE,
    /** WeChat says paid: take the paid path. */
    PAID,
    /** The payer is paying right now: look again shortly, never close. */
    DEFER,
    /** No definite answer: stays UNPAID, retried by a later pass. */
    FAILED
  }

  record Checked(String orderId, String tenantId, Verdict verdict, TradeStatus trade) {}

  /**
   * An order to ask WeChat about.
   *
   * @param prepayId the order's prepay_id when it was classified (null while its prepay had not
   *     stored one): WeChat's verdict holds for that prepay state only
   * @param overdueMillis how long past its deadline the order was when classified, by the database
   *     clock (negative before it: a cancel)
   */
  record Prepaid(String orderId, String tenantId, String prepayId, long overdueMillis) {}

  /** Checks every order concurrently; answers one verdict per order, in the given order. */
  Map<String, Checked> check(List<Prepaid> orders) {
    Map<String, Checked> out = new LinkedHashMap<>();
    if (gateway == null) {
      log.error("{} prepaid orders due but no payment gateway is configured", orders.size());
      orders.forEach(o -> out.put(o.orderId(), failed(o)));
      return out;
    }
    Map<String, Map<String, TradeBinding>> bound;
    try {
      bound = bindingsOf(orders);
    } catch (RuntimeException e) {
      log.warn("trade bindings of {} prepaid orders not read: {}", orders.size(), e.toString());
      orders.forEach(o -> out.put(o.orderId(), failed(o)));
      return out;
    }
    List<Future<Checked>> futures = new ArrayList<>(orders.size());
    orders.forEach(
        o -> {
          TradeBinding binding = bound.get(o.tenantId()).get(o.orderId());
          futures.add(calls.submit(() -> checkOne(o, binding)));
        });
    long deadline = System.nanoTime() + stepTimeout.toNanos();
    for (int i = 0; i < orders.size(); i++) {
      out.put(orders.get(i).orderId(), await(futures.get(i), orders.get(i), deadline));
    }
    return out;
  }

  /** One read per tenant (the closer's batches are of one tenant). */
  private Map<String, Map<String, TradeBinding>> bindingsOf(List<Prepaid> orders) {
    Map<String, List<String>> idsByTenant = new HashMap<>();
    orders.forEach(
        o -> idsByTenant.computeIfAbsent(o.tenantId(), t -> new ArrayList<>()).add(o.orderId()));
    Map<String, Map<String, TradeBinding>> bound = new HashMap<>();
    idsByTenant.forEach((tenant, ids) -> bound.put(tenant, bindings.resolve(tenant, ids)));
    return bound;
  }

  private Checked await(Future<Checked> future, Prepaid order, long deadlineNanos) {
    try {
      return future.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (TimeoutException | CancellationException | ExecutionException e) {
      future.cancel(true);
      log.warn(
          "WeChat check of order {} gave no answer in time: {}", order.orderId(), e.toString());
      return failed(order);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      future.cancel(true);
      return failed(order);
    }
  }

  /** Query first (cheap, tells "paid" apart); close only a trade that is not paid. */
  private Checked checkOne(Prepaid order, TradeBinding binding) {
    if (!binding.reachable()) {
      metrics.count("close_trade_unreachable", 1);
      log.error(
          "order {}/{} not closed: its WeChat trade {} is unreachable ({}); needs an operator",
          order.tenantId(),
          order.orderId(),
          binding.outTradeNo(),
          binding.problem());
      return failed(order);
    }
    try {
      WeChatTrade bound = binding.trade();
      TradeStatus trade = gateway.query(order.tenantId(), bound);
      if (trade.state().paid()) {
        return checked(order, Verdict.PAID, trade);
      }
      if (trade.state() == TradeState.REFUND) {
        return refunded(order, trade);
      }
      if (trade.state() == TradeState.USERPAYING) {
        return checked(order, Verdict.DEFER, trade);
      }
      return closeAtWeChat(order, bound, trade);
    } catch (PaymentTransientException e) {
      if (USER_PAYING.contains(e.code())) {
        return checked(order, Verdict.DEFER, null);
      }
      log.warn("WeChat check of order {} failed transiently: {}", order.orderId(), e.getMessage());
      return failed(order);
    } catch (PaymentRejectedException | IllegalArgumentException | IllegalStateException e) {
      log.error("WeChat check of order {} refused: {}", order.orderId(), e.getMessage());
      return failed(order);
    }
  }

  /**
   * Closes the trade at WeChat. ORDER_CLOSED proves the trade closed and ORDERPAID is re-queried
   * for its transaction; a 204 or a 404 proves nothing (a 204 has been seen for an out_trade_no
   * WeChat did not know), so a query confirms them: the order may close only once it shows the
   * trade not payable ({@link #confirm}), and takes the paid path if it shows SUCCESS.
   */
  private Checked closeAtWeChat(Prepaid order, WeChatTrade bound, TradeStatus trade) {
    WeChatCloseOutcome closed = gateway.close(order.tenantId(), bound);
    return switch (closed) {
      case ALREADY_CLOSED -> checked(order, Verdict.CLOSABLE, trade);
      case ALREADY_PAID -> paidDuringClose(order, gateway.query(order.tenantId(), bound));
      case CLOSED, NOT_FOUND -> confirm(order, closed, gateway.query(order.tenantId(), bound));
    };
  }

  /** Paid between our query and our close: the re-query carries the transaction id. */
  private Checked paidDuringClose(Prepaid order, TradeStatus paid) {
    if (paid.state().paid()) {
      return checked(order, Verdict.PAID, paid);
    }
    return paid.state() == TradeState.REFUND ? refunded(order, paid) : failed(order);
  }

  /**
   * WeChat's state after a close it answered 204 or 404. Not payable (CLOSED, NOTPAY, PAYERROR,
   * REVOKED): the order may close. Unknown to WeChat: only if the order never stored a prepay_id,
   * since a trade that answered a prepay cannot have vanished; otherwise it stays UNPAID and is
   * counted (close_unconfirmed) and logged for an operator.
   */
  private Checked confirm(Prepaid order, WeChatCloseOutcome closed, TradeStatus after) {
    TradeState state = after.state();
    if (state.paid()) {
      return checked(order, Verdict.PAID, after);
    }
    if (state == TradeState.REFUND) {
      return refunded(order, after);
    }
    if (state == TradeState.USERPAYING) {
      return checked(order, Verdict.DEFER, after);
    }
    if (state != TradeState.NOT_FOUND || order.prepayId() == null) {
      return checked(order, Verdict.CLOSABLE, after);
    }
    metrics.count("close_unconfirmed", 1);
    log.error(
        "order {}/{} not closed: WeChat answered its close of trade {} with {} but a query finds"
            + " no trade, though the order stored prepay_id {}; needs an operator",
        order.tenantId(),
        order.orderId(),
        after.outTradeNo(),
        closed == WeChatCloseOutcome.CLOSED ? "204" : "404 ORDER_NOT_EXIST",
        order.prepayId());
    return failed(order);
  }

  /** Paid and refunded: nothing to close at WeChat, nothing to sell; the order may close. */
  private Checked refunded(Prepaid order, TradeStatus trade) {
    metrics.count("close_refunded_trade", 1);
    log.warn(
        "order {}/{}: WeChat trade {} was refunded ({}); closing the order unpaid",
        order.tenantId(),
        order.orderId(),
        trade.outTradeNo(),
        trade.transactionId());
    return checked(order, Verdict.CLOSABLE, trade);
  }

  private Checked checked(Prepaid order, Verdict verdict, TradeStatus trade) {
    return new Checked(order.orderId(), order.tenantId(), verdict, trade);
  }

  private Checked failed(Prepaid order) {
    metrics.count("close_wechat_failures", 1);
    return new Checked(order.orderId(), order.tenantId(), Verdict.FAILED, null);
  }
}
