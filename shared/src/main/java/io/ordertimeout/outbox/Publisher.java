package io.ordertimeout.outbox;

import java.util.List;
import java.util.function.LongSupplier;

/** Delivers outbox rows to one destination. */
public interface Publisher {
  Destination destination();

  /**
   * Delivers {@code rows} (ascending seq) and answers the seqs the destination accepted. Per order,
   * a row is only delivered after every earlier row of that order in {@code rows} was accepted, so
   * an accepted row's predecessors are accepted too. Throws when nothing can be said (the relay
   * then marks nothing and the next pass delivers them again: at least once).
   */
  List<Long> publish(List<OutboxRow> rows);

  /**
   * As {@link #publish(List)}, with every call to the destination ending within {@code millisLeft}
   * (read before each call): rows not accepted by then are left to a later pass. The default is for
   * destinations whose client bounds each call far under any budget by itself (Redis' command
   * timeout).
   */
  default List<Long> publish(List<OutboxRow> rows, LongSupplier millisLeft) {
    return publish(rows);
  }
}
