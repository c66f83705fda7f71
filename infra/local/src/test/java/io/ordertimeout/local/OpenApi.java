package io.ordertimeout.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.networknt.schema.InputFormat;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * docs/reference/openapi.yaml as the tests read it: its operations by route key ("POST
 * /orders/{id}/ship"), their request and response schemas with local references resolved, and a
 * JSON Schema 2020-12 validator (networknt) over those schemas.
 */
final class OpenApi {
  static final Path FILE =
      Main.templatePath().toAbsolutePath().getParent().resolve("docs/reference/openapi.yaml");
  static final ObjectMapper JSON = new ObjectMapper();
  private static final List<String> METHODS = List.of("get", "put", "post", "delete", "patch");
  private static final SchemaRegistry REGISTRY =
      SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12);

  private final JsonNode root;
  private final Map<String, Schema> compiled = new ConcurrentHashMap<>();

  private OpenApi(JsonNode root) {
    this.root = root;
  }

  static OpenApi read() {
    try {
      return new OpenApi(new ObjectMapper(new YAMLFactory()).readTree(FILE.toFile()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  JsonNode root() {
    return root;
  }

  /** Every operation by route key, in the document's order. */
  Map<String, JsonNode> operations() {
    Map<String, JsonNode> out = new LinkedHashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> paths = root.path("paths").fields();
        paths.hasNext(); ) {
      Map.Entry<String, JsonNode> path = paths.next();
      for (String method : METHODS) {
        if (path.getValue().has(method)) {
          out.put(
              method.toUpperCase(Locale.ROOT) + " " + path.getKey(), path.getValue().get(method));
        }
      }
    }
    return out;
  }

  JsonNode operation(String routeKey) {
    JsonNode op = operations().get(routeKey);
    if (op == null) {
      throw new IllegalArgumentException("no operation " + routeKey + " in " + FILE);
    }
    return op;
  }

  /** A node with its {@code $ref} (a local one, "#/components/...") followed. */
  JsonNode resolve(JsonNode node) {
    JsonNode n = node;
    while (n != null && n.has("$ref")) {
      n = root.at(n.get("$ref").asText().substring(1));
    }
    return n;
  }

  /** The operation's responses by status, each resolved. */
  Map<Integer, JsonNode> responses(String routeKey) {
    Map<Integer, JsonNode> out = new LinkedHashMap<>();
    operation(routeKey)
        .path("responses")
        .fields()
        .forEachRemaining(e -> out.put(Integer.parseInt(e.getKey()), resolve(e.getValue())));
    return out;
  }

  /** The operation's request body, resolved; empty for a route that takes none. */
  Optional<JsonNode> requestBody(String routeKey) {
    JsonNode body = operation(routeKey).get("requestBody");
    return body == null ? Optional.empty() : Optional.of(resolve(body));
  }

  /** The operation's parameters, resolved. */
  List<JsonNode> parameters(String routeKey) {
    List<JsonNode> out = new ArrayList<>();
    operation(routeKey).path("parameters").forEach(p -> out.add(resolve(p)));
    return out;
  }

  /**
   * The error codes a response lists: the enum of {@code error.code} of its schema, or the
   * webhook's {@code x-reasons}.
   */
  static TreeSet<String> codes(JsonNode response) {
    TreeSet<String> out = new TreeSet<>();
    response.path("x-reasons").forEach(c -> out.add(c.asText()));
    response
        .path("content")
        .path("application/json")
        .path("schema")
        .path("properties")
        .path("error")
        .path("properties")
        .path("code")
        .path("enum")
        .forEach(c -> out.add(c.asText()));
    return out;
  }

  /** The JSON pointer of the schema of a route's {@code status} answer. */
  private String pointerOf(String routeKey, int status) {
    JsonNode raw = operation(routeKey).path("responses").path(String.valueOf(status));
    if (raw.has("$ref")) {
      return raw.get("$ref").asText().substring(1) + "/content/application~1json/schema";
    }
    return operationPointer(routeKey)
        + "/responses/"
        + status
        + "/content/application~1json/schema";
  }

  private String requestPointer(String routeKey) {
    JsonNode raw = operation(routeKey).path("requestBody");
    String base =
        raw.has("$ref")
            ? raw.get("$ref").asText().substring(1)
            : operationPointer(routeKey) + "/requestBody";
    return base + "/content/application~1json/schema";
  }

  private static String operationPointer(String routeKey) {
    int space = routeKey.indexOf(' ');
    String path = routeKey.substring(space + 1).replace("~", "~0").replace("/", "~1");
    return "/paths/" + path + "/" + routeKey.substring(0, space).toLowerCase(Locale.ROOT);
  }

  /** Why {@code json} does not match the request schema of the route; empty: it matches. */
  List<String> requestErrors(String routeKey, String json) {
    return validate(requestPointer(routeKey), json);
  }

  /**
   * Why {@code json} does not match the schema of the route's {@code status} answer; a status the
   * document does not list is an error too.
   */
  List<String> responseErrors(String routeKey, int status, String json) {
    JsonNode response = responses(routeKey).get(status);
    if (response == null) {
      return List.of("status " + status + " is not documented for " + routeKey);
    }
    boolean hasBody =
        !response.path("content").path("application/json").path("schema").isMissingNode();
    String pointer = hasBody ? pointerOf(routeKey, status) : null;
    if (pointer == null) {
      return json == null || json.isEmpty()
          ? List.of()
          : List.of("status " + status + " of " + routeKey + " is documented without a body");
    }
    List<String> errors = new ArrayList<>(validate(pointer, json));
    TreeSet<String> codes = codes(response);
    if (errors.isEmpty() && !codes.isEmpty()) {
      try {
        JsonNode body = JSON.readTree(json);
        String code = body.has("error") ? body.path("error").path("code").asText() : null;
        if (code != null && !codes.contains(code)) {
          errors.add(status + " " + code + " is not among the documented codes " + codes);
        }
      } catch (IOException e) {
        errors.add("not JSON: " + e.getMessage());
      }
    }
    return errors;
  }

  private List<String> validate(String pointer, String json) {
    if (json == null || json.isEmpty()) {
      return List.of("no body, where " + pointer + " expects one");
    }
    Schema schema = compiled.computeIfAbsent(pointer, this::compile);
    return schema.validate(json, InputFormat.JSON).stream().map(Object::toString).toList();
  }

  /**
   * A standalone 2020-12 schema of the node at {@code pointer}: the document's component schemas
   * become its {@code $defs}, and references to them are rewritten to match.
   */
  private Schema compile(String pointer) {
    JsonNode node = root.at(pointer);
    if (node.isMissingNode()) {
      throw new IllegalArgumentException("no schema at " + pointer);
    }
    ObjectNode schema = JSON.createObjectNode();
    schema.put("$schema", "https://json-schema.org/draft/2020-12/schema");
    schema.set("$defs", root.path("components").path("schemas"));
    schema.setAll((ObjectNode) node);
    try {
      String text =
          JSON.writeValueAsString(schema).replace("\"#/components/schemas/", "\"#/$defs/");
      return REGISTRY.getSchema(text, InputFormat.JSON);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
