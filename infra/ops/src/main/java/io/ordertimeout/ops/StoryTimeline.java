package io.ordertimeout.ops;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.StringJoiner;
import java.util.function.Supplier;

/**
 * {@code ./ops admin story}'s default output: the order's timeline from the admin API's story (in
 * {@link AdminJson}'s machine form), each step with its time and its distance to the deadline it
 * was due against, then one line each for what waits now: the open deadline, the timer and the
 * shard's sweeper lease, items, stock ledger, events, pending stream entries, dead letters, flags
 * and WeChat's trade.
 */
final class StoryTimeline {

  /** A step of the timeline; {@code rank} orders steps of the same instant as the flow does. */
  private record Step(Instant at, int rank, String name, String detail) {}

  private final JsonNode story;
  private final JsonNode order;
  private final Instant now;

  private StoryTimeline(JsonNode story, Instant now) {
    this.story = story;
    this.order = story.path("order");
    this.now = now;
  }

  /** The whole text, newline-terminated. */
  static String render(JsonNode story, Instant now) {
    return new StoryTimeline(story, now).render();
  }

  private String render() {
    StringBuilder out = new StringBuilder();
    out.append("order ")
        .append(text(order, "orderId"))
        .append("  tenant ")
        .append(text(order, "tenantId"))
        .append("  ")
        .append(text(order, "status"))
        .append("  ")
        .append(order.path("amountFen").asLong())
        .append(" fen  user ")
        .append(text(order, "userId"))
        .append("  (now ")
        .append(When.at(now))
        .append(")\n\n");
    Table steps = new Table("TIME", "STEP", "DETAIL");
    steps().forEach(s -> steps.row(When.at(s.at()), s.name(), s.detail()));
    out.append(steps.render()).append('\n');
    Table facts = Table.unheaded(2);
    facts.row("deadline", deadline());
    facts.row("timer", timer());
    facts.row("items", items());
    facts.row("stock", stock());
    facts.row("events", events());
    facts.row("pending", pending());
    facts.row("letters", letters());
    facts.row("flags", flags());
    if (!story.path("coupon").isEmpty()) {
      JsonNode c = story.path("coupon").get(0);
      facts.row("coupon", text(c, "couponId") + " " + text(c, "status"));
    }
    if (!story.path("paidAfterClose").isEmpty()) {
      JsonNode p = story.path("paidAfterClose").get(0);
      facts.row(
          "refund",
          "paid after close ("
              + text(p, "detectedBy")
              + "), transaction "
              + text(p, "transactionId")
              + ", refund "
              + text(p, "refundStatus")
              + " after "
              + p.path("refundAttempts").asInt()
              + " attempt(s)");
    }
    if (story.has("wechat")) {
      facts.row("wechat", wechat(story.path("wechat")));
    }
    return out.append(facts.render()).toString();
  }

  // ---- the steps ----

  private List<Step> steps() {
    Instant payBy = instant(order, "expireAt");
    List<Step> steps = new ArrayList<>();
    add(
        steps,
        "createdAt",
        0,
        "placed",
        () ->
            "pay by "
                + When.at(payBy)
                + " ("
                + When.span(Duration.between(instant(order, "createdAt"), payBy))
                + " to pay)");
    add(
        steps,
        "cancelRequestedAt",
        1,
        "cancel asked",
        () -> When.toDeadline(instant(order, "cancelRequestedAt"), payBy, "payment"));
    add(
        steps,
        "prepaidAt",
        2,
        "prepaid",
        () ->
            "prepay "
                + text(order, "prepayId")
                + ", "
                + When.toDeadline(instant(order, "prepaidAt"), payBy, "payment"));
    add(
        steps,
        "paidAt",
        3,
        "paid",
        () ->
            "transaction "
                + text(order, "transactionId")
                + ", "
                + When.toDeadline(instant(order, "paidAt"), payBy, "payment"));
    add(
        steps,
        "closedAt",
        4,
        "closed",
        () ->
            text(order, "closeReason")
                + ", "
                + When.toDeadline(instant(order, "closedAt"), payBy, "payment"));
    Instant receiveBy = instant(order, "receiveDueAt");
    boolean extended = !order.path("receiptExtendedAt").isNull() && order.has("receiptExtendedAt");
    add(
        steps,
        "shippedAt",
        5,
        "shipped",
        () ->
            text(order, "carrier")
                + " "
                + text(order, "trackingNo")
                + (extended ? "" : ", receipt due " + When.at(receiveBy)));
    add(steps, "receiptExtendedAt", 6, "extended", () -> "receipt due " + When.at(receiveBy));
    Instant completeBy = instant(order, "completeDueAt");
    add(
        steps,
        "receivedAt",
        7,
        "received",
        () ->
            "by "
                + text(order, "receivedBy")
                + ", "
                + (receiveBy == null
                    ? "no receipt deadline"
                    : When.toDeadline(instant(order, "receivedAt"), receiveBy, "receipt"))
                + (completeBy == null ? "" : "; complete due " + When.at(completeBy)));
    add(
        steps,
        "afterSaleOpenedAt",
        8,
        "after-sale",
        () ->
            "request " + order.path("afterSales").asInt() + " open; the completion deadline waits");
    add(
        steps,
        "completedAt",
        9,
        "completed",
        () ->
            completeBy == null
                ? "no completion deadline"
                : When.toDeadline(instant(order, "completedAt"), completeBy, "completion"));
    for (JsonNode action : story.path("adminActions")) {
      Instant at = instant(action, "at");
      if (at != null) {
        String outcome = action.path("outcome").path("outcome").asText("");
        steps.add(
            new Step(
                at,
                10,
                "operator",
                text(action, "action")
                    + " by "
                    + text(action, "operator")
                    + ": "
                    + text(action, "reason")
                    + (outcome.isEmpty() ? "" : " -> " + outcome)));
      }
    }
    steps.sort(Comparator.comparing(Step::at).thenComparingInt(Step::rank));
    return steps;
  }

  /** The step at the order's {@code field}, when it is set; its detail may read other fields. */
  private void add(List<Step> steps, String field, int rank, String name, Supplier<String> detail) {
    Instant at = instant(order, field);
    if (at != null) {
      steps.add(new Step(at, rank, name, detail.get()));
    }
  }

  // ---- what waits now ----

  /** The deadline the order's status waits for, and how far it is. */
  private String deadline() {
    String status = text(order, "status");
    return switch (status) {
      case "UNPAID" -> due("payment", instant(order, "expireAt"), "the close path closes it");
      case "SHIPPED" -> due("receipt", instant(order, "receiveDueAt"), "it is received AUTO");
      case "RECEIVED" -> due("completion", instant(order, "completeDueAt"), "it completes");
      case "AFTER_SALE" -> "none while the after-sale request is open (completion waits)";
      case "PAID" -> "none: paid, waiting to be shipped";
      default -> "none: " + status + " is final";
    };
  }

  private String due(String name, Instant at, String then) {
    if (at == null) {
      return name + " deadline not set";
    }
    return name
        + " due "
        + When.at(at)
        + ", "
        + (at.isBefore(now) ? "overdue by " + When.span(between(at)) : When.fromNow(at, now))
        + " ("
        + then
        + ")";
  }

  /** The payment timer's state and the shard's sweeper lease, in one line. */
  private String timer() {
    JsonNode t = story.path("timer");
    String state = text(t, "state");
    StringBuilder line = new StringBuilder(state);
    if (state.equals("SCHEDULED")) {
      Instant at = instant(t, "scoreAt");
      line.append(", due ").append(When.at(at)).append(" (").append(When.fromNow(at, now));
      line.append(')');
    } else if (state.equals("CLAIMED")) {
      Instant until = instant(t, "leaseUntil");
      line.append(", claim lease until ").append(When.at(until));
      line.append(" (").append(When.fromNow(until, now)).append(')');
    }
    line.append("; shard ").append(t.path("shard").asInt()).append("; sweeper lease ");
    JsonNode holder = t.path("sweeperLeaseHolder");
    long ttl = t.path("sweeperLeaseTtlMs").asLong(-2);
    if (holder.isNull() || holder.isMissingNode() || ttl == -2) {
      line.append("free");
    } else {
      line.append("held by ").append(holder.asText()).append(", ");
      line.append(ttl < 0 ? "no expiry" : When.span(Duration.ofMillis(ttl)) + " left");
    }
    return line.toString();
  }

  private String items() {
    StringJoiner items = new StringJoiner(", ").setEmptyValue("none");
    story
        .path("items")
        .forEach(i -> items.add(text(i, "skuId") + " x" + i.path("quantity").asInt()));
    return items.toString();
  }

  private String stock() {
    StringJoiner moves = new StringJoiner(", ").setEmptyValue("no movement");
    story
        .path("ledger")
        .forEach(
            m ->
                moves.add(
                    text(m, "kind") + " " + text(m, "skuId") + " x" + m.path("quantity").asInt()));
    return moves.toString();
  }

  private String events() {
    JsonNode events = story.path("events");
    if (events.isEmpty()) {
      return "none in the outbox";
    }
    StringJoiner names = new StringJoiner(", ");
    int streamed = 0;
    int bridged = 0;
    for (JsonNode e : events) {
      names.add("#" + e.path("seq").asLong() + " " + text(e, "eventType"));
      streamed += e.path("streamedAt").isTextual() ? 1 : 0;
      bridged += e.path("bridgedAt").isTextual() ? 1 : 0;
    }
    return names
        + "; streamed "
        + streamed
        + " of "
        + events.size()
        + ", bridged "
        + bridged
        + " of "
        + events.size();
  }

  private String pending() {
    JsonNode p = story.path("pendingStreamEntries");
    JsonNode entries = p.path("entries");
    String scanned =
        p.path("scanned").asInt()
            + " pending entries scanned"
            + (p.path("truncated").asBoolean() ? ", more not scanned" : "");
    if (entries.isEmpty()) {
      return "none for this order (" + scanned + ")";
    }
    StringJoiner out = new StringJoiner(", ", "", " (" + scanned + ")");
    for (JsonNode e : entries) {
      out.add(
          text(e, "entryId")
              + " at "
              + text(e, "consumer")
              + ", "
              + e.path("deliveries").asLong()
              + " deliveries, idle "
              + When.span(Duration.ofMillis(e.path("idleMs").asLong())));
    }
    return out.toString();
  }

  private String letters() {
    StringJoiner out = new StringJoiner(", ").setEmptyValue("none");
    for (JsonNode l : story.path("deadLetters")) {
      out.add(
          "#"
              + l.path("id").asLong()
              + " "
              + text(l, "eventType")
              + " "
              + (l.path("resolution").isTextual() ? text(l, "resolution") : "OPEN")
              + ", "
              + l.path("deliveries").asLong()
              + " deliveries");
    }
    return out.toString();
  }

  private String flags() {
    StringJoiner out = new StringJoiner(", ").setEmptyValue("none");
    for (JsonNode f : story.path("compensationFlags")) {
      out.add(
          "#"
              + f.path("flagId").asLong()
              + " "
              + text(f, "kind")
              + " "
              + (f.path("resolvedAt").isTextual() ? "resolved" : "open")
              + ", seen "
              + f.path("seenCount").asInt()
              + "x since "
              + When.at(instant(f, "firstSeenAt")));
    }
    return out.toString();
  }

  private static String wechat(JsonNode w) {
    if (w.has("error")) {
      return "error: " + text(w, "error");
    }
    return text(w, "tradeState")
        + ", out_trade_no "
        + text(w, "outTradeNo")
        + (w.path("transactionId").isTextual() ? ", transaction " + text(w, "transactionId") : "")
        + (w.path("amountFen").isNumber() ? ", " + w.path("amountFen").asLong() + " fen" : "")
        + (w.path("successTime").isTextual() ? ", paid " + When.at(instant(w, "successTime")) : "");
  }

  // ---- fields ----

  private Duration between(Instant past) {
    return Duration.between(past, now);
  }

  private static String text(JsonNode node, String field) {
    JsonNode v = node.path(field);
    return v.isNull() || v.isMissingNode() ? "-" : v.asText();
  }

  private static Instant instant(JsonNode node, String field) {
    JsonNode v = node.path(field);
    if (!v.isTextual()) {
      return null;
    }
    try {
      return OffsetDateTime.parse(v.textValue()).toInstant();
    } catch (DateTimeParseException e) {
      return null;
    }
  }
}
