package io.ordertimeout.bench;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.Map;

/**
 * Bytes allocated and GC collections of this JVM from {@link #start} to {@link #read}. Java 17 has
 * no total over dead threads, so allocation is summed per thread over the threads alive at {@link
 * #read}, each counted from its figure at {@link #start} (or from zero if it started later): read
 * while the threads being measured still run. GC figures exclude the G1 concurrent-cycle bean,
 * whose time is not a pause.
 */
final class JvmMeter {
  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  /**
   * What happened between start and read. {@code jitMillis}: time the JIT compilers spent compiling
   * (CompilationMXBean's accumulated compilation time, summed over compiler threads; -1 where the
   * JVM does not report it), CPU the closing code did not use but a run on a JVM still warming up
   * pays for.
   */
  record Figures(long allocatedBytes, long gcCount, long gcMillis, long jitMillis) {
    static final Figures NONE = new Figures(0, 0, 0, 0);
  }

  private final Map<Long, Long> allocatedAtStart;
  private final long[] gcAtStart;
  private final long jitAtStart;

  private JvmMeter(Map<Long, Long> allocatedAtStart, long[] gcAtStart, long jitAtStart) {
    this.allocatedAtStart = allocatedAtStart;
    this.gcAtStart = gcAtStart;
    this.jitAtStart = jitAtStart;
  }

  static JvmMeter start() {
    return new JvmMeter(allocatedPerThread(), gc(), jitMillis());
  }

  private static long jitMillis() {
    var jit = ManagementFactory.getCompilationMXBean();
    return jit != null && jit.isCompilationTimeMonitoringSupported()
        ? jit.getTotalCompilationTime()
        : -1;
  }

  Figures read() {
    long allocated = 0;
    for (Map.Entry<Long, Long> e : allocatedPerThread().entrySet()) {
      allocated += Math.max(0, e.getValue() - allocatedAtStart.getOrDefault(e.getKey(), 0L));
    }
    long[] gc = gc();
    long jit = jitMillis();
    return new Figures(
        allocated,
        gc[0] - gcAtStart[0],
        gc[1] - gcAtStart[1],
        jit < 0 || jitAtStart < 0 ? -1 : jit - jitAtStart);
  }

  private static Map<Long, Long> allocatedPerThread() {
    long[] ids = THREADS.getAllThreadIds();
    long[] bytes = THREADS.getThreadAllocatedBytes(ids);
    Map<Long, Long> map = new HashMap<>();
    for (int i = 0; i < ids.length; i++) {
      if (bytes[i] >= 0) {
        map.put(ids[i], bytes[i]);
      }
    }
    return map;
  }

  private static long[] gc() {
    long count = 0;
    long millis = 0;
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      if (gc.getName().contains("Concurrent")) {
        continue;
      }
      count += Math.max(0, gc.getCollectionCount());
      millis += Math.max(0, gc.getCollectionTime());
    }
    return new long[] {count, millis};
  }
}
