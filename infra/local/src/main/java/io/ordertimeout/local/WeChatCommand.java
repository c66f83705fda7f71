package io.ordertimeout.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ordertimeout.embedded.wechat.Endpoint;
import io.ordertimeout.embedded.wechat.Fault;
import io.ordertimeout.ops.CommandWords;
import io.ordertimeout.ops.CommandWords.Failure;
import io.ordertimeout.ops.CommandWords.UsageException;
import io.ordertimeout.ops.LocalEndpoints;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code ./local wechat <operation> ...}: acts as WeChat Pay on a running {@code ./local up}
 * through the simulator's control routes (/_sim on the simulator's own port): the payer pays, pays
 * late, a notification is lost, repeated or delayed, an endpoint fails. The simulator's address is
 * the one {@code ./local up} recorded ({@link LocalEndpoints}) unless {@code --sim} gives it.
 *
 * <p>Exit 0 with the simulator's JSON answer on stdout; 1 with the simulator's message on stderr
 * when it refused (400, 404, 409) or cannot be reached; 2 on a usage error.
 */
final class WeChatCommand {

  static final String NAME = "wechat";

  private static final Set<String> VALUE_FLAGS =
      Set.of("sim", "late", "count", "copies", "abandon");
  private static final Set<String> SWITCHES = Set.of("all");
  private static final ObjectMapper JSON = new ObjectMapper();

  /** One operation: how it is written and what it does, for the usage text. */
  private record Op(String synopsis, String does) {}

  private static final Map<String, Op> OPS = new LinkedHashMap<>();

  static {
    OPS.put("pay", new Op("pay <orderId> [--late 30s]", "the payer pays now, or 30 s from now"));
    OPS.put(
        "user-paying",
        new Op(
            "user-paying <orderId> [--abandon 2m]",
            "the payer is entering the password (close: USERPAYING), walks away after 2 min"));
    OPS.put("abandon", new Op("abandon <orderId>", "the payer walks away now (back to NOTPAY)"));
    OPS.put(
        "lose-notification",
        new Op(
            "lose-notification <orderId>|--all [--count 1]",
            "the next notification(s) never reach the webhook"));
    OPS.put(
        "repeat-notification",
        new Op(
            "repeat-notification <orderId>|--all --copies 3",
            "a payment is notified 3 times; a paid order: 3 more now"));
    OPS.put(
        "delay-notification",
        new Op("delay-notification <orderId>|--all 30s", "the first notification attempt waits"));
    OPS.put(
        "fault",
        new Op(
            "fault <endpoint> <fault> [--count 1]", "the next call(s) to a WeChat endpoint fail"));
    OPS.put("faults", new Op("faults", "the faults still to answer"));
    OPS.put("clear-faults", new Op("clear-faults", "drops every pending fault"));
    OPS.put("show", new Op("show <orderId>", "the trade: state, amount, notifications"));
    OPS.put(
        "refund",
        new Op(
            "refund <outRefundNo> show|abnormal|close|reapply|lose-notification",
            "a refund: settle it ABNORMAL or CLOSED, apply for its exception refund, lose its"
                + " notification (a paid-after-close refund is <orderId>-pac)"));
  }

  /** The refund controls of {@code ./local wechat refund <outRefundNo> <action>}. */
  private static final Set<String> REFUND_ACTIONS =
      Set.of("show", "abnormal", "close", "reapply", "lose-notification");

  /** The words after {@code wechat}: operation, positional arguments, flags. */
  record Args(String op, List<String> positionals, Map<String, String> flags) {
    static Args parse(List<String> args) {
      try {
        CommandWords words = CommandWords.parse(args, SWITCHES, VALUE_FLAGS);
        return new Args(words.op(), words.positionals(), words.flags());
      } catch (CommandWords.Refused e) {
        throw new UsageException(e.getMessage());
      }
    }

    boolean all() {
      return flags.containsKey("all");
    }

    /** Exactly {@code n} positional arguments, else a usage error naming the synopsis. */
    List<String> expect(int n) {
      if (positionals.size() != n) {
        throw new UsageException("usage: ./local wechat " + OPS.get(op).synopsis());
      }
      return positionals;
    }

    /** Only these flags (and --sim) may be given. */
    void allow(String... names) {
      Set<String> allowed = Set.of(names);
      for (String flag : flags.keySet()) {
        if (!flag.equals("sim") && !allowed.contains(flag)) {
          throw new UsageException("--" + flag + " does not apply to " + op);
        }
      }
    }

    int number(String flag, int fallback) {
      String v = flags.get(flag);
      try {
        return v == null ? fallback : Integer.parseInt(v);
      } catch (NumberFormatException e) {
        throw new UsageException("--" + flag + " must be a whole number, was '" + v + "'");
      }
    }
  }

  private final Path endpointsFile;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /** {@code endpointsFile}: where {@code ./local up} records the simulator's address. */
  WeChatCommand(Path endpointsFile) {
    this.endpointsFile = endpointsFile;
  }

  int run(List<String> words, PrintStream out, PrintStream err) {
    try {
      Args args = Args.parse(words);
      if (args.op() == null || args.op().equals("help")) {
        usage(args.op() == null ? err : out);
        return args.op() == null ? 2 : 0;
      }
      if (!OPS.containsKey(args.op())) {
        throw new UsageException("unknown operation '" + args.op() + "'");
      }
      URI simulator = simulator(args);
      out.print(perform(args, simulator).body());
      return 0;
    } catch (UsageException e) {
      err.println("./local wechat: " + e.getMessage());
      usage(err);
      return 2;
    } catch (Failure e) {
      err.println("./local wechat: " + e.getMessage());
      return 1;
    }
  }

  private HttpResponse<String> perform(Args args, URI sim) {
    return switch (args.op()) {
      case "pay" -> pay(args, sim);
      case "user-paying" -> {
        args.allow("abandon");
        String path = trade(args.expect(1).get(0)) + "/user-paying";
        ObjectNode body = JSON.createObjectNode();
        if (args.flags().containsKey("abandon")) {
          body.put("abandon", args.flags().get("abandon"));
        }
        yield send(sim, "POST", path, body.toString());
      }
      case "abandon" -> {
        args.allow();
        yield send(sim, "POST", trade(args.expect(1).get(0)) + "/abandon", "{}");
      }
      case "lose-notification" -> {
        args.allow("all", "count");
        ObjectNode body = JSON.createObjectNode().put("lose", args.number("count", 1));
        yield send(sim, "POST", notifications(args, 0), body.toString());
      }
      case "repeat-notification" -> repeat(args, sim);
      case "delay-notification" -> {
        args.allow("all");
        String delay = args.expect(args.all() ? 1 : 2).get(args.all() ? 0 : 1);
        ObjectNode body = JSON.createObjectNode().put("delay", delay);
        yield send(sim, "POST", notifications(args, 1), body.toString());
      }
      case "fault" -> fault(args, sim);
      case "faults" -> {
        args.allow();
        args.expect(0);
        yield send(sim, "GET", "/_sim/faults", "");
      }
      case "clear-faults" -> {
        args.allow();
        args.expect(0);
        yield send(sim, "DELETE", "/_sim/faults", "");
      }
      case "show" -> {
        args.allow();
        yield send(sim, "GET", trade(args.expect(1).get(0)), "");
      }
      case "refund" -> {
        args.allow();
        List<String> words = args.expect(2);
        String action = words.get(1);
        if (!REFUND_ACTIONS.contains(action)) {
          throw new UsageException("usage: ./local wechat " + OPS.get("refund").synopsis());
        }
        String path =
            "/_sim/refunds/"
                + URLEncoder.encode(words.get(0), StandardCharsets.UTF_8).replace("+", "%20");
        yield action.equals("show")
            ? send(sim, "GET", path, "")
            : send(sim, "POST", path + "/" + action, "{}");
      }
      default -> throw new UsageException("unknown operation '" + args.op() + "'");
    };
  }

  private HttpResponse<String> pay(Args args, URI sim) {
    args.allow("late");
    String path = trade(args.expect(1).get(0)) + "/pay";
    ObjectNode body = JSON.createObjectNode();
    if (args.flags().containsKey("late")) {
      body.put("delay", args.flags().get("late"));
    }
    return send(sim, "POST", path, body.toString());
  }

  /**
   * A paid order's notification already went out, so "repeat" sends more now (resend); an unpaid
   * one's payment will be notified that many times.
   */
  private HttpResponse<String> repeat(Args args, URI sim) {
    args.allow("all", "copies");
    if (!args.flags().containsKey("copies")) {
      throw new UsageException(
          "usage: ./local wechat " + OPS.get("repeat-notification").synopsis());
    }
    ObjectNode body = JSON.createObjectNode().put("copies", args.number("copies", 1));
    if (args.all()) {
      args.expect(0);
      return send(sim, "POST", "/_sim/notifications", body.toString());
    }
    String trade = trade(args.expect(1).get(0));
    String state = read(send(sim, "GET", trade, "")).path("state").asText();
    boolean paid = state.equals("SUCCESS");
    return send(
        sim, "POST", trade + (paid ? "/notifications/resend" : "/notifications"), body.toString());
  }

  private HttpResponse<String> fault(Args args, URI sim) {
    args.allow("count");
    List<String> words = args.expect(2);
    ObjectNode body =
        JSON.createObjectNode()
            .put("endpoint", words.get(0))
            .put("fault", words.get(1))
            .put("count", args.number("count", 1));
    return send(sim, "POST", "/_sim/faults", body.toString());
  }

  /** The order's own controls, or with --all those of every trade; {@code extra} non-id words. */
  private static String notifications(Args args, int extra) {
    if (args.all()) {
      args.expect(extra);
      return "/_sim/notifications";
    }
    return trade(args.expect(1 + extra).get(0)) + "/notifications";
  }

  /** The order id is WeChat's out_trade_no; '|' must be escaped in a path. */
  private static String trade(String orderId) {
    return "/_sim/trades/" + URLEncoder.encode(orderId, StandardCharsets.UTF_8).replace("+", "%20");
  }

  // ---- the simulator ----

  /** --sim, else what ./local up recorded, if that process still runs. */
  private URI simulator(Args args) {
    String given = args.flags().get("sim");
    if (given != null) {
      URI uri = URI.create(given.replaceAll("/+$", ""));
      if (!"http".equals(uri.getScheme()) || uri.getHost() == null || uri.getPort() < 0) {
        throw new UsageException("--sim must be http://HOST:PORT, was '" + given + "'");
      }
      return uri;
    }
    try {
      return LocalEndpoints.running(
              endpointsFile,
              ", or pass --sim http://127.0.0.1:PORT (the 'WeChat Pay' line it prints)",
              ", or pass --sim")
          .simulator();
    } catch (IllegalStateException e) {
      throw new Failure(e.getMessage());
    }
  }

  private HttpResponse<String> send(URI sim, String method, String path, String body) {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(sim + path))
            .timeout(Duration.ofSeconds(10))
            .header("Content-Type", "application/json")
            .method(method, HttpRequest.BodyPublishers.ofString(body))
            .build();
    HttpResponse<String> response;
    try {
      response = http.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new Failure(
          "cannot reach the WeChat Pay simulator at "
              + sim
              + " ("
              + e
              + "); is ./local up running?");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new Failure("interrupted while calling " + method + " " + sim + path);
    }
    if (response.statusCode() >= 300) {
      throw new Failure(method + " " + path + ": " + response.statusCode() + " " + error(response));
    }
    return response;
  }

  /** "TRADE_NOT_FOUND: no trade ... in the simulator", or the raw body if it is not ours. */
  private static String error(HttpResponse<String> response) {
    JsonNode error = read(response).path("error");
    if (error.isMissingNode()) {
      return response.body().strip();
    }
    return error.path("code").asText() + ": " + error.path("message").asText();
  }

  private static JsonNode read(HttpResponse<String> response) {
    try {
      return JSON.readTree(response.body());
    } catch (IOException e) {
      return JSON.createObjectNode();
    }
  }

  private static void usage(PrintStream out) {
    out.println("usage: ./local wechat <operation> [--sim http://127.0.0.1:PORT]");
    OPS.values().forEach(op -> out.printf("  %-47s %s%n", op.synopsis(), op.does()));
    out.println("  endpoint: " + Arrays.toString(Endpoint.values()));
    out.println("  fault:    " + Arrays.toString(Fault.values()));
    out.println(
        "The simulator is the one ./local up recorded in "
            + LocalEndpoints.FILE
            + " unless --sim names it.");
  }
}
