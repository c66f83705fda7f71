package io.ordertimeout.close;

import io.ordertimeout.close.WeChatCloseStep.Checked;
import io.ordertimeout.close.WeChatCloseStep.Prepaid;
import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.ClosedOrder;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.OrderStatus;
import io.ordertimeout.metrics.MetricNames;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.mysql.OrderStore;
import io.ordertimeout.mysql.Statements;
import io.ordertimeout.mysql.Tx;
import io.ordertimeout.outbox.Outbox;
import io.ordertimeout.payment.PaidTrade;
import io.ordertimeout.payment.PaymentService;
import io.ordertimeout.redis.TimeSource;
import io.ordertimeout.redis.TimerIndex;
import io.ordertimeout.wechat.PaymentTransientException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The close use case (docs/concepts/design.md, the close path), shared by the sweep, the stream
 * consumer and compensation.
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
 *
 * <p>That second transaction closes an order only if its prepay state (prepay_id) is still the one
 * WeChat was asked about. A prepay whose WeChat call was in flight during the WeChat step (the
 * query and close found no trade) may have created the trade and stored its prepay_id since, and
 * its payer may be paying it: closing the order blind would turn that payment into a
 * paid-after-close refund. Such an order is re-classified and goes through the WeChat step again,
 * which closes the new trade first. A prepay that stores its prepay_id after the closing commit
 * finds the order CLOSED and never hands out payment parameters (PrepayService).
 *
 * <p>Row locks follow the one lock order of package {@code io.ordertimeout.mysql}: order rows by
 * id, their RELEASE rows, coupons by id, stock by SKU last.
 *
 * <p>Over 300 lines: the close algorithm of docs/concepts/design.md in one transaction (lock,
 * classify, mark, release ledger, coupons, stock, in the lock order); spreading the steps over
 * classes would hide that order.
 */
public final class OrderCloser {
  private static final Logger log = LoggerFactory.getLogger(OrderCloser.class);

  /**
   * A payer entering the password at the deadline finishes within seconds or gives up; looking
   * again after 5 s catches either outcome soon without polling WeChat in a loop.
   */
  static final Duration USER_PAYING_RETRY = Duration.ofSeconds(5);

  /**
   * Past the USERPAYING limit (OTC_USERPAYING_LIMIT_MS) an order is looked at again only this
   * often: one compensation period (its schedule is rate(5 minutes)), which also queries it on each
   * run.
   */
  static final Duration USER_PAYING_STUCK_RETRY = Duration.ofMinutes(5);

  /** The compensation_flags kind of an order still USERPAYING past the limit. */
  public static final String USER_PAYING_STUCK_FLAG = "USERPAYING_STUCK";

  /**
   * WeChat rounds per call. A prepay_id goes from NULL to a value once and never changes after
   * (PrepayService stores it only over NULL or the same id), so the second round sees the final
   * prepay state; an order still changing after it is left UNPAID (failed) for a later pass rather
   * than looping on WeChat.
   */
  static final int WECHAT_ROUNDS = 2;

  private final Tx tx;
  private final TimerIndex timers;
  private final TimeSource time;
  private final Metrics metrics;
  private final WeChatCloseStep weChat;
  private final PaymentService payments;
  private final Duration userPayingLimit;
  private final TimerAcks acks;

  /**
   * @param userPayingLimit how long past its deadline an order whose payer is paying is looked at
   *     again every {@link #USER_PAYING_RETRY}; past it, it is flagged USERPAYING_STUCK and looked
   *     at every {@link #USER_PAYING_STUCK_RETRY} (OTC_USERPAYING_LIMIT_MS)
   */
  public OrderCloser(
      Tx tx,
      TimerIndex timers,
      TimeSource time,
      Metrics metrics,
      WeChatCloseStep weChat,
      PaymentService payments,
      Duration userPayingLimit) {
    this.tx = tx;
    this.timers = timers;
    this.time = time;
    this.metrics = metrics;
    this.weChat = weChat;
    this.payments = payments;
    this.userPayingLimit = Objects.requireNonNull(userPayingLimit, "userPayingLimit");
    this.acks = (tenantId, ids) -> timers.remove(tenantId, DeadlineKind.PAYMENT_TIMEOUT, ids);
  }

  private OrderCloser(OrderCloser base, TimerAcks acks) {
    this.tx = base.tx;
    this.timers = base.timers;
    this.time = base.time;
    this.metrics = base.metrics;
    this.weChat = base.weChat;
    this.payments = base.payments;
    this.userPayingLimit = base.userPayingLimit;
    this.acks = Objects.requireNonNull(acks, "acks");
  }

  /**
   * This closer acknowledging final orders' timers through {@code acks} instead of removing them
   * itself (the sweep's: they ride on its next claim of their shard).
   */
  public OrderCloser withAcks(TimerAcks acks) {
    return new OrderCloser(this, acks);
  }

  /**
   * Closes the UNPAID orders among {@code orderIds}; for TIMEOUT only those whose deadline has
   * passed.
   */
  public CloseResult close(String tenantId, Collection<String> orderIds, CloseReason reason) {
    List<String> ids = new ArrayList<>(new TreeSet<>(orderIds));
    if (ids.isEmpty()) {
      return CloseResult.empty();
    }
    Pass pass = closeBatch(tenantId, ids, reason, Map.of());
    CloseResult result = pass.result();
    for (int round = 1; !pass.prepaid().isEmpty(); round++) {
      if (round > WECHAT_ROUNDS) {
        return result.plus(stillChanging(pass.prepaid()));
      }
      pass = closePrepaid(tenantId, pass.prepaid(), reason);
      result = result.plus(pass.result());
    }
    return result;
  }

  /**
   * What one closing transaction did, and the prepaid orders it left UNPAID for the WeChat step:
   * those not cleared at WeChat yet, or cleared for another prepay state than they have now.
   */
  private record Pass(CloseResult result, List<Prepaid> prepaid, Set<String> cancelRequested) {}

  /**
   * One transaction over {@code ids}; a prepaid order is closed only if {@code clearedAtWeChat}
   * holds it with the prepay state it still has.
   */
  private Pass closeBatch(
      String tenantId, List<String> ids, CloseReason reason, Map<String, Prepaid> clearedAtWeChat) {
    Pass pass =
        tx.inTransaction(
            "close "
                + ids.size()
                + " orders of tenant "
                + tenantId
                + " ("
                + reason
                + ", first "
                + ids.get(0)
                + ")",
            c -> closeInTransaction(c, tenantId, ids, reason, clearedAtWeChat));
    afterCommit(tenantId, pass.result(), reason, pass.cancelRequested());
    return pass;
  }

  private CloseResult stillChanging(List<Prepaid> prepaid) {
    List<String> ids = prepaid.stream().map(Prepaid::orderId).toList();
    log.warn("prepay state of orders {} kept changing during the close; left UNPAID", ids);
    metrics.count("close_wechat_failures", ids.size());
    return new CloseResult(List.of(), List.of(), Map.of(), List.of(), List.of(), List.of(), ids);
  }

  /**
   * Step 2 for prepaid orders: WeChat's verdicts, then the database close of the closable ones;
   * those whose prepay state changed meanwhile come back in the pass for another round.
   */
  private Pass closePrepaid(String tenantId, List<Prepaid> prepaid, CloseReason reason) {
    Map<String, Prepaid> asked = new HashMap<>();
    prepaid.forEach(p -> asked.put(p.orderId(), p));
    Map<String, Prepaid> closable = new HashMap<>();
    List<String> paid = new ArrayList<>();
    List<String> deferred = new ArrayList<>();
    List<String> failed = new ArrayList<>();
    for (Checked checked : weChat.check(prepaid).values()) {
      switch (checked.verdict()) {
        case CLOSABLE -> closable.put(checked.orderId(), asked.get(checked.orderId()));
        case PAID -> (takePaidPath(checked) ? paid : failed).add(checked.orderId());
        case DEFER -> deferred.add(checked.orderId());
        case FAILED -> failed.add(checked.orderId());
      }
    }
    List<String> stuck = defer(tenantId, deferred.stream().map(asked::get).toList());
    metrics.count("close_paid_at_wechat", paid.size());
    metrics.count("close_deferred_user_paying", deferred.size());
    CloseResult weChatOutcome =
        new CloseResult(List.of(), List.of(), Map.of(), List.of(), paid, deferred, failed, stuck);
    if (closable.isEmpty()) {
      return new Pass(weChatOutcome, List.of(), Set.of());
    }
    Pass pass =
        closeBatch(tenantId, new ArrayList<>(new TreeSet<>(closable.keySet())), reason, closable);
    metrics.count("close_prepay_changed", pass.prepaid().size());
    return new Pass(pass.result().plus(weChatOutcome), pass.prepaid(), pass.cancelRequested());
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

  /**
   * Moves the timers of orders whose payer is paying: 5 s ahead while the order is less than the
   * USERPAYING limit past its deadline, one compensation period ahead past it. A payer still at the
   * password sheet minutes after the deadline has walked away from it (WeChat's sheet times out) or
   * WeChat is stuck: the order holds its stock and coupon until WeChat says NOTPAY or SUCCESS, so
   * it is counted ({@code orders_userpaying_stuck}, alarmed), logged and flagged for an operator,
   * and compensation queries it on each run meanwhile.
   */
  private List<String> defer(String tenantId, List<Prepaid> deferred) {
    if (deferred.isEmpty()) {
      return List.of();
    }
    Map<String, Long> at = new HashMap<>();
    List<Prepaid> stuck = new ArrayList<>();
    long now = time.nowMillis();
    for (Prepaid order : deferred) {
      boolean pastLimit = order.overdueMillis() >= userPayingLimit.toMillis();
      if (pastLimit) {
        stuck.add(order);
      }
      Duration retry = pastLimit ? USER_PAYING_STUCK_RETRY : USER_PAYING_RETRY;
      at.put(order.orderId(), now + retry.toMillis());
    }
    timers.scheduleAll(tenantId, DeadlineKind.PAYMENT_TIMEOUT, at);
    if (!stuck.isEmpty()) {
      flagStuck(tenantId, stuck);
    }
    return stuck.stream().map(Prepaid::orderId).toList();
  }

  private void flagStuck(String tenantId, List<Prepaid> stuck) {
    metrics.count(MetricNames.ORDERS_USERPAYING_STUCK, stuck.size());
    for (Prepaid order : stuck) {
      log.warn(
          "order {}/{} is still USERPAYING at WeChat {} ms past its deadline (limit {} ms): it"
              + " holds its stock and coupon; flagged {}, asked again every {} s. Check the trade"
              + " (./ops admin story {} --wechat); it closes once WeChat says NOTPAY or CLOSED",
          tenantId,
          order.orderId(),
          order.overdueMillis(),
          userPayingLimit.toMillis(),
          USER_PAYING_STUCK_FLAG,
          USER_PAYING_STUCK_RETRY.toSeconds(),
          order.orderId());
    }
    try {
      tx.inTransaction(
          "flag " + stuck.size() + " USERPAYING orders of tenant " + tenantId,
          c -> raiseStuckFlags(c, tenantId, stuck));
    } catch (RuntimeException e) {
      // The timers are moved and the metric counted; the next look flags them again.
      log.error("USERPAYING_STUCK flags of tenant {} not written: {}", tenantId, e.toString());
    }
  }

  /**
   * One compensation_flags row per order (the table of divergences an operator works through):
   * seeing it again counts the sighting and reopens a resolved row; compensation resolves it once
   * the order is no longer UNPAID.
   */
  private int raiseStuckFlags(Connection c, String tenantId, List<Prepaid> stuck)
      throws SQLException {
    String sql =
        "INSERT INTO compensation_flags (kind, tenant_id, subject, evidence) VALUES (?,?,?,?)"
            + " ON DUPLICATE KEY UPDATE evidence = ?, last_seen_at = NOW(3),"
            + " seen_count = seen_count + 1, resolved_at = NULL";
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      Statements.Batch batch = new Statements.Batch(ps, sql);
      for (Prepaid order : stuck) {
        String evidence =
            "{\"wechatState\":\"USERPAYING\",\"overdueMs\":"
                + order.overdueMillis()
                + ",\"limitMs\":"
                + userPayingLimit.toMillis()
                + ",\"retryEveryMs\":"
                + USER_PAYING_STUCK_RETRY.toMillis()
                + "}";
        batch.row(USER_PAYING_STUCK_FLAG, tenantId, order.orderId(), evidence, evidence);
      }
      return batch.execute().length;
    }
  }

  private void afterCommit(
      String tenantId, CloseResult result, CloseReason reason, Set<String> cancelRequested) {
    List<String> done = new ArrayList<>(result.alreadyFinal());
    result.closed().forEach(closed -> done.add(closed.orderId()));
    done.addAll(result.unknown());
    if (!done.isEmpty()) {
      acks.acknowledge(tenantId, done);
    }
    if (!result.notDue().isEmpty()) {
      // Move the timer to the deadline as the database sees it, in the claimer's clock: a Redis
      // clock that
      // runs ahead of MySQL's then costs one early claim per order, not a busy loop.
      long now = time.nowMillis();
      result
          .notDue()
          .forEach(
              (id, dueIn) ->
                  timers.schedule(tenantId, DeadlineKind.PAYMENT_TIMEOUT, id, now + dueIn + 1));
    }
    int cancels =
        (int) result.closed().stream().filter(o -> cancelRequested.contains(o.orderId())).count();
    metrics.count(
        reason == CloseReason.TIMEOUT ? "orders_closed_timeout" : "orders_closed_cancel",
        result.closed().size() - cancels);
    metrics.count("orders_closed_cancel", cancels);
    metrics.count("close_not_due", result.notDue().size());
    metrics.count("close_unknown_orders", result.unknown().size());
    if (reason == CloseReason.TIMEOUT) {
      result.closed().stream()
          .filter(closed -> !cancelRequested.contains(closed.orderId()))
          // undimensioned (CloseLagP99Alarm) and per tenant, bounded (metrics.TenantLabels)
          .forEach(
              closed ->
                  metrics.recordMillis(MetricNames.CLOSE_LAG_MS, tenantId, closed.lagMillis()));
    }
  }

  private Pass closeInTransaction(
      Connection c,
      String tenantId,
      List<String> ids,
      CloseReason reason,
      Map<String, Prepaid> clearedAtWeChat)
      throws SQLException {
    // A fresh classification per attempt: Tx retries a deadlocked transaction from the start.
    Classified found = lockAndClassify(c, tenantId, ids, reason, clearedAtWeChat);
    Set<String> seen = new java.util.HashSet<>(found.eligible);
    seen.addAll(found.alreadyFinal);
    seen.addAll(found.dueIn.keySet());
    found.prepaid.forEach(p -> seen.add(p.orderId()));
    List<String> unknown = ids.stream().filter(id -> !seen.contains(id)).toList();
    List<String> eligible = found.eligible;
    if (eligible.isEmpty()) {
      return new Pass(
          new CloseResult(List.of(), found.alreadyFinal, found.dueIn, unknown),
          found.prepaid,
          Set.of());
    }
    // The lock order (package io.ordertimeout.mysql): the order rows are locked; their RELEASE
    // rows, then coupons by id, then stock by SKU.
    // An order whose user asked to cancel closes as USER_CANCEL even when its deadline came first
    // (the cancel's stream entry was lost and its re-delivery had not come yet): the user's
    // request, not the clock, is why it closed.
    Set<String> cancelled =
        reason == CloseReason.TIMEOUT ? Set.copyOf(found.cancelRequested) : Set.of();
    List<String> timedOut = eligible.stream().filter(id -> !cancelled.contains(id)).toList();
    List<String> userCancelled = eligible.stream().filter(cancelled::contains).toList();
    markClosed(c, tenantId, timedOut, reason, found.lockedAt);
    markClosed(c, tenantId, userCancelled, CloseReason.USER_CANCEL, found.lockedAt);
    Map<String, List<OrderItem>> items = OrderStore.items(c, tenantId, eligible);
    releaseLedger(c, tenantId, items);
    unlockCoupons(c, tenantId, found.couponOwners);
    List<ClosedOrder> lags = found.lags();
    // The `closed` events commit with the close (own rows of the locked orders, before stock).
    Outbox.closed(
        c, tenantId, lags.stream().filter(o -> !cancelled.contains(o.orderId())).toList(), reason);
    Outbox.closed(
        c,
        tenantId,
        lags.stream().filter(o -> cancelled.contains(o.orderId())).toList(),
        CloseReason.USER_CANCEL);
    // Stock last, right before the commit: a hot SKU's row lock is then held for one statement
    // and the commit, not for the coupon statement too (bench S2, one SKU, 4 closers).
    releaseStock(c, tenantId, items, eligible);
    return new Pass(
        new CloseResult(lags, found.alreadyFinal, found.dueIn, unknown), found.prepaid, cancelled);
  }

  /** What the locking read found for each order of a batch. */
  private static final class Classified {
    final List<String> eligible = new ArrayList<>();
    final List<String> alreadyFinal = new ArrayList<>();
    final Map<String, Long> dueIn = new HashMap<>();
    final List<Prepaid> prepaid = new ArrayList<>();

    /** Eligible orders whose user asked to cancel them (orders.cancel_requested_at is set). */
    final Set<String> cancelRequested = new java.util.HashSet<>();

    /** coupon id -> the eligible order that locked it, in coupon id order (the lock order). */
    final Map<String, String> couponOwners = new TreeMap<>();

    /** Each eligible order's deadline, as the locking read found it. */
    final Map<String, LocalDateTime> expireAt = new HashMap<>();

    /**
     * The database's clock at the latest locking read of the batch: the orders' closed_at. Every
     * eligible order was due by its own read's clock, so by this one too (closed_at >= expire_at).
     */
    LocalDateTime lockedAt;

    /** The eligible orders' close lags: closed_at - expire_at of the rows, in whole ms. */
    List<ClosedOrder> lags() {
      List<ClosedOrder> lags = new ArrayList<>(eligible.size());
      for (String id : eligible) {
        long lagUs = ChronoUnit.MICROS.between(expireAt.get(id), lockedAt);
        lags.add(new ClosedOrder(id, lagUs / 1_000));
      }
      return lags;
    }
  }

  /**
   * Locks the rows (primary-key order, so concurrent closers never deadlock on each other) and
   * sorts them. A prepaid order is eligible only when WeChat cleared it for the very prepay_id it
   * has now: the row lock taken here is held to the commit, so no prepay can store a prepay_id
   * between this check and the closing UPDATE.
   */
  private static Classified lockAndClassify(
      Connection c,
      String tenantId,
      List<String> ids,
      CloseReason reason,
      Map<String, Prepaid> clearedAtWeChat)
      throws SQLException {
    Classified found = new Classified();
    String sql =
        "SELECT order_id, status, coupon_id, prepay_id,"
            + " (prepay_id IS NOT NULL OR prepaid_at IS NOT NULL) AS prepaid,"
            + " (cancel_requested_at IS NOT NULL) AS cancel_requested,"
            + " TIMESTAMPDIFF(MICROSECOND, NOW(3), expire_at) AS due_in_us,"
            + " expire_at, NOW(3) AS locked_at FROM orders"
            + " WHERE tenant_id = ? AND order_id IN (%s) ORDER BY order_id FOR UPDATE";
    // IN lists under RDS Proxy's 16 KB (Statements), taken in ascending id order: still one lock
    // order across the parts
    for (List<String> part : Statements.inLists(sql, ids.stream().sorted().toList())) {
      lockPart(c, sql, tenantId, part, reason, clearedAtWeChat, found);
    }
    return found;
  }

  private static void lockPart(
      Connection c,
      String sql,
      String tenantId,
      List<String> ids,
      CloseReason reason,
      Map<String, Prepaid> clearedAtWeChat,
      Classified found)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(String.format(sql, OrderStore.placeholders(ids.size())))) {
      ps.setString(1, tenantId);
      OrderStore.bind(ps, 2, ids);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String id = rs.getString("order_id");
          long dueInUs = rs.getLong("due_in_us");
          LocalDateTime lockedAt = rs.getObject("locked_at", LocalDateTime.class);
          if (found.lockedAt == null || lockedAt.isAfter(found.lockedAt)) {
            found.lockedAt = lockedAt;
          }
          if (OrderStatus.valueOf(rs.getString("status")) != OrderStatus.UNPAID) {
            found.alreadyFinal.add(id);
          } else if (reason.requiresDeadline() && dueInUs > 0) {
            found.dueIn.put(id, (dueInUs + 999) / 1_000);
          } else if (rs.getBoolean("prepaid")
              && !clearedFor(clearedAtWeChat.get(id), rs.getString("prepay_id"))) {
            found.prepaid.add(
                new Prepaid(id, tenantId, rs.getString("prepay_id"), -dueInUs / 1_000));
          } else {
            found.eligible.add(id);
            found.expireAt.put(id, rs.getObject("expire_at", LocalDateTime.class));
            if (rs.getBoolean("cancel_requested")) {
              found.cancelRequested.add(id);
            }
            String couponId = rs.getString("coupon_id");
            if (couponId != null) {
              found.couponOwners.put(couponId, id);
            }
          }
        }
      }
    }
  }

  /** WeChat cleared this order for the prepay state it has now (null prepay_id included). */
  private static boolean clearedFor(Prepaid cleared, String prepayIdNow) {
    return cleared != null && Objects.equals(cleared.prepayId(), prepayIdNow);
  }

  private static void markClosed(
      Connection c,
      String tenantId,
      List<String> eligible,
      CloseReason reason,
      LocalDateTime closedAt)
      throws SQLException {
    if (eligible.isEmpty()) {
      return;
    }
    String sql =
        "UPDATE orders SET status = 'CLOSED', closed_at = ?, close_reason = ?,"
            + " version = version + 1 WHERE tenant_id = ? AND order_id IN (%s)"
            + " AND status = 'UNPAID'"
            + (reason.requiresDeadline() ? " AND expire_at <= NOW(3)" : "");
    int updated = 0;
    for (List<String> part : Statements.inLists(sql, eligible)) {
      try (PreparedStatement ps =
          c.prepareStatement(String.format(sql, OrderStore.placeholders(part.size())))) {
        ps.setObject(1, closedAt);
        ps.setString(2, reason.name());
        ps.setString(3, tenantId);
        OrderStore.bind(ps, 4, part);
        updated += ps.executeUpdate();
      }
    }
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

  /**
   * RELEASE rows; the UNIQUE(order, sku, kind) key turns any double release into a rolled-back
   * error.
   */
  private static void releaseLedger(
      Connection c, String tenantId, Map<String, List<OrderItem>> items) throws SQLException {
    Statements.Rows rows =
        new Statements.Rows(
            c,
            "INSERT INTO stock_movements (tenant_id, order_id, sku_id, kind, quantity) VALUES",
            "(?,?,?,'RELEASE',?)");
    for (Map.Entry<String, List<OrderItem>> order : items.entrySet()) {
      for (OrderItem item : order.getValue()) {
        rows.add(tenantId, order.getKey(), item.skuId(), item.quantity());
      }
    }
    rows.execute();
  }

  /**
   * The whole batch's stock back in one UPDATE per part (parts under RDS Proxy's 16 KB, in SKU
   * order): each SKU's quantity picked by a CASE on its key. A JDBC batch of one UPDATE per SKU
   * cost the driver a multi-statement text it parses again and two round trips to switch the
   * server's multi-statement option on and off, and the server a statement per SKU. The rows are
   * locked in SKU order, the order every writer of {@code stock} keeps: the table has no index but
   * its primary key (tenant_id, sku_id), so every plan reads it in that order ({@code
   * StockReleaseStatementTest} fails if one is added), and the statement says so with its ORDER BY.
   */
  private void releaseStock(
      Connection c, String tenantId, Map<String, List<OrderItem>> items, List<String> eligible)
      throws SQLException {
    Map<String, Long> perSku = new TreeMap<>();
    items
        .values()
        .forEach(
            list -> list.forEach(i -> perSku.merge(i.skuId(), (long) i.quantity(), Long::sum)));
    for (List<Map.Entry<String, Long>> part :
        Statements.parts(
            stockReleaseSql(0),
            new ArrayList<>(perSku.entrySet()),
            sku -> stockReleaseBytes(sku.getKey(), sku.getValue()))) {
      int updated;
      try (PreparedStatement ps = c.prepareStatement(stockReleaseSql(part.size()))) {
        int i = 1;
        for (int column = 0; column < 2; column++) { // available's CASE, then reserved's
          i = bindCase(ps, i, part);
        }
        ps.setString(i++, tenantId);
        for (Map.Entry<String, Long> sku : part) {
          ps.setString(i++, sku.getKey());
        }
        bindCase(ps, i, part);
        updated = ps.executeUpdate();
      }
      if (updated != part.size()) {
        metrics.count(MetricNames.STOCK_RELEASE_FAILURES, 1);
        // the statement moved the SKUs that had enough: undo the whole transaction first, so the
        // diagnosis reads the rows as they were (the caller's rollback then finds nothing to undo)
        c.rollback();
        throw new IllegalStateException(shortfall(c, tenantId, part, eligible.size()));
      }
    }
  }

  /**
   * The statement that releases {@code skus} SKUs: their quantities added to available and taken
   * from reserved where at least that much is reserved, by a CASE on sku_id with one WHEN per SKU.
   */
  static String stockReleaseSql(int skus) {
    String cases = " CASE sku_id" + " WHEN ? THEN ?".repeat(skus) + " END";
    return "UPDATE stock SET available = available +"
        + cases
        + ", reserved = reserved -"
        + cases
        + " WHERE tenant_id = ? AND sku_id IN ("
        + OrderStore.placeholders(skus)
        + ") AND reserved >="
        + cases
        + " ORDER BY sku_id";
  }

  /** What one SKU adds to {@link #stockReleaseSql}'s text: three WHENs and its IN list entry. */
  private static int stockReleaseBytes(String skuId, long quantity) {
    int literal = Statements.literalBytes(skuId);
    return 3 * (" WHEN  THEN ".length() + literal + String.valueOf(quantity).length())
        + literal
        + 1;
  }

  private static int bindCase(PreparedStatement ps, int start, List<Map.Entry<String, Long>> skus)
      throws SQLException {
    int i = start;
    for (Map.Entry<String, Long> sku : skus) {
      ps.setString(i++, sku.getKey());
      ps.setLong(i++, sku.getValue());
    }
    return i;
  }

  /**
   * Which SKU of a release that updated fewer rows than it named had no row or less reserved, read
   * after the transaction was rolled back.
   */
  private static String shortfall(
      Connection c, String tenantId, List<Map.Entry<String, Long>> part, int orders)
      throws SQLException {
    Map<String, Long> reserved = new HashMap<>();
    String sql =
        "SELECT sku_id, reserved FROM stock WHERE tenant_id = ? AND sku_id IN ("
            + OrderStore.placeholders(part.size())
            + ")";
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, tenantId);
      OrderStore.bind(ps, 2, part.stream().map(Map.Entry::getKey).toList());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          reserved.put(rs.getString(1), rs.getLong(2));
        }
      }
    }
    for (Map.Entry<String, Long> sku : part) {
      Long has = reserved.get(sku.getKey());
      if (has == null || has < sku.getValue()) {
        return "releasing "
            + sku.getValue()
            + " of SKU "
            + tenantId
            + "/"
            + sku.getKey()
            + " for "
            + orders
            + " orders found "
            + (has == null ? "no stock row" : has + " reserved")
            + "; nothing was closed";
      }
    }
    return "releasing stock of "
        + part.size()
        + " SKUs of tenant "
        + tenantId
        + " for "
        + orders
        + " orders updated fewer rows than SKUs; nothing was closed";
  }

  /**
   * Each coupon by its primary key, in coupon id order (the lock order), and only while the closed
   * order still holds it: back to AVAILABLE, or EXPIRED when its validity passed while the order
   * held it (the coupon-expiry deadline leaves a LOCKED coupon to its order). Assignments run left
   * to right: the status is decided before nothing else it reads changes.
   */
  private static void unlockCoupons(Connection c, String tenantId, Map<String, String> couponOwners)
      throws SQLException {
    if (couponOwners.isEmpty()) {
      return;
    }
    String sql =
        "UPDATE coupons SET"
            + " expired_at = IF(valid_until <= NOW(3), NOW(3), NULL),"
            + " status = IF(valid_until <= NOW(3), 'EXPIRED', 'AVAILABLE'),"
            + " locked_by_order = NULL"
            + " WHERE tenant_id = ? AND coupon_id = ? AND status = 'LOCKED'"
            + " AND locked_by_order = ?";
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      Statements.Batch batch = new Statements.Batch(ps, sql);
      for (Map.Entry<String, String> coupon : couponOwners.entrySet()) {
        batch.row(tenantId, coupon.getKey(), coupon.getValue());
      }
      batch.execute();
    }
  }
}
