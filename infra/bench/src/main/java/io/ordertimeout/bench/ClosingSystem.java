package io.ordertimeout.bench;

import java.util.List;
import java.util.Map;

/**
 * One way of closing unpaid orders at their deadline, run against one scenario's schema. Every
 * system but the raw-SQL ceiling closes through the shared close use case (OrderCloser).
 */
interface ClosingSystem extends AutoCloseable {
  /** Short name used in tables and on the command line. */
  String name();

  /** What it is and how it was configured, for the report. */
  String description();

  /** Rough cost of {@link #schedule} per order (µs), so the scenario starts after scheduling. */
  long scheduleMicrosPerOrder();

  /** Registers every order's deadline (epoch ms) as placing them would have. */
  void schedule(Map<String, Long> deadlines) throws Exception;

  /** Starts closing in background threads. */
  void start();

  /** The paid path committed these orders: do what the system does on payment (unschedule). */
  void onPaid(List<String> orderIds);

  /** Stops the background threads and waits for them. */
  void stop() throws InterruptedException;

  @Override
  default void close() throws Exception {}
}
