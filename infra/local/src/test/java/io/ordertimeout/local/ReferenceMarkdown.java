package io.ordertimeout.local;

import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * Renders the reference Markdown from the documents themselves: docs/reference/openapi.yaml into
 * one page of operations (method and path, authorization, parameters, the request body's fields
 * with their limits, every response's status, body and error codes) and the schemas the answers
 * use; the event JSON Schemas of docs/reference/events/ into one page of event types and versions
 * (fields, types, required, limits, an example). Nothing in the pages is typed by hand: {@link
 * RenderedReferenceTest} fails when the committed pages differ from a fresh rendering.
 */
final class ReferenceMarkdown {
  static final Path ROOT = Main.templatePath().toAbsolutePath().getParent();
  static final Path HTTP_PAGE = ROOT.resolve("docs/reference/http-api.generated.md");
  static final Path EVENTS_PAGE = ROOT.resolve("docs/reference/events.md");
  static final Path EVENTS_DIR = ROOT.resolve("docs/reference/events");

  /** The command that writes both pages again. */
  static final String COMMAND =
      "./mvnw -q -pl infra/local -am test -Dtest=RenderedReferenceTest -Dotc.docs.render=true"
          + " -Dsurefire.failIfNoSpecifiedTests=false -Djacoco.skip=true";

  private static final ObjectMapper PRETTY =
      new ObjectMapper()
          .setDefaultPrettyPrinter(
              new DefaultPrettyPrinter()
                  .withSeparators(
                      Separators.createDefaultInstance()
                          .withObjectFieldValueSpacing(Separators.Spacing.AFTER)))
          .enable(SerializationFeature.INDENT_OUTPUT);
  private static final String SCHEMAS = "#/components/schemas/";

  private final OpenApi api;

  private ReferenceMarkdown(OpenApi api) {
    this.api = api;
  }

  /** docs/reference/http-api.generated.md as openapi.yaml says it. */
  static String httpApi(OpenApi api) {
    return new ReferenceMarkdown(api).renderHttpApi();
  }

  /** docs/reference/events.md as the schemas in {@code dir} say it. */
  static String events(Path dir) {
    List<Path> files;
    try (Stream<Path> list = Files.list(dir)) {
      files = list.filter(p -> p.toString().endsWith(".json")).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    StringBuilder out = new StringBuilder();
    out.append("# Event reference\n\n")
        .append(generatedNote("the JSON Schemas in [events/](events/)"))
        .append(
            "Each event is the document a subscriber gets: the Redis stream entry's field `e` and the"
                + " EventBridge event's `detail`. Versioning and delivery: [Events](../concepts/events.md).\n\n");
    out.append("| event | version | schema | what |\n| --- | --- | --- | --- |\n");
    List<JsonNode> schemas = new ArrayList<>();
    for (Path f : files) {
      JsonNode schema = readJson(f);
      schemas.add(schema);
      out.append("| [`")
          .append(eventType(schema))
          .append("`](#")
          .append(Docs.slug(eventHeading(schema)))
          .append(") | ")
          .append(eventVersion(schema))
          .append(" | [")
          .append(f.getFileName())
          .append("](events/")
          .append(f.getFileName())
          .append(") | ")
          .append(cell(firstSentence(schema.path("description").asText(""))))
          .append(" |\n");
    }
    for (JsonNode schema : schemas) {
      out.append("\n## ").append(eventHeading(schema)).append("\n\n");
      out.append(schema.path("description").asText("")).append("\n\n");
      out.append(
          schema.path("additionalProperties").asBoolean(true)
              ? "Other fields may appear.\n\n"
              : "No other field appears.\n\n");
      ReferenceMarkdown plain = new ReferenceMarkdown(null);
      List<String[]> rows = new ArrayList<>();
      plain.fields(schema, "", rows);
      out.append(fieldTable(rows));
      JsonNode example = schema.path("examples").path(0);
      if (!example.isMissingNode()) {
        out.append("\nExample:\n\n```json\n").append(pretty(example)).append("\n```\n");
      }
    }
    return out.toString();
  }

  private String renderHttpApi() {
    JsonNode root = api.root();
    StringBuilder out = new StringBuilder();
    out.append("# HTTP API reference (generated)\n\n")
        .append(generatedNote("[openapi.yaml](openapi.yaml)"))
        .append(
            "The narrative, the tenancy rules and the state machine: [Order API](http-api.md) and"
                + " [Admin API](admin-api.md).\n\n")
        .append(root.path("info").path("description").asText("").strip())
        .append("\n\n");

    out.append("| operation | route | summary |\n| --- | --- | --- |\n");
    Map<String, JsonNode> operations = api.operations();
    operations.forEach(
        (key, op) ->
            out.append("| [`")
                .append(op.path("operationId").asText())
                .append("`](#")
                .append(Docs.slug("`" + key + "`"))
                .append(") | `")
                .append(key)
                .append("` | ")
                .append(cell(op.path("summary").asText("")))
                .append(" |\n"));

    out.append("\n## Authorization\n\n");
    root.path("components")
        .path("securitySchemes")
        .fields()
        .forEachRemaining(
            e ->
                out.append("- `")
                    .append(e.getKey())
                    .append("`: ")
                    .append(e.getValue().path("description").asText("").strip())
                    .append('\n'));

    Set<String> tags = new LinkedHashSet<>();
    root.path("tags").forEach(t -> tags.add(t.path("name").asText()));
    for (String tag : tags) {
      out.append("\n## Tag `").append(tag).append("`\n");
      operations.forEach(
          (key, op) -> {
            if (tagOf(op).equals(tag)) {
              operation(out, key, op);
            }
          });
    }

    out.append("\n## Schemas\n\nThe bodies the operations answer.\n");
    for (String name : answeredSchemas(operations)) {
      JsonNode schema = root.path("components").path("schemas").path(name);
      out.append("\n### ").append(name).append("\n\n");
      String description = schema.path("description").asText("");
      if (!description.isEmpty()) {
        out.append(description).append("\n\n");
      }
      JsonNode allOf = schema.path("allOf");
      if (allOf.size() == 1 && allOf.get(0).has("$ref") && !schema.has("properties")) {
        String base = refName(allOf.get(0));
        out.append("The fields of [`")
            .append(base)
            .append("`](#")
            .append(Docs.slug(base))
            .append(")");
        List<String> required = new ArrayList<>();
        schema.path("required").forEach(r -> required.add("`" + r.asText() + "`"));
        out.append(required.isEmpty() ? "" : ", with " + String.join(", ", required) + " required")
            .append(".\n");
        continue;
      }
      List<String[]> rows = new ArrayList<>();
      fields(schema, "", rows);
      out.append(rows.isEmpty() ? type(schema) + "\n" : fieldTable(rows));
    }
    return out.toString();
  }

  private void operation(StringBuilder out, String key, JsonNode op) {
    out.append("\n### `").append(key).append("`\n\n");
    String summary = op.path("summary").asText("");
    out.append(summary.isEmpty() ? "" : summary + ". ")
        .append("Operation `")
        .append(op.path("operationId").asText())
        .append("`; authorization ");
    JsonNode security = op.has("security") ? op.get("security") : api.root().path("security");
    List<String> schemes = new ArrayList<>();
    security.forEach(s -> s.fieldNames().forEachRemaining(n -> schemes.add("`" + n + "`")));
    out.append(String.join(", ", schemes)).append(".\n");

    List<JsonNode> parameters = api.parameters(key);
    if (!parameters.isEmpty()) {
      out.append("\n| parameter | in | required | type | limits | description |\n")
          .append("| --- | --- | --- | --- | --- | --- |\n");
      for (JsonNode p : parameters) {
        JsonNode schema = p.path("schema");
        out.append("| `")
            .append(p.path("name").asText())
            .append("` | ")
            .append(p.path("in").asText())
            .append(" | ")
            .append(p.path("required").asBoolean(false) ? "yes" : "no")
            .append(" | ")
            .append(cell(type(schema)))
            .append(" | ")
            .append(cell(limits(schema)))
            .append(" | ")
            .append(cell(p.path("description").asText("")))
            .append(" |\n");
      }
    }

    api.requestBody(key)
        .ifPresent(
            body -> {
              JsonNode schema = body.path("content").path("application/json").path("schema");
              out.append("\nRequest body")
                  .append(schema.has("$ref") ? " `" + refName(schema) + "`" : "")
                  .append(body.path("required").asBoolean(false) ? ", required" : ", optional");
              if (body.has("x-max-body-bytes")) {
                out.append(", at most ")
                    .append(
                        String.format(Locale.ROOT, "%,d", body.get("x-max-body-bytes").asLong()))
                    .append(" bytes");
              }
              String description =
                  firstNonEmpty(
                      body.path("description").asText(""),
                      api.resolve(schema).path("description").asText(""));
              out.append(description.isEmpty() ? "." : ": " + description + ".").append('\n');
              List<String[]> rows = new ArrayList<>();
              fields(api.resolve(schema), "", rows);
              if (!rows.isEmpty()) {
                out.append('\n').append(fieldTable(rows));
              } else if (api.resolve(schema).path("maxProperties").asInt(-1) == 0) {
                out.append("\nNo field.\n");
              }
            });

    out.append("\n| status | body | codes | when |\n| --- | --- | --- | --- |\n");
    api.responses(key)
        .forEach(
            (status, response) -> {
              JsonNode schema = response.path("content").path("application/json").path("schema");
              TreeSet<String> codes = OpenApi.codes(response);
              out.append("| ")
                  .append(status)
                  .append(" | ")
                  .append(cell(body(schema)))
                  .append(" | ")
                  .append(cell(String.join(", ", codes.stream().map(c -> "`" + c + "`").toList())))
                  .append(" | ")
                  .append(cell(response.path("description").asText("")))
                  .append(" |\n");
            });
  }

  /** What a response's body is: a link to its schema, or the error it carries, or its type. */
  private String body(JsonNode schema) {
    if (schema.isMissingNode()) {
      return "none";
    }
    if (schema.has("$ref")) {
      String name = refName(schema);
      return "[`" + name + "`](#" + Docs.slug(name) + ")";
    }
    JsonNode allOf = schema.path("allOf");
    if (allOf.size() == 1 && allOf.get(0).has("$ref")) {
      String name = refName(allOf.get(0));
      return "[`" + name + "`](#" + Docs.slug(name) + ")";
    }
    return type(schema);
  }

  /** The component schemas the answers name, in the document's order. */
  private List<String> answeredSchemas(Map<String, JsonNode> operations) {
    Set<String> named = new LinkedHashSet<>();
    for (String key : operations.keySet()) {
      for (JsonNode response : api.responses(key).values()) {
        JsonNode schema = response.path("content").path("application/json").path("schema");
        if (schema.has("$ref")) {
          named.add(refName(schema));
        }
        schema.path("allOf").forEach(a -> named.add(refName(a)));
      }
    }
    List<String> out = new ArrayList<>();
    api.root()
        .path("components")
        .path("schemas")
        .fieldNames()
        .forEachRemaining(
            n -> {
              if (named.contains(n)) {
                out.add(n);
              }
            });
    return out;
  }

  /** One row per field of an object schema, nested objects and arrays of objects as a.b, a[].b. */
  private void fields(JsonNode schema, String prefix, List<String[]> rows) {
    JsonNode s = merged(schema);
    Set<String> required = new TreeSet<>();
    s.path("required").forEach(r -> required.add(r.asText()));
    for (Iterator<Map.Entry<String, JsonNode>> it = s.path("properties").fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      String name = prefix + e.getKey();
      JsonNode field = e.getValue();
      JsonNode target = merged(field);
      rows.add(
          new String[] {
            "`" + name + "`",
            type(field),
            required.contains(e.getKey()) ? "yes" : "no",
            limits(field),
            firstNonEmpty(
                field.path("description").asText(""), target.path("description").asText(""))
          });
      if (isObject(target) && target.has("properties")) {
        fields(target, name + ".", rows);
      } else if (merged(target.path("items")).has("properties")) {
        fields(merged(target.path("items")), name + "[].", rows);
      }
    }
  }

  /** A schema with its $ref followed and a lone allOf's member folded in. */
  private JsonNode merged(JsonNode schema) {
    JsonNode s = resolve(schema);
    JsonNode allOf = s.path("allOf");
    if (allOf.size() == 1 && !s.has("properties")) {
      return resolve(allOf.get(0));
    }
    return s;
  }

  private JsonNode resolve(JsonNode schema) {
    return api == null ? schema : api.resolve(schema);
  }

  /** A schema's type in words: "string", "integer or null", "`OrderId` (string)". */
  private String type(JsonNode schema) {
    if (schema.has("$ref")) {
      return "`" + refName(schema) + "` (" + type(resolve(schema)) + ")";
    }
    if (schema.has("const")) {
      return "`" + schema.get("const").asText() + "`";
    }
    JsonNode oneOf = schema.path("oneOf");
    if (oneOf.size() > 0 && !schema.has("type")) {
      List<String> kinds = new ArrayList<>();
      oneOf.forEach(o -> kinds.add(o.path("type").asText("").equals("null") ? "null" : type(o)));
      return String.join(" or ", kinds);
    }
    JsonNode allOf = schema.path("allOf");
    if (allOf.size() == 1 && !schema.has("type")) {
      return type(allOf.get(0));
    }
    JsonNode t = schema.path("type");
    List<String> kinds = new ArrayList<>();
    if (t.isArray()) {
      t.forEach(k -> kinds.add(k.asText()));
    } else if (!t.isMissingNode()) {
      kinds.add(t.asText());
    }
    if (kinds.isEmpty()) {
      return "any";
    }
    String words = String.join(" or ", kinds);
    if (kinds.contains("array")) {
      words = words.replace("array", "array of " + type(schema.path("items")));
    }
    if (schema.has("format")) {
      words += ", " + schema.get("format").asText();
    }
    return words;
  }

  /** A schema's limits in words: enum, pattern, lengths, ranges, item counts, default. */
  private String limits(JsonNode field) {
    JsonNode s = field.has("$ref") ? resolve(field) : field;
    List<String> out = new ArrayList<>();
    if (s.has("enum")) {
      List<String> values = new ArrayList<>();
      s.get("enum").forEach(v -> values.add(v.isNull() ? "null" : "`" + v.asText() + "`"));
      out.add((values.size() == 1 ? "always " : "one of ") + String.join(", ", values));
    }
    JsonNode oneOf = s.path("oneOf");
    oneOf.forEach(
        o -> {
          String l = o.has("$ref") ? limits(o) : "";
          if (!l.isEmpty()) {
            out.add(l);
          }
        });
    if (s.has("pattern")) {
      out.add("pattern `" + s.get("pattern").asText() + "`");
    }
    range(out, s, "minLength", "maxLength", " characters");
    range(out, s, "minimum", "maximum", "");
    range(out, s, "minItems", "maxItems", " items");
    if (s.has("maxProperties")) {
      out.add("at most " + s.get("maxProperties").asText() + " fields");
    }
    if (s.has("default")) {
      out.add("default `" + s.get("default").asText() + "`");
    }
    return String.join("; ", out);
  }

  private static void range(List<String> out, JsonNode s, String min, String max, String unit) {
    boolean hasMin = s.has(min);
    boolean hasMax = s.has(max);
    if (hasMin && hasMax) {
      out.add(number(s.get(min)) + " to " + number(s.get(max)) + unit);
    } else if (hasMin) {
      out.add("at least " + number(s.get(min)) + units(s.get(min), unit));
    } else if (hasMax) {
      out.add("at most " + number(s.get(max)) + units(s.get(max), unit));
    }
  }

  /** " items" after 2 or 0, " item" after 1. */
  private static String units(JsonNode n, String unit) {
    return n.asLong() == 1 && unit.endsWith("s") ? unit.substring(0, unit.length() - 1) : unit;
  }

  private static String number(JsonNode n) {
    return n.isIntegralNumber() ? String.format(Locale.ROOT, "%,d", n.asLong()) : n.asText();
  }

  private static boolean isObject(JsonNode s) {
    return "object".equals(s.path("type").asText());
  }

  private static String refName(JsonNode schema) {
    String ref = schema.path("$ref").asText();
    return ref.startsWith(SCHEMAS) ? ref.substring(SCHEMAS.length()) : ref;
  }

  private static String tagOf(JsonNode op) {
    return op.path("tags").path(0).asText("");
  }

  private static String fieldTable(List<String[]> rows) {
    StringBuilder out =
        new StringBuilder(
            "| field | type | required | limits | description |\n| --- | --- | --- | --- | --- |\n");
    for (String[] r : rows) {
      out.append("| ");
      for (int i = 0; i < r.length; i++) {
        out.append(i == 0 ? r[i] : cell(r[i])).append(i == r.length - 1 ? " |\n" : " | ");
      }
    }
    return out.toString();
  }

  /** A table cell: one line, its pipes escaped (inside code spans too, as GitHub needs). */
  private static String cell(String text) {
    return text.strip().replace("\n", " ").replace("|", "\\|");
  }

  private static String generatedNote(String source) {
    return "Generated from "
        + source
        + " by `RenderedReferenceTest` (infra/local), which fails when this page differs from a fresh"
        + " rendering; do not edit it. After changing the source, write it again with:\n\n```bash\n"
        + COMMAND
        + "\n```\n\n";
  }

  private static String eventType(JsonNode schema) {
    return schema.path("properties").path("type").path("enum").path(0).asText();
  }

  private static int eventVersion(JsonNode schema) {
    return schema.path("properties").path("v").path("enum").path(0).asInt();
  }

  private static String eventHeading(JsonNode schema) {
    return "`" + eventType(schema) + "` v" + eventVersion(schema);
  }

  private static String firstSentence(String text) {
    int end = text.indexOf(". ");
    return end < 0 ? text : text.substring(0, end + 1);
  }

  private static String firstNonEmpty(String a, String b) {
    return a.isEmpty() ? b : a;
  }

  private static JsonNode readJson(Path f) {
    try {
      return OpenApi.JSON.readTree(f.toFile());
    } catch (IOException e) {
      throw new UncheckedIOException(f + ": " + e.getMessage(), e);
    }
  }

  private static String pretty(JsonNode node) {
    try {
      return PRETTY.writeValueAsString(node).replace("\r\n", "\n");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Both pages by their files. */
  static Map<Path, String> pages() {
    Map<Path, String> out = new LinkedHashMap<>();
    out.put(HTTP_PAGE, httpApi(OpenApi.read()));
    out.put(EVENTS_PAGE, events(EVENTS_DIR));
    return out;
  }
}
