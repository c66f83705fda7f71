package io.ordertimeout.bench;

import io.ordertimeout.config.OtcConfig;
import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.functions.orders.OrderApiHandler;
import io.ordertimeout.wiring.Components;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The first requests of a fresh order-created environment after its init, without and with the
 * priming SnapStart's beforeCheckpoint runs ({@code wiring.Priming}): the local stand-in for the
 * latency of a request served by an environment restored from a snapshot, which AWS documents as
 * dominated by what the snapshot did not load and warm. Each run is a child JVM ({@link
 * FirstRequestChild}) started as Lambda starts a 1,024 MB function (MaxRAM, heap 85%, Serial GC, C1
 * only, one processor), against the embedded MariaDB and Redis; the variants alternate, so a
 * machine's load falls on both alike. Reports per variant the median, min and max of init, the
 * first GET and placement and the warm second ones, and the ratio of first to warm and of primed to
 * unprimed.
 *
 * <pre>
 * ./mvnw -q -pl infra/bench -am verify -DskipTests -Pbench -Dbench.main=FirstRequestBench \
 *   -Dbench.args="--runs 7"
 * </pre>
 */
public final class FirstRequestBench {
  static final String EXISTING = "fr-existing-0001";

  /** One child's figures: init and prime in ms, each request's status and µs. */
  record Run(boolean prime, long initMs, long primeMs, Map<String, long[]> requests) {
    static Run parse(String line) {
      Map<String, String> f = new LinkedHashMap<>();
      for (String part : line.substring(FirstRequestChild.RESULT.length()).trim().split(" ")) {
        String[] kv = part.split("=", 2);
        f.put(kv[0], kv[1]);
      }
      Map<String, long[]> requests = new LinkedHashMap<>();
      for (String r : List.of("get1", "place1", "get2", "place2")) {
        String[] v = f.get(r).split("/");
        requests.put(r, new long[] {Long.parseLong(v[0]), Long.parseLong(v[1])});
      }
      return new Run(
          Boolean.parseBoolean(f.get("prime")),
          Long.parseLong(f.get("initMs")),
          Long.parseLong(f.get("primeMs")),
          requests);
    }
  }

  private FirstRequestBench() {}

  public static void main(String[] args) throws Exception {
    int runs = 5;
    for (int i = 0; i + 1 < args.length; i += 2) {
      if (args[i].equals("--runs")) {
        runs = Integer.parseInt(args[i + 1]);
      } else {
        throw new IllegalArgumentException("unknown flag " + args[i] + "; known: --runs N");
      }
    }
    List<Run> all = run(EmbeddedServers.get(), runs);
    System.out.print(table(all));
    System.exit(0);
  }

  /** {@code runs} children of each variant, alternating; every request must have succeeded. */
  static List<Run> run(EmbeddedServers servers, int runs) throws Exception {
    String schema = servers.createSchema("bench-first");
    Map<String, String> env = new LinkedHashMap<>();
    env.put("OTC_MYSQL_URL", servers.jdbcUrl(schema));
    env.put("OTC_MYSQL_USER", servers.mysqlUser());
    env.put("OTC_MYSQL_PASSWORD", servers.mysqlPassword());
    env.put("OTC_REDIS_URI", servers.redisUri());
    env.put("OTC_KEY_PREFIX", servers.newKeyPrefix("first"));
    Map<String, String> parentEnv = new LinkedHashMap<>(env);
    parentEnv.put("OTC_MIGRATE_ON_START", "true");
    try (Components app = new Components(OtcConfig.fromEnvironment(parentEnv))) {
      try (var c = app.dataSource().getConnection();
          var ps =
              c.prepareStatement(
                  "INSERT INTO stock (tenant_id, sku_id, available, total)"
                      + " VALUES ('default', 'sku-first', 1000000, 1000000)")) {
        ps.executeUpdate();
      }
      int placed =
          new OrderApiHandler(app.orderApi())
              .handleRequest(
                  FirstRequestChild.event(
                      "POST /orders", null, FirstRequestChild.placeBody(EXISTING)),
                  FootprintChild.context("order-created", System.currentTimeMillis() + 29_000))
              .getStatusCode();
      if (placed != 201) {
        throw new IllegalStateException("placing the order the children read answered " + placed);
      }
    }
    List<Run> out = new ArrayList<>();
    for (int i = 0; i < runs; i++) {
      for (boolean prime : new boolean[] {false, true}) {
        out.add(child(env, prime, String.format("fr-%03d-%s-", i, prime ? "p" : "n")));
      }
    }
    return out;
  }

  private static Run child(Map<String, String> env, boolean prime, String orderPrefix)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    int memoryMb = 1024;
    command.add("-XX:MaxRAM=" + memoryMb + "m");
    command.add("-XX:MaxHeapSize=" + memoryMb * 1024L * 85 / 100 + "k");
    command.add("-XX:+UseSerialGC");
    command.add("-XX:+TieredCompilation");
    command.add("-XX:TieredStopAtLevel=1");
    command.add("-XX:ActiveProcessorCount=1");
    command.add("-Duser.timezone=UTC");
    ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
        .filter(a -> a.startsWith("-javaagent:") && a.contains("jacoco"))
        .forEach(command::add);
    command.add("-cp");
    command.add(SweeperProcess.classpath());
    command.add(FirstRequestChild.class.getName());
    command.add(Boolean.toString(prime));
    command.add(EXISTING);
    command.add(orderPrefix);
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    pb.environment().putAll(env);
    Process p = pb.start();
    String result = null;
    StringBuilder tail = new StringBuilder();
    try (BufferedReader out =
        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = out.readLine()) != null) {
        if (line.startsWith(FirstRequestChild.RESULT + " ")) {
          result = line;
        } else if (tail.length() < 4_000) {
          tail.append(line).append('\n');
        }
      }
    }
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException("first-request child did not end within 120 s");
    }
    if (result == null || p.exitValue() != 0) {
      throw new IllegalStateException(
          "first-request child failed (exit " + p.exitValue() + "):\n" + tail);
    }
    Run run = Run.parse(result);
    for (var e : run.requests().entrySet()) {
      long status = e.getValue()[0];
      boolean placing = e.getKey().startsWith("place");
      if (status != (placing ? 201 : 200)) {
        throw new IllegalStateException(e.getKey() + " answered " + status + ": " + result);
      }
    }
    return run;
  }

  /** The Markdown table of the runs: medians (min-max), in ms. */
  static String table(List<Run> all) {
    StringBuilder t =
        new StringBuilder(
            "| priming | runs | init ms | prime ms | first GET ms | first place ms | warm GET ms"
                + " | warm place ms | first / warm GET |\n"
                + "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    double[] firstGet = new double[2];
    for (boolean prime : new boolean[] {false, true}) {
      List<Run> runs = all.stream().filter(r -> r.prime() == prime).toList();
      long[] get1 = micros(runs, "get1");
      long[] get2 = micros(runs, "get2");
      firstGet[prime ? 1 : 0] = median(get1);
      t.append(
          String.format(
              Locale.ROOT,
              "| %s | %d | %s | %s | %s | %s | %s | %s | %.1fx |%n",
              prime ? "primed (beforeCheckpoint)" : "none",
              runs.size(),
              spread(runs.stream().mapToLong(Run::initMs).toArray(), 1),
              spread(runs.stream().mapToLong(Run::primeMs).toArray(), 1),
              spread(get1, 1_000),
              spread(micros(runs, "place1"), 1_000),
              spread(get2, 1_000),
              spread(micros(runs, "place2"), 1_000),
              median(get1) / Math.max(1, median(get2))));
    }
    t.append(
        String.format(
            Locale.ROOT,
            "first GET, primed / none: %.2f%n",
            firstGet[1] / Math.max(1, firstGet[0])));
    return t.toString();
  }

  private static long[] micros(List<Run> runs, String request) {
    return runs.stream().mapToLong(r -> r.requests().get(request)[1]).toArray();
  }

  private static double median(long[] values) {
    long[] v = values.clone();
    java.util.Arrays.sort(v);
    return v.length == 0
        ? 0
        : v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2.0;
  }

  /** "median (min-max)" of {@code values} divided by {@code unit}. */
  private static String spread(long[] values, long unit) {
    long[] v = values.clone();
    java.util.Arrays.sort(v);
    if (v.length == 0) {
      return "-";
    }
    return String.format(
        Locale.ROOT,
        "%.1f (%.1f-%.1f)",
        median(v) / unit,
        v[0] / (double) unit,
        v[v.length - 1] / (double) unit);
  }
}
