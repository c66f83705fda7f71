package io.ordertimeout.load;

import io.ordertimeout.bench.ProcessCpu;
import java.util.Optional;

/**
 * CPU time the stack has used so far, per tier: the {@code ./local up} JVM (API handlers, webhook,
 * sweep, consumer, relay), and its embedded MariaDB and Redis (child processes), from the OS's
 * accounting ({@link ProcessHandle.Info#totalCpuDuration()}). The difference of two is a step's
 * cost.
 */
record StackCpu(long jvmMillis, long mariaDbMillis, long redisMillis) {

  static final StackCpu UNKNOWN = new StackCpu(-1, -1, -1);

  static StackCpu of(long stackPid) {
    if (stackPid <= 0) {
      return UNKNOWN;
    }
    Optional<ProcessHandle> stack = ProcessHandle.of(stackPid);
    if (stack.isEmpty()) {
      return UNKNOWN;
    }
    return new StackCpu(
        ProcessCpu.millis(stack.get()),
        ProcessCpu.descendantsMillis(stack.get(), "mariadbd"),
        ProcessCpu.descendantsMillis(stack.get(), "redis-server"));
  }

  /** What was used between {@code before} and this; -1 where either is unknown. */
  StackCpu since(StackCpu before) {
    return new StackCpu(
        minus(jvmMillis, before.jvmMillis),
        minus(mariaDbMillis, before.mariaDbMillis),
        minus(redisMillis, before.redisMillis));
  }

  private static long minus(long after, long before) {
    return after < 0 || before < 0 ? -1 : after - before;
  }

  /** CPU microseconds per order of the step, per tier: "JVM / MariaDB / Redis". */
  String perOrder(long orders) {
    if (orders <= 0 || jvmMillis < 0) {
      return "-";
    }
    return micros(jvmMillis, orders)
        + " / "
        + micros(mariaDbMillis, orders)
        + " / "
        + micros(redisMillis, orders);
  }

  private static String micros(long millis, long orders) {
    return millis < 0 ? "?" : Long.toString(Math.round(millis * 1000.0 / orders));
  }
}
