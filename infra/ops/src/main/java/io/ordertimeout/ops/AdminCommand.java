package io.ordertimeout.ops;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ordertimeout.ops.CommandWords.Failure;
import io.ordertimeout.ops.CommandWords.UsageException;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.StringJoiner;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.ProfileCredentialsProvider;
import software.amazon.awssdk.core.exception.SdkClientException;

/**
 * {@code ./ops admin <operation> ...}: the operator's tools (the admin API's /admin routes) from
 * the command line. Against the running {@code ./local up} by default (the API address it recorded
 * in {@link LocalEndpoints}; the local gateway needs no signature), or against a deployed stack
 * with {@code --api <ApiUrl>}, every request signed with SigV4 for execute-api ({@link
 * SigV4Client}).
 *
 * <p>Exit 0 with the answer on stdout: for a person by default ({@link AdminOutput}: the story as a
 * timeline, lists as tables), or with {@code --json} for scripts ({@link AdminJson}: camelCase
 * keys, stored payloads as nested objects); 1 with "status CODE: message" on stderr when the API
 * refused (400, 404, 409) or failed; 2 on a usage error.
 */
public final class AdminCommand {

  static final String NAME = "admin";

  private static final Set<String> VALUE_FLAGS =
      Set.of(
          "api", "region", "profile", "status", "tenant", "order", "type", "limit", "reason",
          "date");
  private static final Set<String> SWITCHES =
      Set.of("all", "filter", "wechat", "disown-trade", "json", "show");

  /** Flags every operation takes: where the API is, and the output's form. */
  private static final Set<String> TRANSPORT = Set.of("api", "region", "profile", "json");

  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  /** One operation: how it is written and what it does, for the usage text. */
  private record Op(String synopsis, String does) {}

  static final Map<String, Op> OPS = new LinkedHashMap<>();

  /** The operations' names, as the runbook names them. */
  public static Set<String> operations() {
    return Set.copyOf(OPS.keySet());
  }

  static {
    OPS.put(
        "dead-letters",
        new Op(
            "dead-letters [--status open|resolved|all] [--tenant T] [--order ID] [--type close_due]"
                + " [--limit 100]",
            "list dead letters with their error history"));
    OPS.put("dead-letter", new Op("dead-letter <id>", "one dead letter: payload, errors"));
    OPS.put(
        "redrive",
        new Op(
            "redrive <id>... | --filter [--order ID] [--type T] [--limit N] | --all",
            "append the events again and resolve the letters (twice = once)"));
    OPS.put(
        "story",
        new Op(
            "story <orderId> [--tenant T] [--wechat]",
            "the timeline: steps against their deadlines, timer and lease, pending entries, flags"
                + " (+ WeChat's trade state)"));
    OPS.put(
        "force-close",
        new Op(
            "force-close <orderId> [--tenant T] --reason TEXT [--disown-trade]",
            "close now through the close path (--disown-trade: its WeChat trade, which the"
                + " close path cannot reach, is another order's)"));
    OPS.put("pauses", new Op("pauses", "which jobs are paused, by whom, why"));
    OPS.put(
        "pause",
        new Op("pause sweep|consumer|all --reason TEXT", "stop the job's closes (no deploy)"));
    OPS.put("resume", new Op("resume sweep|consumer|all", "let the job close again"));
    OPS.put("compensate", new Op("compensate", "run a compensation pass now, print its report"));
    OPS.put(
        "reconcile",
        new Op(
            "reconcile --date YYYY-MM-DD [--tenant T] [--show]",
            "reconcile the day against WeChat's trade bill now and print its report (--show: the"
                + " stored report only)"));
  }

  /** A request of the admin API: method, path with query, JSON body or null. */
  record Call(String method, String path, String body) {}

  /** The words after {@code admin}: operation, positional arguments, flags. */
  record Args(String op, List<String> positionals, Map<String, String> flags) {
    static Args parse(List<String> args) {
      try {
        CommandWords words = CommandWords.parse(args, SWITCHES, VALUE_FLAGS);
        return new Args(words.op(), words.positionals(), words.flags());
      } catch (CommandWords.Refused e) {
        throw new UsageException(e.getMessage());
      }
    }

    List<String> expect(int n) {
      if (positionals.size() != n) {
        throw new UsageException("usage: ./ops admin " + OPS.get(op).synopsis());
      }
      return positionals;
    }

    /** Only these flags (and --api, --region, --profile) may be given. */
    void allow(String... names) {
      Set<String> allowed = Set.of(names);
      for (String flag : flags.keySet()) {
        if (!TRANSPORT.contains(flag) && !allowed.contains(flag)) {
          throw new UsageException("--" + flag + " does not apply to " + op);
        }
      }
    }

    String flag(String name) {
      return flags.get(name);
    }

    String required(String name) {
      String v = flags.get(name);
      if (v == null || v.isBlank()) {
        throw new UsageException(
            op + " needs --" + name + "; usage: ./ops admin " + OPS.get(op).synopsis());
      }
      return v;
    }
  }

  private final Path endpointsFile;
  private final Clock clock;

  /** {@code endpointsFile}: where {@code ./local up} records the API's address. */
  public AdminCommand(Path endpointsFile) {
    this(endpointsFile, Clock.systemUTC());
  }

  /** {@code clock}: the "now" the timeline measures deadlines from. */
  AdminCommand(Path endpointsFile, Clock clock) {
    this.endpointsFile = endpointsFile;
    this.clock = clock;
  }

  public int run(List<String> words, PrintStream out, PrintStream err) {
    try {
      Args args = Args.parse(words);
      if (args.op() == null || args.op().equals("help")) {
        usage(args.op() == null ? err : out);
        return args.op() == null ? 2 : 0;
      }
      if (!OPS.containsKey(args.op())) {
        throw new UsageException("unknown operation '" + args.op() + "'");
      }
      Call call = call(args);
      JsonNode answer = AdminJson.machine(send(args, call));
      out.print(
          args.flags().containsKey("json")
              ? JSON.writeValueAsString(answer) + "\n"
              : AdminOutput.render(args.op(), answer, clock.instant()));
      return 0;
    } catch (UsageException e) {
      err.println("./ops admin: " + e.getMessage());
      usage(err);
      return 2;
    } catch (Failure e) {
      err.println("./ops admin: " + e.getMessage());
      return 1;
    } catch (JsonProcessingException e) {
      err.println("./ops admin: cannot print the answer: " + e.getMessage());
      return 1;
    }
  }

  /** The admin API request an operation makes; refuses bad usage before anything is sent. */
  static Call call(Args args) {
    return switch (args.op()) {
      case "dead-letters" -> {
        args.allow("status", "tenant", "order", "type", "limit");
        args.expect(0);
        yield new Call(
            "GET",
            "/admin/dead-letters"
                + query(
                    "status", args.flag("status"),
                    "tenantId", args.flag("tenant"),
                    "orderId", args.flag("order"),
                    "eventType", args.flag("type"),
                    "limit", args.flag("limit")),
            null);
      }
      case "dead-letter" -> {
        args.allow();
        yield new Call("GET", "/admin/dead-letters/" + segment(args.expect(1).get(0)), null);
      }
      case "redrive" -> redrive(args);
      case "story" -> {
        args.allow("tenant", "wechat");
        String id = args.expect(1).get(0);
        yield new Call(
            "GET",
            "/admin/orders/"
                + segment(id)
                + query(
                    "tenantId",
                    args.flag("tenant"),
                    "wechat",
                    args.flags().containsKey("wechat") ? "true" : null),
            null);
      }
      case "force-close" -> {
        args.allow("tenant", "reason", "disown-trade");
        String id = args.expect(1).get(0);
        ObjectNode body = JSON.createObjectNode().put("reason", args.required("reason"));
        if (args.flags().containsKey("disown-trade")) {
          body.put("disownTrade", true);
        }
        yield new Call(
            "POST",
            "/admin/orders/"
                + segment(id)
                + "/force-close"
                + query("tenantId", args.flag("tenant")),
            body.toString());
      }
      case "pauses" -> {
        args.allow();
        args.expect(0);
        yield new Call("GET", "/admin/pauses", null);
      }
      case "pause" -> {
        args.allow("reason");
        ObjectNode body =
            JSON.createObjectNode()
                .put("job", args.expect(1).get(0))
                .put("reason", args.required("reason"));
        yield new Call("POST", "/admin/pause", body.toString());
      }
      case "resume" -> {
        args.allow();
        ObjectNode body = JSON.createObjectNode().put("job", args.expect(1).get(0));
        yield new Call("POST", "/admin/resume", body.toString());
      }
      case "compensate" -> {
        args.allow();
        args.expect(0);
        yield new Call("POST", "/admin/compensation", "{}");
      }
      case "reconcile" -> {
        args.allow("date", "tenant", "show");
        args.expect(0);
        String date = args.required("date");
        if (args.flags().containsKey("show")) {
          yield new Call(
              "GET",
              "/admin/reconciliation" + query("date", date, "tenantId", args.flag("tenant")),
              null);
        }
        ObjectNode body = JSON.createObjectNode().put("date", date);
        Optional.ofNullable(args.flag("tenant")).ifPresent(t -> body.put("tenantId", t));
        yield new Call("POST", "/admin/reconciliation", body.toString());
      }
      default -> throw new UsageException("unknown operation '" + args.op() + "'");
    };
  }

  private static Call redrive(Args args) {
    args.allow("filter", "all", "order", "type", "limit");
    boolean filter = args.flags().containsKey("filter");
    boolean all = args.flags().containsKey("all");
    ObjectNode body = JSON.createObjectNode();
    if (!filter && !all && !args.positionals().isEmpty()) {
      if (args.flags().keySet().stream().anyMatch(f -> !TRANSPORT.contains(f))) {
        throw new UsageException("redrive <id>... takes no --order, --type or --limit");
      }
      if (args.positionals().size() == 1) {
        return new Call(
            "POST", "/admin/dead-letters/" + segment(args.positionals().get(0)) + "/redrive", "{}");
      }
      ArrayNode ids = body.putArray("ids");
      for (String id : args.positionals()) {
        try {
          ids.add(Long.parseLong(id));
        } catch (NumberFormatException e) {
          throw new UsageException("dead letter ids are numbers, got '" + id + "'");
        }
      }
    } else if (filter && !all && args.positionals().isEmpty()) {
      ObjectNode f = body.putObject("filter");
      Optional.ofNullable(args.flag("order")).ifPresent(v -> f.put("orderId", v));
      Optional.ofNullable(args.flag("type")).ifPresent(v -> f.put("eventType", v));
      Optional.ofNullable(args.flag("limit")).ifPresent(v -> f.put("limit", number(v)));
    } else if (all
        && !filter
        && args.positionals().isEmpty()
        && args.flags().size() == 1 + transport(args)) {
      body.put("all", true);
    } else {
      throw new UsageException("usage: ./ops admin " + OPS.get("redrive").synopsis());
    }
    return new Call("POST", "/admin/dead-letters/redrive", body.toString());
  }

  private static long transport(Args args) {
    return args.flags().keySet().stream().filter(TRANSPORT::contains).count();
  }

  private static int number(String v) {
    try {
      return Integer.parseInt(v);
    } catch (NumberFormatException e) {
      throw new UsageException("--limit must be a whole number, was '" + v + "'");
    }
  }

  private static String query(String... pairs) {
    StringJoiner q = new StringJoiner("&", "?", "").setEmptyValue("");
    for (int i = 0; i + 1 < pairs.length; i += 2) {
      if (pairs[i + 1] != null) {
        q.add(pairs[i] + "=" + URLEncoder.encode(pairs[i + 1], StandardCharsets.UTF_8));
      }
    }
    return q.toString();
  }

  /** A path segment: '|' and '*' are legal in order ids and must be escaped. */
  private static String segment(String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
  }

  // ---- the API ----

  private JsonNode send(Args args, Call call) {
    String api = args.flag("api");
    SigV4Client client;
    URI base;
    if (api != null) {
      base = URI.create(api.replaceAll("/+$", ""));
      Optional<String> profile = Optional.ofNullable(args.flag("profile"));
      String region;
      try {
        region = Smoke.region(base, Optional.ofNullable(args.flag("region")), profile);
      } catch (IllegalArgumentException | IllegalStateException e) {
        throw new UsageException(e.getMessage());
      }
      AwsCredentialsProvider credentials =
          profile
              .<AwsCredentialsProvider>map(ProfileCredentialsProvider::create)
              .orElseGet(() -> DefaultCredentialsProvider.builder().build());
      try {
        client = new SigV4Client(credentials.resolveCredentials(), region);
      } catch (SdkClientException e) {
        throw new Failure("no AWS credentials to sign with: " + e.getMessage());
      }
    } else {
      if (args.flag("region") != null || args.flag("profile") != null) {
        throw new UsageException("--region and --profile apply with --api only");
      }
      base = localApi();
      client = new SigV4Client(null, "local");
    }
    return answer(client, call, base, api != null);
  }

  private static JsonNode answer(SigV4Client client, Call call, URI base, boolean sign) {
    SigV4Client.Response response;
    try {
      response = client.send(call.method(), URI.create(base + call.path()), call.body(), sign);
    } catch (IOException e) {
      throw new Failure("cannot reach the admin API at " + base + " (" + e + ")");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new Failure("interrupted while calling " + call.method() + " " + call.path());
    }
    JsonNode body = read(response.body());
    if (response.status() >= 300) {
      JsonNode error = body.path("error");
      String message =
          error.isMissingNode()
              ? response.body().strip()
              : error.path("code").asText() + ": " + error.path("message").asText();
      throw new Failure(
          call.method() + " " + call.path() + ": " + response.status() + " " + message);
    }
    return body;
  }

  /** What ./local up recorded, if that process still runs. */
  private URI localApi() {
    try {
      return URI.create(
          LocalEndpoints.running(endpointsFile, ", or pass --api <ApiUrl>", ", or pass --api")
              .api()
              .toString()
              .replaceAll("/+$", ""));
    } catch (IllegalStateException e) {
      throw new Failure(e.getMessage());
    }
  }

  private static JsonNode read(String body) {
    try {
      JsonNode node = JSON.readTree(body);
      return node == null ? JSON.createObjectNode() : node;
    } catch (IOException e) {
      return JSON.getNodeFactory().textNode(body);
    }
  }

  private static void usage(PrintStream out) {
    out.println(
        "usage: ./ops admin <operation> [--api <ApiUrl> [--region R] [--profile P]] [--json]");
    Table ops = Table.unheaded(2);
    OPS.values().forEach(op -> ops.row("  " + op.synopsis(), op.does()));
    out.print(ops.render());
    out.println(
        "Without --api: the ./local up recorded in "
            + LocalEndpoints.FILE
            + "; with it: a deployed stack, SigV4-signed (the caller needs execute-api:Invoke on"
            + " /admin/*). --json: the answer for scripts (camelCase keys, payloads as nested"
            + " JSON) instead of the timeline and tables.");
  }
}
