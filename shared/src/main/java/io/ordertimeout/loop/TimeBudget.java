package io.ordertimeout.loop;

import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * The time a loop may still use in this invocation: Lambda's remaining time less the margin kept
 * for the end of the invocation (flushing metrics, releasing leases, answering). The sweep and the
 * consumer both stop, cap their waits and bound their blocking reads by it.
 */
public record TimeBudget(LongSupplier remainingMillis, Duration margin) {
  /** Millis left before the margin; negative once inside it. */
  public long leftMillis() {
    return remainingMillis.getAsLong() - margin.toMillis();
  }

  /** {@code waitMillis}, cut to what is left before the margin (never below 0). */
  public long cap(long waitMillis) {
    return Math.min(waitMillis, Math.max(0, leftMillis()));
  }
}
