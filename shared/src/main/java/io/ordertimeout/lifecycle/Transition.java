package io.ordertimeout.lifecycle;

import static io.ordertimeout.domain.OrderStatus.AFTER_SALE;
import static io.ordertimeout.domain.OrderStatus.CLOSED;
import static io.ordertimeout.domain.OrderStatus.COMPLETED;
import static io.ordertimeout.domain.OrderStatus.PAID;
import static io.ordertimeout.domain.OrderStatus.RECEIVED;
import static io.ordertimeout.domain.OrderStatus.SHIPPED;
import static io.ordertimeout.domain.OrderStatus.UNPAID;

import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderStatus;
import io.ordertimeout.stream.EventType;
import java.util.List;
import java.util.Optional;

/**
 * Every transition of an order, declared once: from, to, what triggers it, the deadline it
 * schedules and the one it cancels, what it sets, and the event it writes. {@link Transitions}
 * executes every transition marked {@link Executor#GENERIC} by one mechanism: a conditional UPDATE
 * on the from-state in one transaction with its outbox row; the timers follow after the commit.
 * Adding a transition adds a constant here (and a route or a deadline kind); the sweep, the claim
 * script and the stream consumer stay as they are.
 *
 * <p>PAY and CLOSE are declared here too, so the whole state machine reads in one place, but run on
 * their own executors ({@code payment.PaymentService}, {@code close.OrderCloser}): they move stock
 * and coupons in a lock order across many rows, batch hundreds of orders per transaction and talk
 * to WeChat, which the generic executor does not do. Their SQL conditions are the same kind: a
 * conditional UPDATE on {@code status = 'UNPAID'}.
 *
 * <p>Over 300 lines: the whole state machine is this one table, a constant per transition with its
 * from, to, trigger, deadlines, assignments and event; split, it would no longer read as one.
 */
public enum Transition {
  /** A payment notification or query: UNPAID -> PAID, cancels the payment timeout. */
  PAY(
      UNPAID,
      PAID,
      Trigger.NOTIFICATION,
      null,
      DeadlineKind.PAYMENT_TIMEOUT,
      null,
      EventType.PAID,
      Executor.PAYMENT,
      List.of(),
      null,
      null,
      List.of()),
  /** The payment timeout, a user's cancel or an operator: UNPAID -> CLOSED. */
  CLOSE(
      UNPAID,
      CLOSED,
      Trigger.DEADLINE,
      DeadlineKind.PAYMENT_TIMEOUT,
      DeadlineKind.PAYMENT_TIMEOUT,
      null,
      EventType.CLOSED,
      Executor.CLOSER,
      List.of(),
      null,
      null,
      List.of()),
  /**
   * The mall ships: PAID -> SHIPPED with carrier and tracking number; the receipt deadline starts.
   */
  SHIP(
      PAID,
      SHIPPED,
      Trigger.ROUTE,
      null,
      null,
      DeadlineKind.AUTO_RECEIPT,
      EventType.SHIPPED,
      Executor.GENERIC,
      List.of(
          Set.of("shipped_at = NOW(3)"),
          Set.of("carrier = ?", Param.CARRIER),
          Set.of("tracking_no = ?", Param.TRACKING_NO),
          Set.of("receive_due_at = NOW(3) + INTERVAL ? MICROSECOND", Param.RECEIPT_PERIOD)),
      null,
      null,
      List.of("carrier", "tracking_no", "receive_due_at")),
  /**
   * The user's one extension: the receipt deadline moves later (never earlier), SHIPPED stays. A
   * second extension is refused (409 RECEIPT_ALREADY_EXTENDED), and so is one asked once the
   * receipt deadline has passed by the database clock (409 DEADLINE_PASSED).
   */
  EXTEND_RECEIPT(
      SHIPPED,
      SHIPPED,
      Trigger.ROUTE,
      null,
      null,
      DeadlineKind.AUTO_RECEIPT,
      EventType.RECEIPT_EXTENDED,
      Executor.GENERIC,
      List.of(
          Set.of(
              "receive_due_at = receive_due_at + INTERVAL ? MICROSECOND", Param.RECEIPT_EXTENSION),
          Set.of("receipt_extended_at = NOW(3)")),
      "receipt_extended_at IS NULL",
      DeadlineKind.AUTO_RECEIPT,
      List.of("receive_due_at")),
  /**
   * The user confirms receipt (through the mall backend): the after-sale window starts. Once the
   * receipt deadline has passed the order is received automatically: 409 DEADLINE_PASSED.
   */
  CONFIRM_RECEIPT(
      SHIPPED,
      RECEIVED,
      Trigger.ROUTE,
      null,
      DeadlineKind.AUTO_RECEIPT,
      DeadlineKind.AUTO_COMPLETE,
      EventType.RECEIVED,
      Executor.GENERIC,
      receivedSets("USER"),
      null,
      DeadlineKind.AUTO_RECEIPT,
      List.of("received_by", "receive_due_at", "complete_due_at")),
  /** The receipt deadline: confirmed as received for the user. */
  AUTO_RECEIVE(
      SHIPPED,
      RECEIVED,
      Trigger.DEADLINE,
      DeadlineKind.AUTO_RECEIPT,
      DeadlineKind.AUTO_RECEIPT,
      DeadlineKind.AUTO_COMPLETE,
      EventType.RECEIVED,
      Executor.GENERIC,
      receivedSets("AUTO"),
      null,
      null,
      List.of("received_by", "receive_due_at", "complete_due_at")),
  /**
   * An after-sale request opens: the completion deadline is suspended (its timer removed). Only
   * within the after-sale window: once completion is due by the database clock, 409
   * DEADLINE_PASSED.
   */
  OPEN_AFTER_SALE(
      RECEIVED,
      AFTER_SALE,
      Trigger.ROUTE,
      null,
      DeadlineKind.AUTO_COMPLETE,
      null,
      EventType.AFTER_SALE_OPENED,
      Executor.GENERIC,
      List.of(Set.of("after_sale_opened_at = NOW(3)"), Set.of("after_sales = after_sales + 1")),
      null,
      DeadlineKind.AUTO_COMPLETE,
      List.of("complete_due_at", "after_sales")),
  /**
   * The request is resolved: the completion deadline resumes, later by exactly the time the request
   * stayed open (assignments run left to right in MySQL and MariaDB: the due time is moved before
   * the opening time is cleared).
   */
  RESOLVE_AFTER_SALE(
      AFTER_SALE,
      RECEIVED,
      Trigger.ROUTE,
      null,
      null,
      DeadlineKind.AUTO_COMPLETE,
      EventType.AFTER_SALE_RESOLVED,
      Executor.GENERIC,
      List.of(
          Set.of(
              "complete_due_at = complete_due_at + INTERVAL"
                  + " TIMESTAMPDIFF(MICROSECOND, after_sale_opened_at, NOW(3)) MICROSECOND"),
          Set.of("after_sale_opened_at = NULL")),
      null,
      null,
      List.of("complete_due_at")),
  /** The after-sale window ends with no request open: COMPLETED, settlement may proceed. */
  COMPLETE(
      RECEIVED,
      COMPLETED,
      Trigger.DEADLINE,
      DeadlineKind.AUTO_COMPLETE,
      DeadlineKind.AUTO_COMPLETE,
      null,
      EventType.COMPLETED,
      Executor.GENERIC,
      List.of(Set.of("completed_at = NOW(3)")),
      null,
      null,
      List.of("complete_due_at"));

  /** What starts a transition. */
  public enum Trigger {
    /** A route of the order API (the mall backend, IAM). */
    ROUTE,
    /** A deadline of {@link #deadline()} claimed by the sweep. */
    DEADLINE,
    /** A WeChat Pay notification or trade query. */
    NOTIFICATION
  }

  /** Which code runs the transition. */
  public enum Executor {
    GENERIC,
    PAYMENT,
    CLOSER
  }

  /** A value a SET clause binds: from the request or from the settings. */
  public enum Param {
    CARRIER,
    TRACKING_NO,
    RECEIPT_PERIOD,
    RECEIPT_EXTENSION,
    AFTER_SALE_WINDOW
  }

  /** One assignment of the UPDATE, with the parameter its {@code ?} binds (if any). */
  public record Set(String sql, Optional<Param> param) {
    static Set of(String sql) {
      return new Set(sql, Optional.empty());
    }

    static Set of(String sql, Param param) {
      return new Set(sql, Optional.of(param));
    }
  }

  private final OrderStatus from;
  private final OrderStatus to;
  private final Trigger trigger;
  private final DeadlineKind deadline;
  private final DeadlineKind cancels;
  private final DeadlineKind schedules;
  private final EventType event;
  private final Executor executor;
  private final List<Set> sets;
  private final String guard;
  private final DeadlineKind before;
  private final List<String> eventColumns;

  Transition(
      OrderStatus from,
      OrderStatus to,
      Trigger trigger,
      DeadlineKind deadline,
      DeadlineKind cancels,
      DeadlineKind schedules,
      EventType event,
      Executor executor,
      List<Set> sets,
      String guard,
      DeadlineKind before,
      List<String> eventColumns) {
    this.from = from;
    this.to = to;
    this.trigger = trigger;
    this.deadline = deadline;
    this.cancels = cancels;
    this.schedules = schedules;
    this.event = event;
    this.executor = executor;
    this.sets = sets;
    this.guard = guard;
    this.before = before;
    this.eventColumns = eventColumns;
    if (schedules != null && !eventColumns.contains(DueColumns.of(schedules))) {
      // Transitions schedules the timer from the due time its event read back
      throw new IllegalStateException(name() + "'s event must carry " + DueColumns.of(schedules));
    }
  }

  private static List<Set> receivedSets(String by) {
    return List.of(
        Set.of("received_at = NOW(3)"),
        Set.of("received_by = '" + by + "'"),
        Set.of("complete_due_at = NOW(3) + INTERVAL ? MICROSECOND", Param.AFTER_SALE_WINDOW));
  }

  public OrderStatus from() {
    return from;
  }

  public OrderStatus to() {
    return to;
  }

  public Trigger trigger() {
    return trigger;
  }

  /** The deadline kind that triggers it (DEADLINE transitions), else empty. */
  public Optional<DeadlineKind> deadline() {
    return Optional.ofNullable(deadline);
  }

  /** The deadline whose timer the commit makes obsolete, if any. */
  public Optional<DeadlineKind> cancels() {
    return Optional.ofNullable(cancels);
  }

  /** The deadline the commit starts or moves, if any; its due time is read back from the row. */
  public Optional<DeadlineKind> schedules() {
    return Optional.ofNullable(schedules);
  }

  public EventType event() {
    return event;
  }

  public Executor executor() {
    return executor;
  }

  List<Set> sets() {
    return sets;
  }

  /** An extra condition beyond the from-state (the one-extension rule), or null. */
  String guard() {
    return guard;
  }

  /**
   * The running deadline a route must come before, by the database clock: once its due time has
   * passed the request is refused (409 DEADLINE_PASSED), whether or not the sweep has applied the
   * deadline yet, so the answer never depends on Redis or the sweep's health.
   */
  public Optional<DeadlineKind> before() {
    return Optional.ofNullable(before);
  }

  /** The columns (read after the UPDATE) its event carries besides the status. */
  List<String> eventColumns() {
    return eventColumns;
  }

  /** The wire name of a transition in events and logs: "auto_receive". */
  public String wireName() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }

  /** The generic transition a deadline kind triggers, if one. */
  public static Optional<Transition> triggeredBy(DeadlineKind kind) {
    for (Transition t : values()) {
      if (t.executor == Executor.GENERIC && t.deadline == kind) {
        return Optional.of(t);
      }
    }
    return Optional.empty();
  }
}
