package io.ordertimeout.close;

import io.ordertimeout.domain.ClosedOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What one close call did with each order id it was given.
 *
 * @param closed orders this call moved UNPAID -> CLOSED, with their close lag
 * @param alreadyFinal orders already PAID or CLOSED: nothing to do, their timers were removed
 * @param notDue orders whose deadline (by the database clock) is still ahead, with the ms
 *     remaining; their timers were moved to that moment
 * @param unknown ids with no order in MySQL: their timers were removed
 * @param paid prepaid orders WeChat reported paid: this call took the paid path for them
 * @param deferred prepaid orders whose payer was paying at WeChat (USERPAYING): left UNPAID, their
 *     timers moved a few seconds ahead, or one compensation period once past the USERPAYING limit
 *     (those are flagged USERPAYING_STUCK)
 * @param failed prepaid orders WeChat gave no definite answer for (errors, timeouts): left UNPAID
 *     with their timers where they were (the claim lease brings them back)
 * @param stuck the deferred orders past the USERPAYING limit (a subset of {@code deferred}):
 *     flagged USERPAYING_STUCK, their timers one compensation period ahead, which with
 *     compensation's overdue pass now own the retry
 */
public record CloseResult(
    List<ClosedOrder> closed,
    List<String> alreadyFinal,
    Map<String, Long> notDue,
    List<String> unknown,
    List<String> paid,
    List<String> deferred,
    List<String> failed,
    List<String> stuck) {

  public CloseResult {
    closed = List.copyOf(closed);
    alreadyFinal = List.copyOf(alreadyFinal);
    notDue = Map.copyOf(notDue);
    unknown = List.copyOf(unknown);
    paid = List.copyOf(paid);
    deferred = List.copyOf(deferred);
    failed = List.copyOf(failed);
    stuck = List.copyOf(stuck);
  }

  /** A result with no order past the USERPAYING limit. */
  public CloseResult(
      List<ClosedOrder> closed,
      List<String> alreadyFinal,
      Map<String, Long> notDue,
      List<String> unknown,
      List<String> paid,
      List<String> deferred,
      List<String> failed) {
    this(closed, alreadyFinal, notDue, unknown, paid, deferred, failed, List.of());
  }

  /** A result of the database step alone (no prepaid order was involved). */
  public CloseResult(
      List<ClosedOrder> closed,
      List<String> alreadyFinal,
      Map<String, Long> notDue,
      List<String> unknown) {
    this(closed, alreadyFinal, notDue, unknown, List.of(), List.of(), List.of());
  }

  public static CloseResult empty() {
    return new CloseResult(List.of(), List.of(), Map.of(), List.of());
  }

  /** Both results together: the close of the ordinary orders plus that of the prepaid ones. */
  CloseResult plus(CloseResult other) {
    Map<String, Long> due = new HashMap<>(notDue);
    due.putAll(other.notDue);
    return new CloseResult(
        concat(closed, other.closed),
        concat(alreadyFinal, other.alreadyFinal),
        due,
        concat(unknown, other.unknown),
        concat(paid, other.paid),
        concat(deferred, other.deferred),
        concat(failed, other.failed),
        concat(stuck, other.stuck));
  }

  private static <T> List<T> concat(List<T> a, List<T> b) {
    List<T> out = new ArrayList<>(a);
    out.addAll(b);
    return out;
  }
}
