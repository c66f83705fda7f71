package io.ordertimeout.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/** CPU time and peak RSS of this JVM (the closer process of a run), from the OS. */
final class ProcStats {
  private static final Path STATUS = Path.of("/proc/self/status");
  private static final Path CLEAR_REFS = Path.of("/proc/self/clear_refs");

  private ProcStats() {}

  /** CPU time of all threads of this process (user + system), ns; -1 when unknown. */
  static long cpuNanos() {
    var os = ManagementFactory.getOperatingSystemMXBean();
    return os instanceof com.sun.management.OperatingSystemMXBean sun
        ? sun.getProcessCpuTime()
        : -1;
  }

  /**
   * CPU time of the embedded MariaDB server (this JVM's descendant process named mariadbd), ns; -1
   * when it is not this JVM's child (external servers through OTC_MYSQL_URL) or unknown.
   */
  static long mariadbCpuNanos() {
    long millis = ProcessCpu.descendantsMillis(ProcessHandle.current(), "mariadbd");
    return millis < 0 ? -1 : millis * 1_000_000;
  }

  /**
   * Resets VmHWM to the current RSS (Linux: "5" to clear_refs), so the peak of one run is not the
   * peak of the seeding before it. Returns false where the kernel refuses.
   */
  static boolean resetPeakRss() {
    try {
      Files.writeString(CLEAR_REFS, "5");
      return true;
    } catch (IOException | SecurityException e) {
      return false;
    }
  }

  static long peakRssKb() {
    return statusKb("VmHWM:");
  }

  static long rssKb() {
    return statusKb("VmRSS:");
  }

  private static long statusKb(String field) {
    try {
      for (String line : Files.readAllLines(STATUS)) {
        if (line.startsWith(field)) {
          return Long.parseLong(line.substring(field.length()).replace("kB", "").trim());
        }
      }
    } catch (IOException | NumberFormatException e) {
      return -1;
    }
    return -1;
  }

  /** The 1-minute load average, for the report: figures on a loaded machine are noisy. */
  static double loadAverage() {
    return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
  }
}
