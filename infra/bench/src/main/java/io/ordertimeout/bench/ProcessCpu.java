package io.ordertimeout.bench;

import java.time.Duration;

/**
 * CPU time of processes from the OS's accounting ({@link ProcessHandle.Info#totalCpuDuration()}): a
 * process, or the embedded servers among its descendants, found by their executable's name. Used by
 * the scenario bench (this JVM's MariaDB) and the open-loop load (the stack's MariaDB and Redis).
 */
public final class ProcessCpu {
  private ProcessCpu() {}

  /** CPU milliseconds of {@code p}; -1 when the OS does not say. */
  public static long millis(ProcessHandle p) {
    return p.info().totalCpuDuration().map(Duration::toMillis).orElse(-1L);
  }

  /**
   * CPU milliseconds of {@code root}'s descendants named {@code executable}, summed; -1 when none
   * is found or the OS does not say.
   */
  public static long descendantsMillis(ProcessHandle root, String executable) {
    return root.descendants()
        // the embedded Redis runs as redis-server-<version>-<platform>
        .filter(p -> p.info().command().map(c -> named(c, executable)).orElse(false))
        .mapToLong(ProcessCpu::millis)
        .reduce(-1, (a, b) -> Math.max(a, 0) + Math.max(b, 0));
  }

  /** Whether {@code command}'s file is {@code executable}, or it with a {@code -} suffix. */
  public static boolean named(String command, String executable) {
    String file = command.substring(command.lastIndexOf('/') + 1);
    return file.equals(executable) || file.startsWith(executable + "-");
  }
}
