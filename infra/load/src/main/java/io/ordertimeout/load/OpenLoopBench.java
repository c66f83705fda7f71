package io.ordertimeout.load;

import com.sun.net.httpserver.HttpServer;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.ordertimeout.bench.BusyCheck;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import org.HdrHistogram.Histogram;

/**
 * Open-loop load on a running {@code ./local up} (see docs/benchmarks/README.md, "Open-loop load"):
 *
 * <ol>
 *   <li>the first minute: right after the stack is ready, {@code --first-rate} users a second for
 *       {@code --first-seconds} (60) (priming: what the first users after a deploy or a cold start
 *       see);
 *   <li>the capacity: steps of {@code --search-seconds} at each of {@code --rates} until placement
 *       p99 passes {@code --slo-ms}; the capacity is the highest rate whose p99 stayed within it;
 *   <li>at each of {@code --fractions} percent of that capacity, {@code --seconds}: placement and
 *       close-lag percentiles, the table and its plot;
 *   <li>the steady state at {@code --first-rate} again, to set the first minute against.
 * </ol>
 *
 * <p>Every step's orders expire {@code --timeout} s after placement, so closes run at the placement
 * rate; one in {@code --pay-every} is paid, one in {@code --cancel-every} cancelled. After each
 * step and its closes, {@link BusyCheck} reads the stack's MariaDB: every order of the step ended
 * CLOSED or PAID exactly once, PAID exactly when the simulator took the money, none closed early,
 * and the invariants hold; any violation makes the run exit 1. Figures are printed, never asserted.
 */
public final class OpenLoopBench {

  /** One step's outcome. */
  record Step(
      String label,
      double rate,
      int seconds,
      Histogram place,
      long placeUnexpected,
      Histogram closeLag,
      long placed,
      long paid,
      long closed,
      List<String> violations,
      StackCpu cpu,
      String load) {

    boolean ok() {
      return violations.isEmpty();
    }
  }

  private final Options options;
  private final HikariDataSource db;
  private final List<Step> steps = new ArrayList<>();
  private int stepNumber;

  private OpenLoopBench(Options options) {
    this.options = options;
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(options.jdbc());
    config.setUsername(options.user());
    config.setPassword(System.getenv().getOrDefault("OTC_MYSQL_PASSWORD", ""));
    config.setMaximumPoolSize(2);
    config.setPoolName("open-loop-check");
    this.db = new HikariDataSource(config);
  }

  public static void main(String[] args) throws Exception {
    if (args.length == 4 && args[0].equals("--replot")) {
      // --replot open-loop.md CAPACITY out.png: a run's plot drawn again from its report
      String md = Files.readString(Path.of(args[1]), StandardCharsets.UTF_8);
      Report.plot(
          new Capacity(Double.parseDouble(args[2]), 0, 0, 0), Report.points(md), Path.of(args[3]));
      return;
    }
    Options options = Options.parse(args);
    Files.createDirectories(options.out());
    OpenLoopBench bench = new OpenLoopBench(options);
    boolean ok;
    try {
      ok = bench.run();
    } finally {
      bench.db.close();
    }
    System.exit(ok ? 0 : 1);
  }

  private boolean run() throws IOException, SQLException, InterruptedException {
    warmUpClient();
    Step first = step("first minute", options.firstRate(), options.firstSeconds());
    Capacity capacity = searchCapacity();
    say(capacity.describe(options.sloMs()));
    List<Step> table = new ArrayList<>();
    if (capacity.rate() > 0) {
      for (int fraction : options.fractions()) {
        table.add(
            step(
                fraction + "% of capacity", capacity.rate() * fraction / 100.0, options.seconds()));
      }
    }
    Step steady = step("steady state", options.firstRate(), options.firstSeconds());
    String report = Report.markdown(options, first, steady, capacity, table, steps);
    Files.writeString(options.out().resolve("open-loop.md"), report, StandardCharsets.UTF_8);
    List<Report.Point> points =
        steps.stream().filter(st -> Report.steadyState(st.label())).map(Report.Point::of).toList();
    if (!points.isEmpty()) {
      Report.plot(capacity, points, options.out().resolve("open-loop.png"));
    }
    System.out.println(report);
    boolean ok = steps.stream().allMatch(Step::ok);
    say(ok ? "check: OK in every step" : "check: FAILED, see the table");
    return ok;
  }

  /**
   * Gatling's own JVM starts cold too: its first seconds would count against the stack's first
   * minute. It sends the same mix at the first rate to a stub in this JVM first (answers with the
   * expected status, no body), so the first minute measures the stack's start, not the client's.
   */
  private void warmUpClient() throws IOException {
    if (options.clientWarmupSeconds() <= 0) {
      return;
    }
    HttpServer stub =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    stub.createContext(
        "/",
        exchange -> {
          String path = exchange.getRequestURI().getPath();
          int status = path.equals("/orders") ? 201 : path.endsWith("/cancel") ? 202 : 200;
          exchange.getRequestBody().readAllBytes();
          exchange.sendResponseHeaders(status, -1);
          exchange.close();
        });
    stub.setExecutor(Executors.newFixedThreadPool(4));
    stub.start();
    try {
      String url = "http://127.0.0.1:" + stub.getAddress().getPort();
      say("warming Gatling up against a stub for " + options.clientWarmupSeconds() + " s");
      new LoadSettings(
              url,
              url,
              options.runId() + "w",
              options.firstRate(),
              options.clientWarmupSeconds(),
              options.timeoutSeconds(),
              options.payEvery(),
              options.cancelEvery())
          .toSystemProperties();
      OrderMixSimulation.latencies = new Latencies();
      gatling("client warm-up");
    } finally {
      stub.stop(0);
      ((java.util.concurrent.ExecutorService) stub.getExecutor()).shutdownNow();
    }
  }

  private int gatling(String description) {
    return io.gatling.app.Gatling$.MODULE$.fromArgs(
        new String[] {
          "-s", OrderMixSimulation.class.getName(),
          "-rf", options.out().resolve("gatling").toString(),
          "-rd", description
        });
  }

  private Capacity searchCapacity() throws IOException, SQLException, InterruptedException {
    Map<Double, Long> p99 = new HashMap<>();
    for (double rate : options.rates()) {
      Step s = step("search " + fmt(rate) + "/s", rate, options.searchSeconds());
      long value = s.place().getValueAtPercentile(99);
      p99.put(rate, value);
      if (value > options.sloMs() || s.placeUnexpected() > 0) {
        break;
      }
    }
    return Capacity.from(options.rates(), p99, options.sloMs());
  }

  private Step step(String label, double rate, int seconds)
      throws IOException, SQLException, InterruptedException {
    stepNumber++;
    String prefix = options.runId() + String.format(Locale.ROOT, "s%02d", stepNumber);
    say(
        String.format(
            Locale.ROOT,
            "step %d (%s): %s users/s for %d s, ids %s...",
            stepNumber,
            label,
            fmt(rate),
            seconds,
            prefix));
    String loadBefore = loadAverage();
    StackCpu cpuBefore = StackCpu.of(options.stackPid());
    new LoadSettings(
            options.api(),
            options.sim(),
            prefix,
            rate,
            seconds,
            options.timeoutSeconds(),
            options.payEvery(),
            options.cancelEvery())
        .toSystemProperties();
    Latencies latencies = new Latencies();
    OrderMixSimulation.latencies = latencies;
    OrderMixSimulation.PAID_AT_WECHAT.clear();
    int rc = gatling(label);
    if (rc != 0) {
      say("Gatling exited " + rc + " (a request failed its check: see the counts below)");
    }
    // the step's last orders expire timeout s after their placement; give the closes 10 s more
    Thread.sleep((options.timeoutSeconds() + 10) * 1000L);
    StackCpu cpu = StackCpu.of(options.stackPid()).since(cpuBefore);
    Set<String> paid = Set.copyOf(OrderMixSimulation.PAID_AT_WECHAT);
    BusyCheck.Result check = BusyCheck.check(db, prefix, paid);
    String load = loadBefore + " / " + loadAverage();
    Histogram place = latencies.of("place");
    Step s =
        new Step(
            label,
            rate,
            seconds,
            place,
            latencies.unexpected("place"),
            check.lagMillis(),
            check.placed(),
            check.paid(),
            check.closed(),
            check.violations(),
            cpu,
            load);
    steps.add(s);
    say("  requests: " + latencies.counts());
    say("  " + check.summary().strip().replace("\n", "\n  "));
    say("  stack CPU per order, µs (JVM / MariaDB / Redis): " + cpu.perOrder(check.placed()));
    return s;
  }

  static String fmt(double rate) {
    return rate == Math.rint(rate)
        ? Long.toString((long) rate)
        : String.format(Locale.ROOT, "%.1f", rate);
  }

  private static String loadAverage() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
      return f[0];
    } catch (IOException e) {
      return "?";
    }
  }

  private static void say(String line) {
    System.out.println("open-loop: " + line);
  }

  /** The command line. */
  record Options(
      String api,
      String sim,
      String jdbc,
      String user,
      Path out,
      String runId,
      double firstRate,
      int firstSeconds,
      int clientWarmupSeconds,
      List<Double> rates,
      int searchSeconds,
      int seconds,
      List<Integer> fractions,
      long sloMs,
      int timeoutSeconds,
      int payEvery,
      int cancelEvery,
      long stackPid) {

    static final String USAGE =
        "OpenLoopBench --api URL --sim URL --jdbc URL --user U [--out DIR] [--run ID]"
            + " [--first-rate 100] [--first-seconds 60] [--client-warmup-seconds 20] [--rates 100,200,...] [--search-seconds 30] [--seconds 60]"
            + " [--fractions 25,50,75,90] [--slo-ms 100] [--timeout 5] [--pay-every 4]"
            + " [--cancel-every 10] [--stack-pid PID]";

    static Options parse(String[] args) {
      Map<String, String> a = new HashMap<>();
      for (int i = 0; i < args.length; i += 2) {
        if (!args[i].startsWith("--") || i + 1 >= args.length) {
          throw new IllegalArgumentException("expected --name value pairs; usage: " + USAGE);
        }
        a.put(args[i].substring(2), args[i + 1]);
      }
      for (String required : List.of("api", "sim", "jdbc", "user")) {
        if (!a.containsKey(required)) {
          throw new IllegalArgumentException("--" + required + " is required; usage: " + USAGE);
        }
      }
      return new Options(
          a.get("api"),
          a.get("sim"),
          a.get("jdbc"),
          a.get("user"),
          Path.of(a.getOrDefault("out", "bench-results/open-loop")),
          a.getOrDefault("run", "g" + (System.currentTimeMillis() / 1000 % 1_000_000)),
          Double.parseDouble(a.getOrDefault("first-rate", "100")),
          Integer.parseInt(a.getOrDefault("first-seconds", "60")),
          Integer.parseInt(a.getOrDefault("client-warmup-seconds", "20")),
          Arrays.stream(
                  a.getOrDefault("rates", "100,200,300,400,500,600,700,800,900,1000").split(","))
              .map(Double::parseDouble)
              .sorted()
              .toList(),
          Integer.parseInt(a.getOrDefault("search-seconds", "30")),
          Integer.parseInt(a.getOrDefault("seconds", "60")),
          Arrays.stream(a.getOrDefault("fractions", "25,50,75,90").split(","))
              .map(Integer::parseInt)
              .toList(),
          Long.parseLong(a.getOrDefault("slo-ms", "100")),
          Integer.parseInt(a.getOrDefault("timeout", "5")),
          Integer.parseInt(a.getOrDefault("pay-every", "4")),
          Integer.parseInt(a.getOrDefault("cancel-every", "10")),
          Long.parseLong(a.getOrDefault("stack-pid", "0")));
    }
  }
}
