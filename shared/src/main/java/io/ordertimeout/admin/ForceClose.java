package io.ordertimeout.admin;

import io.ordertimeout.close.CloseResult;
import io.ordertimeout.close.OrderCloser;
import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.Order;
import io.ordertimeout.domain.OrderStatus;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.mysql.OrderStore;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Closes one UNPAID order now, before its deadline, for an operator's reason. It goes through
 * {@link OrderCloser}, the close path of the sweep and the consumer: a prepaid order is closed at
 * WeChat first (and takes the paid path if WeChat says paid), then one transaction releases its
 * stock and coupon. A PAID order is refused; a CLOSED one answers as it is (closing twice is
 * closing once).
 */
public final class ForceClose {
  private final OrderStore orders;
  private final OrderCloser closer;
  private final AdminActions actions;
  private final Metrics metrics;
  private final TradeDisowning disowning;

  public ForceClose(
      OrderStore orders,
      OrderCloser closer,
      AdminActions actions,
      Metrics metrics,
      TradeDisowning disowning) {
    this.orders = orders;
    this.closer = closer;
    this.actions = actions;
    this.metrics = metrics;
    this.disowning = disowning;
  }

  public Map<String, Object> close(
      String tenantId, String orderId, String reason, String operator) {
    requireReason(orderId, reason);
    return closeNow(tenantId, orderId, reason, operator);
  }

  /**
   * As {@link #close}, for an order whose WeChat trade the close path cannot reach (the operator
   * checked in the merchant platform that the trade is not this order's): first disowns the trade
   * ({@link TradeDisowning}), recorded as an admin action of its own, then closes without asking
   * WeChat. 409 TRADE_REACHABLE when the close path can reach the trade: force-close it plainly.
   */
  public Map<String, Object> closeDisowningTrade(
      String tenantId, String orderId, String reason, String operator) {
    requireReason(orderId, reason);
    TradeDisowning.Outcome outcome = disowning.disown(tenantId, orderId);
    switch (outcome) {
      case REACHABLE ->
          throw AdminRefusal.conflict(
              "TRADE_REACHABLE",
              "the WeChat trade of order "
                  + orderId
                  + " is reachable: force-close it without disownTrade, which asks WeChat");
      case NOT_FOUND ->
          throw AdminRefusal.notFound("tenant " + tenantId + " has no order " + orderId);
      case DISOWNED ->
          actions.record(
              "disown-trade", tenantId, orderId, operator, reason, Map.of("outcome", "DISOWNED"));
      case NOT_UNPAID -> {
        // PAID is refused and CLOSED answered as it is, below
      }
    }
    return closeNow(tenantId, orderId, reason, operator);
  }

  private static void requireReason(String orderId, String reason) {
    OrderIds.require(orderId);
    if (reason == null || reason.isBlank()) {
      throw AdminRefusal.badRequest(
          "MISSING_REASON", "a force-close needs the operator's reason (\"reason\")");
    }
    if (reason.length() > AdminActions.MAX_REASON) {
      throw AdminRefusal.badRequest(
          "REASON_TOO_LONG",
          "reason is " + reason.length() + " characters; at most " + AdminActions.MAX_REASON);
    }
  }

  private Map<String, Object> closeNow(
      String tenantId, String orderId, String reason, String operator) {
    Order order =
        orders
            .find(tenantId, orderId)
            .orElseThrow(
                () -> AdminRefusal.notFound("tenant " + tenantId + " has no order " + orderId));
    if (order.status().paid()) {
      throw AdminRefusal.conflict(
          "ORDER_PAID",
          "order "
              + orderId
              + " is "
              + order.status()
              + "; a paid order is never closed (refund it)");
    }
    if (order.status() == OrderStatus.CLOSED) {
      return answer(orderId, "ALREADY_CLOSED", order.closeReason());
    }
    CloseResult result = closer.close(tenantId, List.of(orderId), CloseReason.OPERATOR);
    Map<String, Object> outcome = outcome(orderId, result);
    actions.record("force-close", tenantId, orderId, operator, reason, outcome);
    metrics.count("orders_force_closed", result.closed().size());
    refuseUnlessClosed(orderId, result);
    return outcome;
  }

  private static Map<String, Object> outcome(String orderId, CloseResult result) {
    if (!result.closed().isEmpty()) {
      return answer(orderId, "CLOSED", CloseReason.OPERATOR.name());
    }
    if (!result.paid().isEmpty()) {
      return answer(orderId, "PAID_AT_WECHAT", null);
    }
    if (!result.deferred().isEmpty()) {
      return answer(orderId, "USER_PAYING", null);
    }
    if (!result.alreadyFinal().isEmpty()) {
      return answer(orderId, "ALREADY_FINAL", null);
    }
    return answer(orderId, "FAILED", null);
  }

  /** Anything but a close is the operator's to know about, as a refusal with its reason. */
  private static void refuseUnlessClosed(String orderId, CloseResult result) {
    if (!result.closed().isEmpty() || !result.alreadyFinal().isEmpty()) {
      return;
    }
    if (!result.paid().isEmpty()) {
      throw AdminRefusal.conflict(
          "ORDER_PAID",
          "WeChat reports order " + orderId + " paid; it took the paid path and is not closed");
    }
    if (!result.deferred().isEmpty()) {
      throw AdminRefusal.conflict(
          "USER_PAYING", "the payer of order " + orderId + " is paying at WeChat; try again");
    }
    throw new AdminRefusal(
        AdminRefusal.Kind.UNAVAILABLE,
        "WECHAT_UNAVAILABLE",
        "WeChat gave no definite answer for order " + orderId + "; it stays UNPAID, try again");
  }

  private static Map<String, Object> answer(String orderId, String outcome, String closeReason) {
    Map<String, Object> answer = new LinkedHashMap<>();
    answer.put("orderId", orderId);
    answer.put("outcome", outcome);
    answer.put("closeReason", closeReason);
    return answer;
  }
}
