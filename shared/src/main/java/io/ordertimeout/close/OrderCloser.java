package io.ordertimeout.close;

import io.ordertimeout.close.WeChatCloseStep.Checked;
import io.ordertimeout.close.WeChatCloseStep.Prepaid;
import io.ordertimeout.db.Tx;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.order.CloseReason;
import io.ordertimeout.order.OrderItem;
import io.ordertimeout.order.OrderStore;
import io.ordertimeout.pay.PaidTrade;
import io.ordertimeout.pay.PaymentService;
import io.ordertimeout.payment.PaymentTransientException;
import io.ordertimeout.redis.TimeSource;
import io.ordertimeout.redis.TimerIndex;
import io.ordertimeout.stream.OrderEvents;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The close use case (DESIGN.md section 5), shared by the sweep, the stream consumer and
 * compensation.
 *
 * <p>One MySQL transaction per batch: lock the order rows, conditional UPDATE to CLOSED
 * (re-checking {@code expire_at <= NOW(3)} for timeouts), RELEASE ledger rows, one stock UPDATE per
 * SKU for the whole batch (a hot SKU is touched once per batch, not once per order), coupons
 * unlocked. Only after the commit are the timers acknowledged. A failure anywhere leaves the orders
 * UNPAID and their timers in place, so the claim lease, the stream or compensation brings them
 * back.
 *
 * <p>Orders that were prepaid at WeChat are left out of that transaction: {@link WeChatCloseStep}
 * asks WeChat about them first (concurrently, bounded), and only those WeChat closed go through a
 * second transaction of the same kind. Orders never prepaid make no WeChat call at all.
 */
public final class OrderCloser {
  private static final Logger log = LoggerFactory.getLogger(OrderCloser.class);

  /**
   * A payer entering the password at the deadline finishes within seconds or gives up; looking
   * again after 5 s catches either outcome soon without polling WeChat in a loop.
   */
  static final Duration USER_PAYING_RETRY = Duration.ofSeconds(5);

  private final Tx tx;
  private final TimerIndex timers;
  private final TimeSource time;
  private final Metrics metrics;
  private final WeChatCloseStep weChat;
  private final PaymentService payments;
  private final OrderEvents events;

  public OrderCloser(
      Tx tx,
      TimerIndex timers,
      TimeSource time,
      Metrics metrics,
      WeChatCloseStep weChat,
      PaymentService payments,
      OrderEvents events) {
    this.tx = tx;
    this.timers = timers;
    this.time = time;
    this.metrics = metrics;
    this.weChat = weChat;
    this.payments = payments;
    this.events = events;
  }

  /**
   * Closes the UNPAID orders among {@code orderIds}; for TIMEOUT only those whose deadline has
   * passed.
   */
  public CloseResult close(Collection<String> orderIds, CloseReason reason) {
    List<String> ids = new ArrayList<>(new TreeSet<>(orderIds));
    if (ids.isEmpty()) {
      return CloseResult.empty();
    }
    List<Prepaid> prepaid = new ArrayList<>();
    CloseResult result = closeBatch(ids, reason, Set.of(), prepaid);
    return prepaid.isEmpty() ? result : result.plus(closePrepaid(prepaid, reason));
  }

  /**
   * One transaction over {@code ids}; prepaid orders not in {@code clearedAtWeChat} are left UNPAID
   * and reported in {@code prepaidOut}.
   */
  private CloseResult closeBatch(
      List<String> ids, CloseReason reason, Set<String> clearedAtWeChat, List<Prepaid> prepaidOut) {
    CloseResult result =
        tx.inTransaction(
            "close " + ids.size() + " orders (" + reason + ", first " + ids.get(0) + ")",
            c -> closeInTransaction(c, ids, reason, clearedAtWeChat, prepaidOut));
    afterCommit(result, reason);
    return result;
  }

  /** Step 2 for prepaid orders: WeChat's verdicts, then the database close of the closable ones. */
  private CloseResult closePrepaid(List<Prepaid> prepaid, CloseReason reason) {
    List<String> closable = new ArrayList<>();
    List<String> paid = new ArrayList<>();
    List<String> deferred = new ArrayList<>();
    List<String> failed = new ArrayList<>();
    for (Checked checked : weChat.check(prepaid).values()) {
      switch (checked.verdict()) {
        case CLOSABLE -> closable.add(checked.orderId());
        case PAID -> (takePaidPath(checked) ? paid : failed).add(checked.orderId());
        case DEFER -> deferred.add(checked.orderId());
        case FAILED -> failed.add(checked.orderId());
      }
    }
    defer(deferred);
    metrics.count("close_paid_at_wechat", paid.size());
    metrics.count("close_deferred_user_paying", deferred.size());
    CloseResult weChatOutcome =
        new CloseResult(List.of(), List.of(), Map.of(), List.of(), paid, deferred, failed);
    if (closable.isEmpty()) {
      return weChatOutcome;
    }
    return closeBatch(closable, reason, Set.copyOf(closable), new ArrayList<>())
        .plus(weChatOutcome);
  }

  private boolean takePaidPath(Checked checked) {
    try {
      payments.apply(
          new PaidTrade(
              checked.tenantId(),
              checked.orderId(),
              checked.trade().transactionId(),
              checked.trade().amountFen() == null ? -1 : checked.trade().amountFen(),
              checked.trade().successTime(),
              PaidTrade.Source.CLOSE));
      return true;
    } catch (PaymentTransientException e) {
      // Recorded as paid-after-close; only its refund waits for a retry.
      return true;
    } catch (RuntimeException e) {
      metrics.count("close_paid_path_failures", 1);
      log.error("order {} is paid at WeChat but the paid path failed: {}", checked.orderId(), e);
      return false;
    }
  }

  private void defer(List<String> deferred) {
    if (deferred.isEmpty()) {
      return;
    }
    Map<String, Long> at = new HashMap<>();
    long retryAt = time.nowMillis() + USER_PAYING_RETRY.toMillis();
    deferred.forEach(id -> at.put(id, retryAt));
    timers.scheduleAll(at);
  }

  private void afterCommit(CloseResult result, CloseReason reason) {
    List<String> done = new ArrayList<>(result.alreadyFinal());
    result.closed().forEach(closed -> done.add(closed.orderId()));
    done.addAll(result.unknown());
    if (!done.isEmpty()) {
      timers.remove(done);
    }
    if (!result.notDue().isEmpty()) {
      // Move the timer to the deadline as the database sees it, in the claimer's clock: a Redis
      // clock that
      // runs ahead of MySQL's then costs one early claim per order, not a busy loop.
      long now = time.nowMillis();
      result.notDue().forEach((id, dueIn) -> timers.schedule(id, now + dueIn + 1));
    }
    metrics.count(
        reason == CloseReason.TIMEOUT ? "orders_closed_timeout" : "orders_closed_cancel",
        result.closed().size());
    metrics.count("close_not_due", result.notDue().size());
    metrics.count("close_unknown_orders", result.unknown().size());
    if (reason == CloseReason.TIMEOUT) {
      result.closed().forEach(closed -> metrics.recordMillis("close_lag_ms", closed.lagMillis()));
    }
    // After the commit and never throwing: a lost `closed` event loses no state.
    events.closed(result.closed(), reason);
  }

  private CloseResult closeInTransaction(
      Connection c,
      List<String> ids,
      CloseReason reason,
      Set<String> clearedAtWeChat,
      List<Prepaid> prepaid)
      throws SQLException {
    Map<String, Long> dueIn = new HashMap<>();
    List<String> eligible = new ArrayList<>();
    List<String> alreadyFinal = new ArrayList<>();
    prepaid.clear(); // Tx retries a deadlocked transaction: start each attempt afresh
    lockAndClassify(c, ids, reason, clearedAtWeChat, eligible, alreadyFinal, dueIn, prepaid);
    Set<String> seen = new java.util.HashSet<>(eligible);
    seen.addAll(alreadyFinal);
    seen.addAll(dueIn.keySet());
    prepaid.forEach(p -> seen.add(p.orderId()));
    List<String> unknown = ids.stream().filter(id -> !seen.contains(id)).toList();
    if (eligible.isEmpty()) {
      return new CloseResult(List.of(), alreadyFinal, dueIn, unknown);
    }
    markClosed(c, eligible, reason);
    Map<String, List<OrderItem>> items = OrderStore.items(c, eligible);
    releaseLedger(c, items);
    unlockCoupons(c, eligible);
    List<CloseResult.ClosedOrder> lags = lags(c, eligible);
    // Stock last, right before the commit: a hot SKU's row lock is then held for one statement
    // and the commit, not for the coupon and lag statements too (bench S2, one SKU, 4 closers).
    releaseStock(c, items, eligible);
    return new CloseResult(lags, alreadyFinal, dueIn, unknown);
  }

  /**
   * Locks the rows (primary-key order, so concurrent closers never deadlock on each other) and
   * sorts them.
   */
  private static void lockAndClassify(
      Connection c,
      List<String> ids,
      CloseReason reason,
      Set<String> clearedAtWeChat,
      List<String> eligible,
      List<String> alreadyFinal,
      Map<String, Long> dueIn,
      List<Prepaid> prepaid)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT order_id, tenant_id, status,"
                + " (prepay_id IS NOT NULL OR prepaid_at IS NOT NULL) AS prepaid,"
                + " TIMESTAMPDIFF(MICROSECOND, NOW(3), expire_at) AS due_in_us FROM orders"
                + " WHERE order_id IN ("
                + OrderStore.placeholders(ids.size())
                + ") ORDER BY order_id FOR UPDATE")) {
      OrderStore.bind(ps, 1, ids);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String id = rs.getString("order_id");
          long dueInUs = rs.getLong("due_in_us");
          if (!"UNPAID".equals(rs.getString("status"))) {
            alreadyFinal.add(id);
          } else if (reason.requiresDeadline() && dueInUs > 0) {
            dueIn.put(id, (dueInUs + 999) / 1_000);
          } else if (rs.getBoolean("prepaid") && !clearedAtWeChat.contains(id)) {
            prepaid.add(new Prepaid(id, rs.getString("tenant_id")));
          } else {
            eligible.add(id);
          }
        }
      }
    }
  }

  private static void markClosed(Connection c, List<String> eligible, CloseReason reason)
      throws SQLException {
    String deadline = reason.requiresDeadline() ? " AND expire_at <= NOW(3)" : "";
    try (PreparedStatement ps =
        c.prepareStatement(
            "UPDATE orders SET status = 'CLOSED', closed_at = NOW(3),"
                + " close_reason = ?, version = version + 1 WHERE order_id IN ("
                + OrderStore.placeholders(eligible.size())
                + ") AND status = 'UNPAID'"
                + deadline)) {
      ps.setString(1, reason.name());
      OrderStore.bind(ps, 2, eligible);
      int updated = ps.executeUpdate();
      if (updated != eligible.size()) {
        // The rows are locked by this transaction: a mismatch means the schema or clock broke an
        // assumption.
        throw new IllegalStateException(
            "closing "
                + eligible.size()
                + " locked UNPAID orders updated "
                + updated
                + " rows (first "
                + eligible.get(0)
                + ")");
      }
    }
  }

  /**
   * RELEASE rows; the UNIQUE(order, sku, kind) key turns any double release into a rolled-back
   * error.
   */
  private static void releaseLedger(Connection c, Map<String, List<OrderItem>> items)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO stock_movements (order_id, sku_id, kind, quantity) VALUES (?,?,'RELEASE',?)")) {
      for (Map.Entry<String, List<OrderItem>> order : items.entrySet()) {
        for (OrderItem item : order.getValue()) {
          ps.setString(1, order.getKey());
          ps.setString(2, item.skuId());
          ps.setInt(3, item.quantity());
          ps.addBatch();
        }
      }
      ps.executeBatch();
    }
  }

  /**
   * One UPDATE per SKU for the whole batch, in SKU order (the lock order every writer of stock
   * uses).
   */
  private void releaseStock(Connection c, Map<String, List<OrderItem>> items, List<String> eligible)
      throws SQLException {
    Map<String, Long> perSku = new TreeMap<>();
    items
        .values()
        .forEach(
            list -> list.forEach(i -> perSku.merge(i.skuId(), (long) i.quantity(), Long::sum)));
    try (PreparedStatement ps =
        c.prepareStatement(
            "UPDATE stock SET available = available + ?,"
                + " reserved = reserved - ? WHERE sku_id = ? AND reserved >= ?")) {
      for (Map.Entry<String, Long> sku : perSku.entrySet()) {
        ps.setLong(1, sku.getValue());
        ps.setLong(2, sku.getValue());
        ps.setString(3, sku.getKey());
        ps.setLong(4, sku.getValue());
        ps.addBatch();
      }
      int[] counts = ps.executeBatch();
      List<String> skus = new ArrayList<>(perSku.keySet());
      for (int i = 0; i < counts.length; i++) {
        if (counts[i] == 0) {
          metrics.count("stock_release_failures", 1);
          throw new IllegalStateException(
              "releasing "
                  + perSku.get(skus.get(i))
                  + " of SKU "
                  + skus.get(i)
                  + " for "
                  + eligible.size()
                  + " orders found less reserved or no stock row; nothing was closed");
        }
      }
    }
  }

  private static void unlockCoupons(Connection c, List<String> orderIds) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "UPDATE coupons SET status = 'AVAILABLE',"
                + " locked_by_order = NULL WHERE status = 'LOCKED' AND locked_by_order IN ("
                + OrderStore.placeholders(orderIds.size())
                + ")")) {
      OrderStore.bind(ps, 1, orderIds);
      ps.executeUpdate();
    }
  }

  private static List<CloseResult.ClosedOrder> lags(Connection c, List<String> orderIds)
      throws SQLException {
    List<CloseResult.ClosedOrder> closed = new ArrayList<>(orderIds.size());
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT order_id,"
                + " TIMESTAMPDIFF(MICROSECOND, expire_at, closed_at) AS lag_us FROM orders WHERE order_id IN ("
                + OrderStore.placeholders(orderIds.size())
                + ")")) {
      OrderStore.bind(ps, 1, orderIds);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          closed.add(
              new CloseResult.ClosedOrder(rs.getString("order_id"), rs.getLong("lag_us") / 1_000));
        }
      }
    }
    return closed;
  }
}
