package io.ordertimeout.local;

import io.ordertimeout.ops.Flags;
import io.ordertimeout.ops.LocalEndpoints;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * {@code ./local <command> [flags]}: {@code up} runs the stack until Ctrl-C, {@code demo} runs the
 * scripted scenario against it and exits non-zero when an invariant fails. More commands register
 * in {@link #COMMANDS}. The operator's commands ({@link #MOVED}) are {@code ./ops}'s, whose
 * classpath carries no embedded server: here they only say so.
 */
public final class Main {

  /** One subcommand: runs with its flags, returns the process exit code. */
  @FunctionalInterface
  interface Command {
    int run(Flags flags, PrintStream out) throws Exception;
  }

  static final Map<String, Command> COMMANDS = new LinkedHashMap<>();

  static {
    COMMANDS.put("up", Main::up);
    COMMANDS.put("demo", Main::demo);
  }

  /** Commands of {@code ./ops} now: {@code ./local <one of them>} points there and exits 2. */
  static final List<String> MOVED = List.of("admin", "smoke", "preflight");

  private Main() {}

  public static void main(String[] args) throws Exception {
    System.exit(run(List.of(args), System.out));
  }

  static int run(List<String> args, PrintStream out) throws Exception {
    if (!args.isEmpty() && MOVED.contains(args.get(0))) {
      out.println(
          "./local "
              + args.get(0)
              + " is now ./ops "
              + args.get(0)
              + ": run ./ops "
              + String.join(" ", args));
      return 2;
    }
    if (!args.isEmpty() && args.get(0).equals(WeChatCommand.NAME)) {
      // positional words (./local wechat pay <orderId>), which Flags does not take
      return new WeChatCommand(LocalEndpoints.defaultFile())
          .run(args.subList(1, args.size()), out, System.err);
    }
    if (!args.isEmpty() && args.get(0).equals(TenantCommand.NAME)) {
      return new TenantCommand(LocalEndpoints.defaultFile())
          .run(args.subList(1, args.size()), out, System.err);
    }
    if (args.isEmpty() || !COMMANDS.containsKey(args.get(0))) {
      usage(out);
      return 2;
    }
    Flags flags;
    try {
      flags = Flags.parse(args.subList(1, args.size()));
    } catch (IllegalArgumentException e) {
      out.println(e.getMessage());
      usage(out);
      return 2;
    }
    return COMMANDS.get(args.get(0)).run(flags, out);
  }

  private static void usage(PrintStream out) {
    out.println("usage: ./local <command> [flags]");
    out.println("  up    [--port 8080] [--host 127.0.0.1] [--schedule-scale 1.0]");
    out.println("        [--schedule-jitter on|off] [--schedule-seed N]");
    out.println("        serve every route and run every schedule of template.yaml until Ctrl-C;");
    out.println("        schedules fire at a seeded random offset within each period, as on AWS");
    out.println("  demo  [--orders 2000] [--timeout 10] [--schedule-scale 1.0] [--seed 42]");
    out.println("        start the stack, run the scripted scenario over HTTP, print the report");
    out.println(
        "        then the paid orders' life after payment, deadlines scaled to seconds (docs/getting-started.md)");
    out.println("  wechat <operation> ...   (./local wechat help)");
    out.println(
        "        act as WeChat Pay on a running ./local up: pay, pay late, lose a notification");
    out.println("  tenant add <tenantId> [--sku SKU=QTY ...] | list   (./local tenant help)");
    out.println(
        "        onboard a tenant on a running ./local up: row, stock, merchant; its notify URL"
            + " and IAM mapping");
    out.println(
        "commands: "
            + String.join(", ", COMMANDS.keySet())
            + ", "
            + WeChatCommand.NAME
            + ", "
            + TenantCommand.NAME);
    out.println("admin, smoke and preflight operate a stack: ./ops (usage: ./ops help)");
  }

  private static int up(Flags flags, PrintStream out) throws InterruptedException {
    int primeSeconds = flags.intValue("prime-seconds", StackPriming.DEFAULT_SECONDS);
    if (primeSeconds < 0) {
      throw new IllegalArgumentException("--prime-seconds must be 0 or more, was " + primeSeconds);
    }
    LocalStack stack = LocalStack.start(options(flags, 8080), System.getenv());
    Path endpoints = LocalEndpoints.defaultFile();
    CountDownLatch stopped = new CountDownLatch(1);
    // Ctrl-C and kill stop the stack before the JVM's shutdown hooks run: EmbeddedServers' hook
    // kills Redis and MariaDB, and a sweep still releasing its leases would then wait out Lettuce's
    // 60 s command timeout per shard. A plain shutdown hook runs concurrently with that one.
    sun.misc.SignalHandler stop =
        signal -> {
          out.println("stopping the local stack (" + signal.getName() + ") ...");
          stack.close();
          LocalEndpoints.deleteIfOurs(endpoints);
          stopped.countDown();
        };
    sun.misc.Signal.handle(new sun.misc.Signal("INT"), stop);
    sun.misc.Signal.handle(new sun.misc.Signal("TERM"), stop);
    stack.describe(out);
    if (primeSeconds > 0) {
      out.println("  priming       the order mix for " + primeSeconds + " s ...");
      try {
        out.println(
            "  "
                + StackPriming.prime(stack, Duration.ofSeconds(primeSeconds), StackPriming.USERS)
                    .describe());
      } catch (RuntimeException e) {
        // priming only warms the stack: one that could not be primed still serves
        out.println("  priming       failed, the stack serves unprimed: " + e);
      }
    }
    stack.endpoints().write(endpoints);
    out.println("  endpoints     " + endpoints + " (./local wechat and ./ops admin read it)");
    out.println("ready; Ctrl-C stops");
    stopped.await();
    return 0;
  }

  private static int demo(Flags flags, PrintStream out) {
    DemoScenario.Settings settings =
        new DemoScenario.Settings(
            flags.intValue("orders", 2_000),
            flags.intValue("timeout", 10),
            flags.intValue("seed", 42));
    try (LocalStack stack =
        LocalStack.start(options(flags, 0), DemoScenario.environment(System.getenv()))) {
      stack.describe(out);
      DemoScenario.Report report = new DemoScenario(stack, settings, out).run();
      report.print(out);
      return report.ok() ? 0 : 1;
    }
  }

  static LocalStack.Options options(Flags flags, int defaultPort) {
    return new LocalStack.Options(
        templatePath(),
        flags.value("host", "127.0.0.1"),
        flags.intValue("port", defaultPort),
        Double.parseDouble(flags.value("schedule-scale", "1.0")),
        jitter(flags));
  }

  /**
   * {@code --schedule-jitter on|off} (on by default) and {@code --schedule-seed N} (random by
   * default; printed at start, so a run can be repeated).
   */
  static ScheduleRunner.Jitter jitter(Flags flags) {
    String mode = flags.value("schedule-jitter", "on");
    if (mode.equals("off")) {
      return ScheduleRunner.Jitter.off();
    }
    if (!mode.equals("on")) {
      throw new IllegalArgumentException("--schedule-jitter must be on or off, was " + mode);
    }
    String seed = flags.value("schedule-seed", null);
    if (seed == null) {
      return ScheduleRunner.Jitter.random();
    }
    try {
      return new ScheduleRunner.Jitter(true, Long.parseLong(seed));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--schedule-seed must be a whole number, was " + seed);
    }
  }

  /** template.yaml: -Dotc.template, else the first one found walking up from the working dir. */
  static Path templatePath() {
    String configured = System.getProperty("otc.template");
    if (configured != null) {
      return Path.of(configured);
    }
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      if (Files.isRegularFile(dir.resolve("template.yaml"))) {
        return dir.resolve("template.yaml");
      }
    }
    throw new IllegalStateException(
        "template.yaml not found above " + Path.of("").toAbsolutePath() + "; set -Dotc.template");
  }
}
