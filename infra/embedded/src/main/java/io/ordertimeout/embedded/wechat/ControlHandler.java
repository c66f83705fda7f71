package io.ordertimeout.embedded.wechat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The simulator's controls over HTTP, on its own port under {@value #PREFIX} (no WeChat Pay path
 * starts with it): what a mall team integrating against {@code ./local up} uses to make the payer
 * pay, pay late, or have notifications lost, repeated or delayed, and WeChat's endpoints fail.
 * Unsigned JSON in and out; the simulator listens on loopback only.
 *
 * <p>Every request is checked whole before anything changes, so a 400 leaves the simulator as it
 * was. 404 for an unknown trade or route, 409 when the trade's state forbids the control (paying a
 * CLOSED trade). Errors: {@code {"error":{"code":"...","message":"..."}}}, as the Order API's.
 */
final class ControlHandler implements HttpHandler {

  static final String PREFIX = "/_sim";

  /**
   * WeChat's out_trade_no alphabet; at most 32 characters (the simulator's trades can be shorter).
   */
  private static final Pattern OUT_TRADE_NO = Pattern.compile("[0-9A-Za-z_\\-|*]{1,32}");

  private static final Pattern OUT_REFUND_NO = Pattern.compile("[0-9A-Za-z_\\-|*@]{1,64}");

  private static final Pattern DURATION = Pattern.compile("(\\d{1,9})(ms|s|m|h)");

  /**
   * Far more than any control body (the largest is about 60 bytes); anything bigger is a mistake.
   */
  private static final int MAX_BODY_BYTES = 4_096;

  /**
   * Pending faults above 1,000 per call are a switched-off endpoint; setLatency/HANG fit better.
   */
  private static final int MAX_FAULT_COUNT = 1_000;

  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private static final List<String> ROUTES =
      List.of(
          "GET /_sim/trades/{outTradeNo}: the trade, its notifications and late payments",
          "POST /_sim/trades/{outTradeNo}/pay {} pays now, {\"delay\":\"30s\"} in 30 s",
          "POST /_sim/trades/{outTradeNo}/user-paying {} the payer is entering the password,"
              + " {\"abandon\":\"2m\"} and walks away after 2 min",
          "POST /_sim/trades/{outTradeNo}/abandon: the payer walks away now (back to NOTPAY)",
          "POST /_sim/trades/{outTradeNo}/notifications {\"lose\":1,\"copies\":3,\"delay\":\"10s\"}",
          "POST /_sim/trades/{outTradeNo}/notifications/resend {\"copies\":1}: a paid trade's",
          "GET /_sim/notifications: the settings for every trade",
          "POST /_sim/notifications {\"lose\":1,\"copies\":3,\"delay\":\"10s\"}: every trade",
          "GET /_sim/faults: the faults still to answer, per endpoint",
          "POST /_sim/faults {\"endpoint\":\"CLOSE\",\"fault\":\"SYSTEM_ERROR\",\"count\":2}",
          "DELETE /_sim/faults: drops every pending fault",
          "GET /_sim/refunds/{outRefundNo}: the refund as a query answers it",
          "POST /_sim/refunds/{outRefundNo}/abnormal: settles ABNORMAL (now, or when created)",
          "POST /_sim/refunds/{outRefundNo}/close: settles CLOSED (now, or when created)",
          "POST /_sim/refunds/{outRefundNo}/reapply: an ABNORMAL refund's exception refund",
          "POST /_sim/refunds/{outRefundNo}/lose-notification: its next notification is lost",
          "POST /_sim/refunds {\"delay\":\"2s\"}: refunds settle this long after creation");

  private final WeChatPaySimulator simulator;

  ControlHandler(WeChatPaySimulator simulator) {
    this.simulator = simulator;
  }

  /** A refused control: its HTTP status, code and message. */
  static final class Refusal extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final int status;
    final String code;

    Refusal(int status, String code, String message) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  /** One answer: status and JSON body. */
  private record Answer(int status, JsonNode body) {}

  @Override
  public void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      Answer answer;
      try {
        answer = answer(exchange);
      } catch (Refusal r) {
        answer = error(r.status, r.code, r.getMessage());
      } catch (IllegalStateException e) {
        answer = error(409, "TRADE_STATE", e.getMessage());
      } catch (IllegalArgumentException e) {
        answer = error(400, "INVALID_FIELD", e.getMessage());
      } catch (RuntimeException e) {
        answer = error(500, "SIMULATOR_ERROR", "simulator failure: " + e);
      }
      send(exchange, answer);
    }
  }

  private Answer answer(HttpExchange exchange) throws IOException {
    String method = exchange.getRequestMethod();
    String path = exchange.getRequestURI().getPath();
    if (!path.equals(PREFIX) && !path.startsWith(PREFIX + "/")) {
      throw notFound(path);
    }
    List<String> parts = segments(path.substring(PREFIX.length()));
    JsonNode body = body(exchange.getRequestBody());
    if (parts.isEmpty()) {
      return on(method, path, "GET", () -> ok(JSON.createObjectNode().set("routes", help())));
    }
    if (parts.get(0).equals("trades")) {
      return trades(method, path, parts, body);
    }
    if (parts.size() == 1 && parts.get(0).equals("notifications")) {
      return notifications(method, path, body);
    }
    if (parts.size() == 1 && parts.get(0).equals("faults")) {
      return faults(method, path, body);
    }
    if (parts.get(0).equals("refunds")) {
      return refunds(method, path, parts, body);
    }
    throw notFound(path);
  }

  private Answer refunds(String method, String path, List<String> parts, JsonNode body) {
    if (parts.size() == 1) {
      return on(
          method,
          path,
          "POST",
          () -> {
            fields(body, "delay");
            if (!body.has("delay")) {
              throw new Refusal(400, "MISSING_FIELD", "give delay, e.g. \"2s\"");
            }
            simulator.setRefundDelay(duration(body, "delay"));
            return ok(JSON.createObjectNode().put("delay", format(duration(body, "delay"))));
          });
    }
    if (parts.size() > 3) {
      throw notFound(path);
    }
    String outRefundNo = outRefundNo(parts.get(1));
    String action = parts.size() == 3 ? parts.get(2) : "";
    return switch (action) {
      case "" -> on(method, path, "GET", () -> ok(refundView(outRefundNo)));
      case "abnormal", "close" ->
          on(
              method,
              path,
              "POST",
              () -> {
                fields(body);
                String outcome = action.equals("close") ? "CLOSED" : "ABNORMAL";
                simulator.settleRefund(outRefundNo, outcome);
                return ok(plannedOrRefund(outRefundNo, outcome));
              });
      case "reapply" ->
          on(
              method,
              path,
              "POST",
              () -> {
                fields(body);
                simulator.reapplyAbnormalRefund(outRefundNo);
                return ok(refundView(outRefundNo));
              });
      case "lose-notification" ->
          on(
              method,
              path,
              "POST",
              () -> {
                fields(body);
                simulator.loseRefundNotification(outRefundNo);
                return ok(JSON.createObjectNode().put("outRefundNo", outRefundNo).put("lose", 1));
              });
      default -> throw notFound(path);
    };
  }

  private JsonNode refundView(String outRefundNo) {
    return simulator
        .refund(outRefundNo)
        .orElseThrow(
            () ->
                new Refusal(
                    404,
                    "REFUND_NOT_FOUND",
                    "no refund " + outRefundNo + " in the simulator (a refund exists once asked)"));
  }

  private JsonNode plannedOrRefund(String outRefundNo, String outcome) {
    return simulator.refund(outRefundNo).isPresent()
        ? refundView(outRefundNo)
        : JSON.createObjectNode().put("outRefundNo", outRefundNo).put("planned", outcome);
  }

  /** WeChat's out_refund_no: at most 64 of the out_trade_no alphabet. */
  private static String outRefundNo(String text) {
    if (!OUT_REFUND_NO.matcher(text).matches()) {
      throw invalid("out_refund_no must be 1-64 of [0-9A-Za-z_-|*@], was '" + text + "'");
    }
    return text;
  }

  // ---- routes ----

  private Answer trades(String method, String path, List<String> parts, JsonNode body) {
    if (parts.size() < 2 || parts.size() > 4) {
      throw notFound(path);
    }
    String outTradeNo = outTradeNo(parts.get(1));
    String action = String.join("/", parts.subList(2, parts.size()));
    return switch (action) {
      case "" -> on(method, path, "GET", () -> ok(view(existing(outTradeNo))));
      case "pay" -> on(method, path, "POST", () -> pay(existing(outTradeNo), body));
      case "user-paying" -> on(method, path, "POST", () -> userPaying(existing(outTradeNo), body));
      case "abandon" -> on(method, path, "POST", () -> abandon(existing(outTradeNo), body));
      case "notifications" ->
          on(method, path, "POST", () -> tradeNotifications(existing(outTradeNo), body));
      case "notifications/resend" ->
          on(method, path, "POST", () -> resend(existing(outTradeNo), body));
      default -> throw notFound(path);
    };
  }

  private Answer pay(String outTradeNo, JsonNode body) {
    fields(body, "delay");
    if (!body.has("delay")) {
      simulator.pay(outTradeNo);
      return ok(view(outTradeNo));
    }
    simulator.payLater(outTradeNo, duration(body, "delay"));
    return new Answer(202, view(outTradeNo));
  }

  private Answer userPaying(String outTradeNo, JsonNode body) {
    fields(body, "abandon");
    if (body.has("abandon")) {
      simulator.setUserPaying(outTradeNo, duration(body, "abandon"));
    } else {
      simulator.setUserPaying(outTradeNo);
    }
    return ok(view(outTradeNo));
  }

  private Answer abandon(String outTradeNo, JsonNode body) {
    fields(body);
    simulator.abandonPayment(outTradeNo);
    return ok(view(outTradeNo));
  }

  private Answer tradeNotifications(String outTradeNo, JsonNode body) {
    Change change = change(body);
    if (change.lose != null) {
      simulator.loseNotifications(outTradeNo, change.lose);
    }
    if (change.copies != null) {
      simulator.setNotificationCopies(outTradeNo, change.copies);
    }
    if (change.delay != null) {
      simulator.setNotificationDelay(outTradeNo, change.delay);
    }
    return ok(view(outTradeNo));
  }

  private Answer resend(String outTradeNo, JsonNode body) {
    fields(body, "copies");
    int copies = body.has("copies") ? integer(body, "copies") : 1;
    NotificationControls.checkCopies(copies);
    simulator.resendNotification(outTradeNo, copies);
    return new Answer(202, view(outTradeNo));
  }

  private Answer notifications(String method, String path, JsonNode body) {
    return switch (method) {
      case "GET" -> ok(settings(simulator.notificationSettings()));
      case "POST" -> {
        Change change = change(body);
        if (change.lose != null) {
          simulator.loseNotifications(change.lose);
        }
        if (change.copies != null) {
          simulator.setNotificationCopies(change.copies);
        }
        if (change.delay != null) {
          simulator.setNotificationDelay(change.delay);
        }
        yield ok(settings(simulator.notificationSettings()));
      }
      default -> throw methodNotAllowed(method, path, "GET, POST");
    };
  }

  private Answer faults(String method, String path, JsonNode body) {
    return switch (method) {
      case "GET" -> ok(pendingFaults());
      case "DELETE" -> {
        int cleared = simulator.clearFaults();
        yield ok(pendingFaults().put("cleared", cleared));
      }
      case "POST" -> injectFault(body);
      default -> throw methodNotAllowed(method, path, "GET, POST, DELETE");
    };
  }

  private Answer injectFault(JsonNode body) {
    fields(body, "endpoint", "fault", "count");
    Endpoint endpoint = named(Endpoint.class, body, "endpoint");
    Fault fault = named(Fault.class, body, "fault");
    int count = body.has("count") ? integer(body, "count") : 1;
    if (count < 1 || count > MAX_FAULT_COUNT) {
      throw invalid("count must be 1.." + MAX_FAULT_COUNT + ", was " + count);
    }
    simulator.injectFault(endpoint, fault, count);
    return ok(pendingFaults());
  }

  // ---- views ----

  private ObjectNode view(String outTradeNo) {
    TradeSnapshot t = simulator.trade(outTradeNo).orElseThrow(() -> notFoundTrade(outTradeNo));
    ObjectNode node =
        JSON.createObjectNode()
            .put("outTradeNo", t.outTradeNo())
            .put("state", t.state().name())
            .put("amountFen", t.amountFen())
            .put("payerOpenId", t.payerOpenId())
            .put("prepayId", t.prepayId())
            .put("transactionId", t.transactionId())
            .put("successTime", t.successTime() == null ? null : TradeBook.rfc3339(t.successTime()))
            .put("timeExpire", t.timeExpire() == null ? null : TradeBook.rfc3339(t.timeExpire()))
            .put("refundedFen", t.refundedFen());
    ObjectNode notifications = settings(simulator.notificationSettings(outTradeNo));
    NotificationControls.Counts counts = simulator.notificationCounts(outTradeNo);
    notifications.put("sent", counts.sent()).put("lost", counts.lost());
    ArrayNode deliveries = notifications.putArray("deliveries");
    for (Delivery d : simulator.deliveries()) {
      if (d.outTradeNo().equals(outTradeNo)) {
        deliveries
            .addObject()
            .put("notificationId", d.notificationId())
            .put("attempt", d.attempt())
            .put("status", d.status())
            .put("at", TradeBook.rfc3339(d.at()));
      }
    }
    node.set("notifications", notifications);
    ArrayNode late = node.putArray("latePayments");
    for (LatePayment p : simulator.latePayments(outTradeNo)) {
      late.addObject()
          .put("dueAt", TradeBook.rfc3339(p.dueAt()))
          .put("outcome", p.outcome().name())
          .put("detail", p.detail());
    }
    return node;
  }

  private static ObjectNode settings(NotificationControls.Settings s) {
    return JSON.createObjectNode()
        .put("copies", s.copies())
        .put("delay", format(s.delay()))
        .put("toLose", s.toLose());
  }

  private ObjectNode pendingFaults() {
    ObjectNode node = JSON.createObjectNode();
    ObjectNode pending = node.putObject("pending");
    simulator
        .pendingFaults()
        .forEach(
            (endpoint, list) -> {
              if (!list.isEmpty()) {
                ArrayNode faults = pending.putArray(endpoint.name());
                list.forEach(f -> faults.add(f.name()));
              }
            });
    return node;
  }

  private static ArrayNode help() {
    ArrayNode routes = JSON.createArrayNode();
    ROUTES.forEach(routes::add);
    return routes;
  }

  // ---- input ----

  /** A notification control's body, checked whole before any of it is applied. */
  private record Change(Integer lose, Integer copies, Duration delay) {}

  private static Change change(JsonNode body) {
    fields(body, "lose", "copies", "delay");
    if (body.isEmpty()) {
      throw new Refusal(400, "MISSING_FIELD", "give at least one of lose, copies, delay");
    }
    Integer lose = body.has("lose") ? integer(body, "lose") : null;
    Integer copies = body.has("copies") ? integer(body, "copies") : null;
    Duration delay = body.has("delay") ? duration(body, "delay") : null;
    if (lose != null) {
      NotificationControls.checkLose(lose);
    }
    if (copies != null) {
      NotificationControls.checkCopies(copies);
    }
    if (delay != null) {
      NotificationControls.checkDelay(delay);
    }
    return new Change(lose, copies, delay);
  }

  /** An empty body is {}; anything else must be a JSON object of at most 4 KiB. */
  private static JsonNode body(InputStream in) throws IOException {
    byte[] bytes = in.readNBytes(MAX_BODY_BYTES + 1);
    if (bytes.length > MAX_BODY_BYTES) {
      throw new Refusal(400, "BODY_TOO_LARGE", "a control body is at most 4096 bytes");
    }
    String text = new String(bytes, StandardCharsets.UTF_8);
    if (text.isBlank()) {
      return JSON.createObjectNode();
    }
    JsonNode node;
    try {
      node = JSON.readTree(text);
    } catch (IOException e) {
      // Jackson's first line names the problem; the rest is its location in the source
      throw new Refusal(
          400,
          "INVALID_JSON",
          "the body is not JSON: " + e.getMessage().lines().findFirst().orElse(""));
    }
    if (node == null || !node.isObject()) {
      throw new Refusal(400, "INVALID_JSON", "the body must be a JSON object");
    }
    return node;
  }

  /** Refuses any field not in {@code allowed}, so a typo ("cpies") is not silently ignored. */
  private static void fields(JsonNode body, String... allowed) {
    Set<String> names = Set.of(allowed);
    for (Iterator<String> it = body.fieldNames(); it.hasNext(); ) {
      String name = it.next();
      if (!names.contains(name)) {
        throw new Refusal(
            400,
            "UNKNOWN_FIELD",
            "unknown field '"
                + name
                + "'"
                + (allowed.length == 0 ? "; this control takes none" : "; allowed: ")
                + String.join(", ", allowed));
      }
    }
  }

  private static int integer(JsonNode body, String field) {
    JsonNode node = body.get(field);
    if (!node.isIntegralNumber() || !node.canConvertToInt()) {
      throw invalid(field + " must be a whole number, was " + node);
    }
    return node.intValue();
  }

  /** "500ms", "30s", "2m", "1h"; one unit, as {@code ./local wechat} takes them. */
  static Duration duration(JsonNode body, String field) {
    JsonNode node = body.get(field);
    Matcher m = DURATION.matcher(node.isTextual() ? node.textValue() : "");
    if (!m.matches()) {
      throw invalid(field + " must be a duration such as \"500ms\", \"30s\", \"2m\", was " + node);
    }
    long n = Long.parseLong(m.group(1));
    return switch (m.group(2)) {
      case "ms" -> Duration.ofMillis(n);
      case "s" -> Duration.ofSeconds(n);
      case "m" -> Duration.ofMinutes(n);
      default -> Duration.ofHours(n);
    };
  }

  static String format(Duration d) {
    long millis = d.toMillis();
    return millis % 1_000 == 0 ? millis / 1_000 + "s" : millis + "ms";
  }

  /** QUERY, close, refund_query, refund-query: an enum constant, case and dash insensitive. */
  private static <E extends Enum<E>> E named(Class<E> type, JsonNode body, String field) {
    JsonNode node = body.get(field);
    if (node == null) {
      throw new Refusal(400, "MISSING_FIELD", field + " is required; one of " + names(type));
    }
    String text = node.isTextual() ? node.textValue() : "";
    String name = text.toUpperCase(Locale.ROOT).replace('-', '_');
    for (E constant : type.getEnumConstants()) {
      if (constant.name().equals(name)) {
        return constant;
      }
    }
    throw invalid(field + " must be one of " + names(type) + ", was " + node);
  }

  private static <E extends Enum<E>> String names(Class<E> type) {
    return Arrays.toString(type.getEnumConstants());
  }

  private static String outTradeNo(String text) {
    if (!OUT_TRADE_NO.matcher(text).matches()) {
      throw invalid("out_trade_no must be 1-32 of [0-9A-Za-z_-|*], was '" + text + "'");
    }
    return text;
  }

  private String existing(String outTradeNo) {
    if (simulator.trade(outTradeNo).isEmpty()) {
      throw notFoundTrade(outTradeNo);
    }
    return outTradeNo;
  }

  private static List<String> segments(String rest) {
    List<String> parts = new ArrayList<>();
    for (String part : rest.split("/")) {
      if (!part.isEmpty()) {
        parts.add(part);
      }
    }
    return parts;
  }

  // ---- answers ----

  private static Answer on(String method, String path, String expected, Supplier<Answer> action) {
    if (!expected.equals(method)) {
      throw methodNotAllowed(method, path, expected);
    }
    return action.get();
  }

  private static Answer ok(JsonNode body) {
    return new Answer(200, body);
  }

  private static Answer error(int status, String code, String message) {
    ObjectNode node = JSON.createObjectNode();
    node.putObject("error").put("code", code).put("message", message);
    return new Answer(status, node);
  }

  private static Refusal invalid(String message) {
    return new Refusal(400, "INVALID_FIELD", message);
  }

  private static Refusal notFound(String path) {
    return new Refusal(
        404, "NO_SUCH_CONTROL", "no control at " + path + "; GET " + PREFIX + " lists them");
  }

  private static Refusal notFoundTrade(String outTradeNo) {
    return new Refusal(
        404,
        "TRADE_NOT_FOUND",
        "no trade "
            + outTradeNo
            + " in the simulator; a trade exists once the order is prepaid"
            + " (POST /orders/{id}/prepay)");
  }

  private static Refusal methodNotAllowed(String method, String path, String allowed) {
    return new Refusal(
        405, "METHOD_NOT_ALLOWED", method + " " + path + " is not a control; use " + allowed);
  }

  private static void send(HttpExchange exchange, Answer answer) throws IOException {
    byte[] bytes = (JSON.writeValueAsString(answer.body()) + "\n").getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "application/json; charset=utf-8");
    exchange.sendResponseHeaders(answer.status(), bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }
}
