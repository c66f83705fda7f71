package io.ordertimeout.close;

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
 */
public record CloseResult(
    List<ClosedOrder> closed,
    List<String> alreadyFinal,
    Map<String, Long> notDue,
    List<String> unknown) {

  public CloseResult {
    closed = List.copyOf(closed);
    alreadyFinal = List.copyOf(alreadyFinal);
    notDue = Map.copyOf(notDue);
    unknown = List.copyOf(unknown);
  }

  public static CloseResult empty() {
    return new CloseResult(List.of(), List.of(), Map.of(), List.of());
  }

  /** An order closed by this call; lag is closed_at - expire_at by the database clock. */
  public record ClosedOrder(String orderId, long lagMillis) {}
}
