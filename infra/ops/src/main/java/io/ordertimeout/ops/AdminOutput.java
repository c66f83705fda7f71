package io.ordertimeout.ops;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.Iterator;
import java.util.Map;

/**
 * {@code ./ops admin}'s default output, for a person: the story as a timeline ({@link
 * StoryTimeline}), lists as aligned tables, any other answer as indented {@code key value} lines.
 * Every renderer reads the answer in {@link AdminJson}'s machine form.
 */
final class AdminOutput {

  /** How long a dead letter's last error may run in the list before it is cut. */
  static final int ERROR_CHARS = 80;

  private AdminOutput() {}

  /** The text {@code op}'s answer prints as, newline-terminated. */
  static String render(String op, JsonNode answer, Instant now) {
    return switch (op) {
      case "story" -> StoryTimeline.render(answer, now);
      case "dead-letters" -> deadLetters(answer);
      case "dead-letter" -> deadLetter(answer);
      case "redrive" -> redrive(answer);
      case "pauses", "pause", "resume" -> pauses(answer, now);
      default -> lines(answer);
    };
  }

  static String deadLetters(JsonNode letters) {
    if (letters.isEmpty()) {
      return "no dead letters\n";
    }
    Table t = new Table("ID", "TYPE", "TENANT", "ORDER", "DELIVERIES", "CREATED", "STATE", "ERROR");
    for (JsonNode l : letters) {
      t.row(
          l.path("id").asLong(),
          text(l, "eventType"),
          text(l, "tenantId"),
          text(l, "orderId"),
          l.path("deliveries").asLong(),
          When.at(instant(l, "createdAt")),
          state(l),
          cut(lastError(l)));
    }
    return t.render() + letters.size() + " dead letter(s)\n";
  }

  /** One letter: its fields, then its payload and every error as the machine form holds them. */
  static String deadLetter(JsonNode l) {
    Table t = Table.unheaded(2);
    t.row("id", l.path("id").asLong());
    t.row("type", text(l, "eventType"));
    t.row("tenant", text(l, "tenantId"));
    t.row("order", text(l, "orderId"));
    t.row("entry", text(l, "entryId"));
    t.row("deliveries", l.path("deliveries").asLong());
    t.row("created", When.at(instant(l, "createdAt")));
    t.row("state", state(l));
    if (l.path("resolvedAt").isTextual()) {
      t.row("resolved", When.at(instant(l, "resolvedAt")) + " by " + text(l, "resolvedBy"));
    }
    if (l.path("redriveEntryId").isTextual()) {
      t.row("redriven as", text(l, "redriveEntryId"));
    }
    t.row("payload", l.path("payload").toString());
    StringBuilder out = new StringBuilder(t.render());
    JsonNode errors = l.path("errors");
    out.append("errors (").append(errors.size()).append(")\n");
    errors.forEach(
        e -> out.append("  ").append(e.isTextual() ? e.asText() : e.toString()).append('\n'));
    return out.toString();
  }

  /** {"<id>": {"outcome": ..., "entryId"|"reason": ...}} as a table. */
  static String redrive(JsonNode outcomes) {
    if (outcomes.isEmpty()) {
      return "nothing to redrive\n";
    }
    Table t = new Table("ID", "OUTCOME", "DETAIL");
    Iterator<Map.Entry<String, JsonNode>> it = outcomes.fields();
    while (it.hasNext()) {
      Map.Entry<String, JsonNode> e = it.next();
      JsonNode o = e.getValue();
      String detail =
          o.has("entryId")
              ? "entry "
                  + text(o, "entryId")
                  + (o.has("orderId") ? ", order " + text(o, "orderId") : "")
              : o.has("reason")
                  ? text(o, "reason")
                  : o.has("resolution")
                      ? text(o, "resolution") + " by " + text(o, "resolvedBy")
                      : null;
      t.row(e.getKey(), text(o, "outcome"), detail);
    }
    return t.render();
  }

  /** {"consumer": "running" | {pausedBy, reason, pausedAt}, "sweep": ...} as a table. */
  static String pauses(JsonNode jobs, Instant now) {
    Table t = new Table("JOB", "STATE", "SINCE", "BY", "REASON");
    Iterator<Map.Entry<String, JsonNode>> it = jobs.fields();
    while (it.hasNext()) {
      Map.Entry<String, JsonNode> e = it.next();
      JsonNode j = e.getValue();
      if (j.isObject()) {
        Instant since = instant(j, "pausedAt");
        t.row(
            e.getKey(),
            "PAUSED",
            When.at(since) + " (" + When.fromNow(since, now) + ")",
            text(j, "pausedBy"),
            text(j, "reason"));
      } else {
        t.row(e.getKey(), j.asText().toUpperCase(java.util.Locale.ROOT), null, null, null);
      }
    }
    return t.render();
  }

  /**
   * Any answer: {@code key value} per scalar, nested objects and lists indented under their key.
   */
  static String lines(JsonNode answer) {
    StringBuilder out = new StringBuilder();
    lines(answer, "", out);
    return out.toString();
  }

  private static void lines(JsonNode node, String indent, StringBuilder out) {
    if (node.isObject()) {
      int width = 0;
      for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
        width = Math.max(width, names.next().length());
      }
      Iterator<Map.Entry<String, JsonNode>> it = node.fields();
      while (it.hasNext()) {
        Map.Entry<String, JsonNode> e = it.next();
        JsonNode v = e.getValue();
        if (v.isContainerNode() && !v.isEmpty()) {
          out.append(indent).append(e.getKey()).append('\n');
          lines(v, indent + "  ", out);
        } else {
          out.append(indent)
              .append(e.getKey())
              .append(" ".repeat(width - e.getKey().length() + 2))
              .append(scalar(v))
              .append('\n');
        }
      }
    } else if (node.isArray()) {
      for (JsonNode element : node) {
        if (element.isContainerNode() && !element.isEmpty()) {
          out.append(indent).append("-\n");
          lines(element, indent + "  ", out);
        } else {
          out.append(indent).append("- ").append(scalar(element)).append('\n');
        }
      }
    } else {
      out.append(indent).append(scalar(node)).append('\n');
    }
  }

  private static String scalar(JsonNode v) {
    if (v.isNull() || v.isMissingNode()) {
      return "-";
    }
    if (v.isContainerNode()) {
      return v.isArray() ? "none" : "{}";
    }
    return v.asText();
  }

  private static String state(JsonNode letter) {
    return letter.path("resolution").isTextual() ? text(letter, "resolution") : "OPEN";
  }

  private static String lastError(JsonNode letter) {
    JsonNode errors = letter.path("errors");
    if (!errors.isArray() || errors.isEmpty()) {
      return null;
    }
    JsonNode last = errors.get(errors.size() - 1);
    if (last.isObject() && last.has("error")) {
      return last.path("error").asText();
    }
    return last.isTextual() ? last.asText() : last.toString();
  }

  private static String cut(String s) {
    if (s == null) {
      return null;
    }
    String one = s.replaceAll("\\s+", " ").strip();
    return one.length() <= ERROR_CHARS ? one : one.substring(0, ERROR_CHARS - 3) + "...";
  }

  private static String text(JsonNode node, String field) {
    JsonNode v = node.path(field);
    return v.isNull() || v.isMissingNode() ? "-" : v.asText();
  }

  static Instant instant(JsonNode node, String field) {
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
