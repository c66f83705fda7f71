package io.ordertimeout.bench;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.util.ArrayList;
import java.util.List;

/**
 * What the Redis server spent during a drain: its CPU seconds ({@code INFO cpu}, user + sys of the
 * redis-server process) and per-command time ({@code INFO commandstats}, which also counts the
 * commands a script calls), so a rate can be traced to where Redis spends it.
 */
final class RedisServerStats implements AutoCloseable {
  private final RedisClient client;
  private final StatefulRedisConnection<String, String> connection;
  private double cpuBefore;

  RedisServerStats(String redisUri) {
    this.client = RedisClient.create(redisUri);
    this.connection = client.connect();
  }

  void start() {
    connection.sync().configResetstat();
    cpuBefore = cpuSeconds();
  }

  /** Redis CPU seconds since {@link #start}. */
  double cpuSeconds() {
    double total = 0;
    for (String line : connection.sync().info("cpu").split("\r?\n")) {
      if (line.startsWith("used_cpu_user:") || line.startsWith("used_cpu_sys:")) {
        total += Double.parseDouble(line.substring(line.indexOf(':') + 1));
      }
    }
    return total - cpuBefore;
  }

  /** {@code cmd=calls/usec} of every command since {@link #start}, busiest first. */
  String commands(long timers) {
    List<String[]> rows = new ArrayList<>();
    for (String line : connection.sync().info("commandstats").split("\r?\n")) {
      if (!line.startsWith("cmdstat_")) {
        continue;
      }
      String cmd = line.substring("cmdstat_".length(), line.indexOf(':'));
      String calls = field(line, "calls=");
      String usec = field(line, "usec=");
      rows.add(new String[] {cmd, calls, usec});
    }
    rows.sort((a, b) -> Long.compare(Long.parseLong(b[2]), Long.parseLong(a[2])));
    StringBuilder out = new StringBuilder();
    for (String[] r : rows) {
      out.append(
          String.format(
              "%s %s calls %.2f us/timer; ",
              r[0], r[1], Long.parseLong(r[2]) / (double) Math.max(1, timers)));
    }
    return out.toString();
  }

  private static String field(String line, String name) {
    int from = line.indexOf(name) + name.length();
    int to = line.indexOf(',', from);
    return line.substring(from, to < 0 ? line.length() : to);
  }

  @Override
  public void close() {
    connection.close();
    client.shutdown();
  }
}
