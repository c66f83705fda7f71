package io.ordertimeout.lifecycle;

import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderRejected;
import io.ordertimeout.domain.OrderStatus;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.mysql.DbTime;
import io.ordertimeout.mysql.OrderStore;
import io.ordertimeout.mysql.Statements;
import io.ordertimeout.mysql.Tx;
import io.ordertimeout.outbox.Outbox;
import io.ordertimeout.redis.TimeSource;
import io.ordertimeout.redis.TimerIndex;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one mechanism that executes every {@link Transition.Executor#GENERIC} transition, for one
 * order (a route) or a batch (a deadline kind's claimed timers): in one transaction, lock the rows
 * in id order, UPDATE those in the from-state (and due, for a deadline) conditionally on that
 * state, read back what changed and write one outbox row each; after the commit, remove the timer
 * the transition cancels and schedule the one it starts, from the row's due time.
 *
 * <p>The database clock decides every deadline: a route that must come before a running deadline
 * ({@link Transition#before()}) is refused once its due time is not after {@code NOW(3)}, and a
 * claimed timer the database finds not due yet goes back by the time the database says remains,
 * counted from the timer clock's now (a Redis clock ahead of MySQL's costs one early claim, not a
 * claim per poll until MySQL catches up).
 *
 * <p>A timer write that fails after the commit loses nothing: MySQL holds the due time, and
 * compensation re-adds a missing timer and removes a stale one. The conditional UPDATE is what
 * makes a transition happen at most once, whatever the retries, sweeps and routes racing for it.
 *
 * <p>Over 300 lines: the one executor of every generic transition (lock and classify, conditional
 * UPDATE, events, timers) and its refusal rules; split, one transaction would span classes.
 */
public final class Transitions {
  private static final Logger log = LoggerFactory.getLogger(Transitions.class);

  private final Tx tx;
  private final TimerIndex timers;
  private final TimeSource time;
  private final Metrics metrics;
  private final LifecycleSettings settings;

  public Transitions(
      Tx tx, TimerIndex timers, TimeSource time, Metrics metrics, LifecycleSettings settings) {
    this.tx = tx;
    this.timers = timers;
    this.time = time;
    this.metrics = metrics;
    this.settings = settings;
  }

  public LifecycleSettings settings() {
    return settings;
  }

  /**
   * What a batch found. {@code applied}: order id -> its lag behind the deadline in ms (0 for a
   * route); {@code notDue}: order id -> its due epoch ms, still in the from-state; {@code other}:
   * order id -> its state, which is not the from-state (or the guard refused it); {@code missing}:
   * ids with no order.
   */
  public record Batch(
      Map<String, Long> applied,
      Map<String, Long> notDue,
      Map<String, OrderStatus> other,
      List<String> missing) {}

  /**
   * A committed batch; per changed order, the due time of the deadline it starts; per not-due
   * order, the ms its deadline is still away by the database clock; per order a route came too late
   * for, the due time that passed.
   */
  private record Executed(
      Batch batch,
      Map<String, Long> scheduled,
      Map<String, Long> dueInMillis,
      Map<String, Instant> late) {}

  /** The answer to a route: the order after the request, and whether this request changed it. */
  public record Outcome(OrderLifecycle order, boolean changed) {}

  /**
   * Applies a route's transition to one order. An order already in the transition's to-state with
   * the same inputs (a retried request) answers {@code changed = false}; any other state throws 409
   * ILLEGAL_TRANSITION naming the current state; an unknown order throws 404; a request after the
   * deadline it must come before (by {@code NOW(3)}, applied yet or not) throws 409
   * DEADLINE_PASSED. A refusal changes nothing.
   */
  public Outcome applyRoute(
      Transition t, String tenantId, String orderId, Map<Transition.Param, String> inputs) {
    if (t.executor() != Transition.Executor.GENERIC || t.trigger() != Transition.Trigger.ROUTE) {
      throw new IllegalArgumentException(t + " is not a route transition of this executor");
    }
    Executed executed =
        tx.inTransaction(
            t.wireName() + " order " + tenantId + "/" + orderId,
            c -> execute(c, t, tenantId, List.of(orderId), inputs));
    afterCommit(t, tenantId, executed);
    Batch batch = executed.batch();
    if (!batch.missing().isEmpty()) {
      throw new OrderRejected(OrderRejected.Code.NOT_FOUND, "order " + orderId + " does not exist");
    }
    Instant passed = executed.late().get(orderId);
    if (passed != null) {
      throw deadlinePassed(t, orderId, passed);
    }
    OrderLifecycle now =
        tx.read("read order " + orderId, c -> OrderLifecycle.find(c, tenantId, orderId))
            .orElseThrow();
    if (!batch.applied().isEmpty()) {
      return new Outcome(now, true);
    }
    if (t.before().isPresent() && reachedBy(t.before().get(), now)) {
      // the sweep applied the deadline first: the same answer as when it has not yet
      throw deadlinePassed(t, orderId, dueOf(t.before().get(), now));
    }
    if (t.from() == t.to() && now.status() == t.from()) {
      // in its state, so the guard refused it (the one-extension rule)
      throw new OrderRejected(
          OrderRejected.Code.RECEIPT_ALREADY_EXTENDED,
          "order "
              + orderId
              + " had its receipt deadline extended already; it is due at "
              + now.receiveDueAt());
    }
    if (now.status() == t.to()
        && t.from() != t.to()
        && sameInputs(now, inputs)
        && happened(t, now)) {
      return new Outcome(now, false);
    }
    throw new IllegalTransition(orderId, t, now.status());
  }

  /**
   * Applies a deadline kind's transition to claimed orders: those in the from-state and due by the
   * database clock move on; the others are reported, for the caller to fix their timers.
   */
  public Batch applyDue(Transition t, String tenantId, List<String> orderIds) {
    if (t.trigger() != Transition.Trigger.DEADLINE || t.executor() != Transition.Executor.GENERIC) {
      throw new IllegalArgumentException(t + " is not a deadline transition of this executor");
    }
    if (orderIds.isEmpty()) {
      return new Batch(Map.of(), Map.of(), Map.of(), List.of());
    }
    Executed executed =
        tx.inTransaction(
            t.wireName() + " " + orderIds.size() + " orders of tenant " + tenantId,
            c -> execute(c, t, tenantId, orderIds, Map.of()));
    afterCommit(t, tenantId, executed);
    Batch batch = executed.batch();
    DeadlineKind kind = t.deadline().orElseThrow();
    batch.applied().values().forEach(lag -> metrics.recordMillis(lagMetric(kind), lag));
    return batch;
  }

  private static OrderRejected deadlinePassed(Transition t, String orderId, Instant due) {
    return new OrderRejected(
        OrderRejected.Code.DEADLINE_PASSED,
        "order "
            + orderId
            + ": "
            + t.wireName()
            + " must come before its "
            + t.before().orElseThrow().label()
            + " deadline, which passed at "
            + due);
  }

  /** Whether the order is where the deadline's own transition put it (applied by the sweep). */
  private static boolean reachedBy(DeadlineKind kind, OrderLifecycle order) {
    return switch (kind) {
      case AUTO_RECEIPT ->
          order.status() == OrderStatus.RECEIVED && "AUTO".equals(order.receivedBy());
      case AUTO_COMPLETE -> order.status() == OrderStatus.COMPLETED;
      case PAYMENT_TIMEOUT, COUPON_EXPIRY -> false;
    };
  }

  private static Instant dueOf(DeadlineKind kind, OrderLifecycle order) {
    return kind == DeadlineKind.AUTO_RECEIPT ? order.receiveDueAt() : order.completeDueAt();
  }

  /** The histogram of a kind's lag: applied time minus due time. */
  public static String lagMetric(DeadlineKind kind) {
    return "deadline_lag_ms_" + kind.label();
  }

  private Executed execute(
      Connection c,
      Transition t,
      String tenantId,
      List<String> orderIds,
      Map<Transition.Param, String> inputs)
      throws SQLException {
    Map<String, Long> eligible = new TreeMap<>();
    Map<String, Long> notDue = new TreeMap<>();
    Map<String, Long> dueIn = new TreeMap<>();
    Map<String, Instant> late = new TreeMap<>();
    Map<String, OrderStatus> other = new TreeMap<>();
    List<String> missing = new ArrayList<>(orderIds);
    String due = t.deadline().map(DueColumns::of).orElse(null);
    String before = t.before().map(DueColumns::of).orElse(null);
    LocalDateTime decidedAt = null;
    String sql =
        "SELECT order_id, status, NOW(3) AS db_now, "
            + (due == null ? "0 AS due_now, NULL AS due_at, 0 AS lag_us" : dueColumns(due))
            + ", "
            + (before == null ? "0 AS late, NULL AS before_at" : lateColumns(before))
            + ", "
            + (t.guard() == null ? "1" : t.guard())
            + " AS guard_ok FROM orders WHERE tenant_id = ? AND order_id IN (%s)"
            + " ORDER BY order_id FOR UPDATE";
    for (List<String> part : Statements.inLists(sql, orderIds.stream().sorted().toList())) {
      try (PreparedStatement ps =
          c.prepareStatement(String.format(sql, OrderStore.placeholders(part.size())))) {
        ps.setString(1, tenantId);
        OrderStore.bind(ps, 2, part);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            String id = rs.getString("order_id");
            missing.remove(id);
            decidedAt = DbTime.utc(rs, "db_now");
            OrderStatus status = OrderStatus.valueOf(rs.getString("status"));
            if (status == t.from() && rs.getBoolean("late")) {
              late.put(id, DbTime.instant(rs, "before_at"));
            } else if (status != t.from() || !rs.getBoolean("guard_ok")) {
              other.put(id, status);
            } else if (due != null && !rs.getBoolean("due_now")) {
              Long at = TransitionEvents.millis(rs, "due_at");
              if (at != null) {
                notDue.put(id, at);
                // whole ms still to wait by the database clock, rounded up: never claimed early
                dueIn.put(id, (-rs.getLong("lag_us") + 999) / 1_000);
              } else {
                other.put(id, status); // no due time: nothing to schedule (compensation reports it)
              }
            } else {
              eligible.put(id, Math.max(0, rs.getLong("lag_us") / 1_000));
            }
          }
        }
      }
    }
    Map<String, Long> scheduled = new TreeMap<>();
    if (!eligible.isEmpty()) {
      update(c, t, tenantId, new ArrayList<>(eligible.keySet()), inputs, decidedAt);
      List<Outbox.Pending> events = TransitionEvents.of(c, t, tenantId, eligible.keySet());
      Outbox.append(c, events);
      t.schedules().ifPresent(kind -> scheduled.putAll(TransitionEvents.dueTimes(events, kind)));
    }
    return new Executed(new Batch(eligible, notDue, other, missing), scheduled, dueIn, late);
  }

  /**
   * Whether the deadline a route must come before has passed: due at or before {@code NOW(3)}. An
   * order with no such due time (NULL) has no deadline running to miss.
   */
  private static String lateColumns(String before) {
    return "("
        + before
        + " IS NOT NULL AND "
        + before
        + " <= NOW(3)) AS late, "
        + before
        + " AS before_at";
  }

  private static String dueColumns(String due) {
    return due
        + " <= NOW(3) AS due_now, "
        + due
        + " AS due_at, TIMESTAMPDIFF(MICROSECOND, "
        + due
        + ", NOW(3)) AS lag_us";
  }

  /**
   * The conditional UPDATE: the rows are locked, so it must change every one of them. A route's
   * deadline is re-checked against the database time the SELECT decided at ({@code decidedAt}), not
   * a later NOW(3), so the two statements cannot disagree about a deadline passing between them.
   */
  private void update(
      Connection c,
      Transition t,
      String tenantId,
      List<String> ids,
      Map<Transition.Param, String> inputs,
      LocalDateTime decidedAt)
      throws SQLException {
    String before = t.before().map(DueColumns::of).orElse(null);
    StringBuilder set = new StringBuilder("status = ?, version = version + 1");
    t.sets().forEach(s -> set.append(", ").append(s.sql()));
    String sql =
        "UPDATE orders SET "
            + set
            + " WHERE tenant_id = ? AND order_id IN (%s) AND status = ?"
            + (t.guard() == null ? "" : " AND " + t.guard())
            + (before == null ? "" : " AND (" + before + " IS NULL OR " + before + " > ?)");
    int updated = 0;
    for (List<String> part : Statements.inLists(sql, ids)) {
      try (PreparedStatement ps =
          c.prepareStatement(String.format(sql, OrderStore.placeholders(part.size())))) {
        int i = 1;
        ps.setString(i++, t.to().name());
        for (Transition.Set s : t.sets()) {
          if (s.param().isPresent()) {
            bind(ps, i++, s.param().get(), inputs);
          }
        }
        ps.setString(i++, tenantId);
        i = OrderStore.bind(ps, i, part);
        ps.setString(i++, t.from().name());
        if (before != null) {
          DbTime.bind(ps, i, decidedAt);
        }
        updated += ps.executeUpdate();
      }
    }
    if (updated != ids.size()) {
      throw new IllegalStateException(
          t.wireName() + " changed " + updated + " of " + ids.size() + " locked orders");
    }
  }

  private void bind(
      PreparedStatement ps, int index, Transition.Param p, Map<Transition.Param, String> inputs)
      throws SQLException {
    switch (p) {
      case RECEIPT_PERIOD -> ps.setLong(index, LifecycleSettings.micros(settings.receiptPeriod()));
      case RECEIPT_EXTENSION ->
          ps.setLong(index, LifecycleSettings.micros(settings.receiptExtension()));
      case AFTER_SALE_WINDOW ->
          ps.setLong(index, LifecycleSettings.micros(settings.afterSaleWindow()));
      case CARRIER, TRACKING_NO -> {
        String value = inputs.get(p);
        if (value == null) {
          throw new IllegalArgumentException(p + " is required for this transition");
        }
        ps.setString(index, value);
      }
    }
  }

  /**
   * The timers after the commit: the cancelled kind removed and the started one scheduled; for a
   * deadline batch, claimed timers of orders gone elsewhere removed, not-yet-due ones put back.
   */
  private void afterCommit(Transition t, String tenantId, Executed executed) {
    Batch batch = executed.batch();
    metrics.count("transitions_" + t.wireName(), batch.applied().size());
    try {
      if (!batch.applied().isEmpty()) {
        t.cancels().ifPresent(kind -> timers.remove(tenantId, kind, batch.applied().keySet()));
        t.schedules().ifPresent(kind -> timers.scheduleAll(tenantId, kind, executed.scheduled()));
      }
      if (t.deadline().isPresent()) {
        DeadlineKind kind = t.deadline().get();
        List<String> gone = new ArrayList<>(batch.other().keySet());
        gone.addAll(batch.missing());
        if (!gone.isEmpty()) {
          timers.remove(tenantId, kind, gone);
        }
        if (!executed.dueInMillis().isEmpty()) {
          // by the time MySQL says remains, on the timer clock: never at the absolute due time,
          // which a Redis clock ahead of MySQL's has passed already (claimed again at once)
          timers.scheduleAllIn(tenantId, kind, time.nowMillis(), executed.dueInMillis());
        }
      }
    } catch (RuntimeException e) {
      // Committed: MySQL has the due times, compensation re-adds or removes the timers.
      metrics.count("timer_schedule_failures", 1);
      log.warn(
          "{} committed for {} orders but their timers were not updated; compensation repairs"
              + " them: {}",
          t.wireName(),
          batch.applied().size(),
          e.toString());
    }
  }

  /**
   * Whether an order in the transition's to-state got there by it, so the request is a retry: a
   * RECEIVED order that never had an after-sale was not resolved, and resolving it is illegal.
   */
  private static boolean happened(Transition t, OrderLifecycle order) {
    return t != Transition.RESOLVE_AFTER_SALE || order.afterSales() > 0;
  }

  private static boolean sameInputs(OrderLifecycle order, Map<Transition.Param, String> inputs) {
    String carrier = inputs.get(Transition.Param.CARRIER);
    String tracking = inputs.get(Transition.Param.TRACKING_NO);
    return (carrier == null || carrier.equals(order.carrier()))
        && (tracking == null || tracking.equals(order.trackingNo()));
  }
}
