package io.ordertimeout.bench;

import org.HdrHistogram.Histogram;

/** The figures of one system on one scenario. */
record CellResult(
    String scenario,
    String system,
    int orders,
    long closedTimeout,
    long paid,
    long unpaidLeft,
    long closedEarly,
    Histogram lagMicros,
    double drainSeconds,
    double tailSeconds,
    double closesPerSecond,
    double cpuSeconds,
    double redisCpuSeconds,
    double dbCpuSeconds,
    long peakRssKb,
    double redisBytesPerOrder,
    boolean drained,
    String invariants,
    double loadAverage,
    JvmMeter.Figures jvm,
    String notes) {

  /** Bytes this JVM allocated from the closer's start to the drain, per TIMEOUT close. */
  double allocatedBytesPerClose() {
    return closedTimeout == 0 ? Double.NaN : jvm.allocatedBytes() / (double) closedTimeout;
  }

  /**
   * CPU microseconds of this JVM per TIMEOUT close, less what the JIT compilers spent in the span
   * (the steady-state cost of closing; the payer and drain poller are in it for every system).
   */
  double cpuMicrosPerCloseWithoutJit() {
    if (closedTimeout == 0 || jvm.jitMillis() < 0) {
      return Double.NaN;
    }
    return (cpuSeconds * 1e6 - jvm.jitMillis() * 1e3) / closedTimeout;
  }

  /** CPU microseconds of the Redis server per TIMEOUT close over the cell (INFO cpu). */
  double redisCpuMicrosPerClose() {
    return closedTimeout == 0 || redisCpuSeconds < 0
        ? Double.NaN
        : redisCpuSeconds * 1e6 / closedTimeout;
  }

  /** CPU microseconds of the embedded MariaDB server per TIMEOUT close over the cell. */
  double dbCpuMicrosPerClose() {
    return closedTimeout == 0 || dbCpuSeconds < 0 ? Double.NaN : dbCpuSeconds * 1e6 / closedTimeout;
  }

  /** The same figures under another system label (a warm-up cell that failed is reported so). */
  CellResult labelled(String label) {
    return new CellResult(
        scenario,
        label,
        orders,
        closedTimeout,
        paid,
        unpaidLeft,
        closedEarly,
        lagMicros,
        drainSeconds,
        tailSeconds,
        closesPerSecond,
        cpuSeconds,
        redisCpuSeconds,
        dbCpuSeconds,
        peakRssKb,
        redisBytesPerOrder,
        drained,
        invariants,
        loadAverage,
        jvm,
        notes);
  }

  boolean invariantsOk() {
    return "OK".equals(invariants);
  }

  double lagMillis(double percentile) {
    return lagMicros.getTotalCount() == 0
        ? Double.NaN
        : lagMicros.getValueAtPercentile(percentile) / 1_000.0;
  }

  double maxLagMillis() {
    return lagMicros.getTotalCount() == 0 ? Double.NaN : lagMicros.getMaxValue() / 1_000.0;
  }
}
