package io.ordertimeout.load;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The arrival rate at which placement p99 passes the target: {@code rate} is the highest rate tried
 * whose p99 (and every lower rate's) stayed within it, {@code firstOver} the first rate tried above
 * it (0 when none passed it: the capacity is then at least {@code rate}). A search whose lowest
 * rate already passes the target finds no capacity ({@code rate} 0).
 */
record Capacity(double rate, double firstOver, long p99AtRate, long p99AtFirstOver) {

  static Capacity from(List<Double> ratesTried, Map<Double, Long> p99, long sloMs) {
    double rate = 0;
    long atRate = 0;
    for (double r : ratesTried) {
      Long value = p99.get(r);
      if (value == null) {
        break;
      }
      if (value > sloMs) {
        return new Capacity(rate, r, atRate, value);
      }
      rate = r;
      atRate = value;
    }
    return new Capacity(rate, 0, atRate, 0);
  }

  String describe(long sloMs) {
    if (rate == 0) {
      return String.format(
          Locale.ROOT,
          "capacity: none found: placement p99 was %d ms > %d ms at the lowest rate, %s/s",
          p99AtFirstOver,
          sloMs,
          OpenLoopBench.fmt(firstOver));
    }
    if (firstOver == 0) {
      return String.format(
          Locale.ROOT,
          "capacity: at least %s/s (placement p99 %d ms there, within %d ms at every rate tried)",
          OpenLoopBench.fmt(rate),
          p99AtRate,
          sloMs);
    }
    return String.format(
        Locale.ROOT,
        "capacity: %s/s (placement p99 %d ms); at %s/s p99 passed %d ms (%d ms)",
        OpenLoopBench.fmt(rate),
        p99AtRate,
        OpenLoopBench.fmt(firstOver),
        sloMs,
        p99AtFirstOver);
  }
}
