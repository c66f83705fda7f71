package io.ordertimeout.ops;

import java.io.PrintStream;
import java.util.List;

/**
 * {@code ./ops <command> ...}: the operator's commands against a stack, deployed or local. {@code
 * admin} calls the admin API, {@code smoke} checks a deploy with one real order, {@code preflight}
 * checks through the AWS API what a deploy needs. None starts a server: the classpath holds the AWS
 * SDK's clients and shared's secret parsers, not the embedded servers of the local stack.
 */
public final class Ops {

  /** The commands, in the order the usage lists them. */
  public static final List<String> COMMANDS =
      List.of(AdminCommand.NAME, Smoke.NAME, Preflight.NAME);

  private Ops() {}

  public static void main(String[] args) {
    System.exit(run(List.of(args), System.out, System.err));
  }

  /** Runs one command; answers its exit code (2: usage). */
  public static int run(List<String> args, PrintStream out, PrintStream err) {
    if (args.isEmpty()) {
      usage(err);
      return 2;
    }
    String command = args.get(0);
    List<String> rest = args.subList(1, args.size());
    if (command.equals("help") || command.equals("--help") || command.equals("-h")) {
      usage(out);
      return 0;
    }
    if (!COMMANDS.contains(command)) {
      err.println("./ops: unknown command '" + command + "'");
      usage(err);
      return 2;
    }
    boolean help = rest.contains("--help") || rest.contains("-h");
    if (command.equals(AdminCommand.NAME)) {
      return new AdminCommand(LocalEndpoints.defaultFile())
          .run(help ? List.of("help") : rest, out, err);
    }
    if (help) {
      usage(out);
      return 0;
    }
    Flags flags;
    try {
      flags = Flags.parse(rest);
    } catch (IllegalArgumentException e) {
      err.println("./ops " + command + ": " + e.getMessage());
      usage(err);
      return 2;
    }
    return command.equals(Smoke.NAME) ? Smoke.command(flags, out) : Preflight.command(flags, out);
  }

  static void usage(PrintStream out) {
    out.println("usage: ./ops <command> ...");
    out.println("  admin <operation> ... [--api <ApiUrl> [--region R] [--profile P]] [--json]");
    out.println(
        "        operate a stack: an order's story, dead letters, force-close, pause, compensation"
            + " (./ops admin help); without --api the running ./local up");
    out.println("  smoke --api <ApiUrl> [--region R] [--profile P] [--sku sku-0000] [--wait 90]");
    out.println(
        "        after a deploy: SigV4-signed place, read, cancel of one real order, and the"
            + " webhook's 401");
    out.println(
        "  preflight --stack-params SubnetIds=a,b,SecurityGroupId=sg,DbSecretArn=...,... [--profile P]"
            + " [--region R]");
    out.println(
        "        before a deploy: the secrets parse, the subnets reach WeChat Pay and AWS, Redis and"
            + " MySQL admit the functions");
    out.println("commands: " + String.join(", ", COMMANDS));
  }
}
