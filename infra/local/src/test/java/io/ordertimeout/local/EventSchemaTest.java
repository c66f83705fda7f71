package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.InputFormat;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import io.ordertimeout.outbox.Outbox;
import io.ordertimeout.stream.EventType;
import io.ordertimeout.stream.OrderEvent;
import io.ordertimeout.testing.Await;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The events' JSON Schemas (docs/reference/events/{type}.v{n}.json, draft 2020-12): one per event
 * type and version; every event a full order life on the local stack writes to the outbox (and
 * every sample of events/) matches its schema; the template registers each one in EventBridge's
 * schema registry as its Draft 4 copy; and no schema changed incompatibly from its baseline
 * (docs/reference/events/.baseline/): a compatible change only adds optional fields.
 */
class EventSchemaTest {
  private static final Path ROOT = Main.templatePath().toAbsolutePath().getParent();
  private static final Path DIR = ROOT.resolve("docs/reference/events");
  private static final Path BASELINE = DIR.resolve(".baseline");
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final SchemaRegistry REGISTRY =
      SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12);
  private static final String DRAFT4 = "http://json-schema.org/draft-04/schema#";

  /** Keywords a Draft 4 validator knows; a file using another could not be registered as is. */
  private static final Set<String> DRAFT4_KEYWORDS =
      Set.of(
          "$schema",
          "title",
          "description",
          "type",
          "properties",
          "required",
          "additionalProperties",
          "enum",
          "pattern",
          "minimum",
          "maximum",
          "minLength",
          "maxLength",
          "items",
          "minItems",
          "maxItems",
          "format");

  private static LocalStack stack;
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @BeforeAll
  static void startStack() {
    stack =
        LocalStack.start(
            new LocalStack.Options(Main.templatePath(), "127.0.0.1", 0, 1.0),
            DemoScenario.environment(System.getenv()));
  }

  @AfterAll
  static void stopStack() {
    stack.close();
  }

  @Test
  void everyEventTypeHasASchemaOfItsVersionAndEverySchemaIsValid2020_12() throws IOException {
    assertThat(OrderEvent.VERSION).isEqualTo(Outbox.SCHEMA_VERSION);
    Set<String> expected = new TreeSet<>();
    for (EventType t : EventType.values()) {
      expected.add(t.wireName() + ".v" + OrderEvent.VERSION + ".json");
    }
    assertThat(schemaFiles().keySet()).containsAll(expected);
    Schema meta =
        REGISTRY.getSchema(SchemaLocation.of("https://json-schema.org/draft/2020-12/schema"));
    for (Map.Entry<String, Path> f : schemaFiles().entrySet()) {
      String text = Files.readString(f.getValue());
      assertThat(meta.validate(text, InputFormat.JSON)).as(f.getKey()).isEmpty();
      JsonNode schema = JSON.readTree(text);
      String[] name = f.getKey().split("\\.");
      assertThat(schema.at("/properties/type/enum").toString())
          .as(f.getKey())
          .isEqualTo("[\"" + name[0] + "\"]");
      assertThat(schema.at("/properties/v/enum").toString())
          .as(f.getKey())
          .isEqualTo("[" + name[1].substring(1) + "]");
      assertThat(schema.path("additionalProperties").asBoolean(true)).as(f.getKey()).isFalse();
      for (JsonNode example : schema.path("examples")) {
        assertThat(errors(example)).as(f.getKey() + " example " + example).isEmpty();
      }
      assertThat(schema.path("examples")).as(f.getKey() + " examples").isNotEmpty();
    }
  }

  @Test
  void theSamplesOfEventsMatchTheirSchemas() throws IOException {
    List<Path> samples;
    try (Stream<Path> files = Files.list(ROOT.resolve("events"))) {
      samples =
          files
              .filter(
                  p -> {
                    String name = p.getFileName().toString();
                    return name.startsWith("stream-")
                        && EventType.fromWire(name.substring(7, name.length() - 5)).isPresent();
                  })
              .toList();
    }
    assertThat(samples).hasSizeGreaterThanOrEqualTo(5);
    for (Path sample : samples) {
      JsonNode event = JSON.readTree(sample.toFile());
      assertThat(errors(event)).as(sample.toString()).isEmpty();
    }
  }

  /**
   * A full life of orders on the local stack (placed, paid, shipped, its receipt extended and
   * confirmed, an after-sale opened and resolved, completed at its deadline; another received
   * automatically; one cancelled, one timed out, one force-closed): every event of their outbox
   * timelines matches its type's schema, and every outbox event type is among them.
   */
  @Test
  void everyEventOfAFullOrderLifeMatchesItsSchema() throws Exception {
    String run = Long.toString(System.nanoTime() % 1_000_000_000L, 36);
    String life = "ev" + run + "life";
    String auto = "ev" + run + "auto";
    String cancel = "ev" + run + "cncl";
    String timeout = "ev" + run + "tout";
    String forced = "ev" + run + "forc";
    for (String id : List.of(life, auto, cancel, forced)) {
      assertThat(call("POST", "/orders", order(id, 600)).statusCode()).isEqualTo(201);
    }
    assertThat(call("POST", "/orders", order(timeout, 1)).statusCode()).isEqualTo(201);
    for (String id : List.of(life, auto)) {
      assertThat(
              call("POST", "/orders/" + id + "/prepay", "{\"openId\":\"oUpF8uMuAJO_ev\"}")
                  .statusCode())
          .isEqualTo(200);
      stack.simulator().pay(id);
      Await.until("order " + id + " PAID", () -> status(id), "PAID"::equals);
      assertThat(
              call(
                      "POST",
                      "/orders/" + id + "/ship",
                      "{\"carrier\":\"SF\",\"trackingNo\":\"SF" + run + "\"}")
                  .statusCode())
          .isEqualTo(200);
    }
    for (String step : List.of("receipt/extend", "receipt", "after-sale", "after-sale/resolve")) {
      assertThat(call("POST", "/orders/" + life + "/" + step, "").statusCode())
          .as(step)
          .isEqualTo(200);
    }
    assertThat(call("POST", "/orders/" + cancel + "/cancel", null).statusCode()).isEqualTo(202);
    assertThat(
            call(
                    "POST",
                    "/admin/orders/" + forced + "/force-close",
                    "{\"reason\":\"event schemas\"}")
                .statusCode())
        .isEqualTo(200);

    Map<String, String> last =
        Map.of(
            life, "completed",
            auto, "completed",
            cancel, "closed",
            timeout, "closed",
            forced, "closed");
    Set<String> types = new TreeSet<>();
    Map<String, List<String>> problems = new TreeMap<>();
    for (Map.Entry<String, String> o : last.entrySet()) {
      JsonNode events =
          Await.until(
              "order " + o.getKey() + "'s " + o.getValue() + " event",
              () -> timeline(o.getKey()),
              e -> e.size() > 0 && e.get(e.size() - 1).path("type").asText().equals(o.getValue()));
      for (JsonNode event : events) {
        types.add(event.path("type").asText());
        List<String> found = errors(event);
        if (!found.isEmpty()) {
          problems.put(event.toString(), found);
        }
      }
    }
    assertThat(problems).isEmpty();
    Set<String> outboxTypes = new TreeSet<>();
    for (EventType t : EventType.values()) {
      if (t != EventType.CLOSE_DUE) {
        outboxTypes.add(t.wireName());
      }
    }
    assertThat(types).isEqualTo(outboxTypes);
  }

  @Test
  void theTemplateRegistersEverySchemaAsItsDraft4Copy() throws IOException {
    JsonNode resources = SamTemplate.yaml(Main.templatePath()).path("Resources");
    Map<String, JsonNode> registered = new TreeMap<>();
    boolean registry = false;
    for (Iterator<Map.Entry<String, JsonNode>> it = resources.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> r = it.next();
      String type = r.getValue().path("Type").asText();
      registry |= type.equals("AWS::EventSchemas::Registry");
      if (type.equals("AWS::EventSchemas::Schema")) {
        JsonNode props = r.getValue().path("Properties");
        assertThat(props.path("Type").asText()).as(r.getKey()).isEqualTo("JSONSchemaDraft4");
        assertThat(props.path("RegistryName").toString()).contains("OrderEventSchemas");
        String name = props.path("SchemaName").asText();
        assertThat(name).startsWith("order-timeout.orders@");
        registered.put(
            name.substring("order-timeout.orders@".length()) + ".json",
            JSON.readTree(props.path("Content").asText()));
      }
    }
    assertThat(registry).isTrue();
    assertThat(registered.keySet()).isEqualTo(schemaFiles().keySet());
    for (Map.Entry<String, JsonNode> r : registered.entrySet()) {
      ObjectNode draft4 = (ObjectNode) JSON.readTree(schemaFiles().get(r.getKey()).toFile());
      draft4.remove("$id");
      draft4.remove("examples");
      draft4.put("$schema", DRAFT4);
      assertThat(r.getValue()).as(r.getKey() + " in template.yaml").isEqualTo(draft4);
      List<String> unknown = new ArrayList<>();
      keywords(draft4, unknown);
      assertThat(unknown).as(r.getKey() + ": keywords Draft 4 does not know").isEmpty();
    }
  }

  /**
   * A schema file may only change compatibly: against its baseline, the same required fields, every
   * property as it was (its type, pattern, range, enum), new properties optional, and every example
   * the baseline accepts still accepted. Anything else is a new version file.
   */
  @Test
  void noSchemaChangedIncompatiblyFromItsBaseline() throws IOException {
    Map<String, Path> files = schemaFiles();
    Map<String, Path> baselines = new TreeMap<>();
    try (Stream<Path> list = Files.list(BASELINE)) {
      list.forEach(p -> baselines.put(p.getFileName().toString(), p));
    }
    assertThat(baselines.keySet())
        .as("every schema file has its baseline (copy a new version file there)")
        .isEqualTo(files.keySet());
    List<String> problems = new ArrayList<>();
    for (Map.Entry<String, Path> b : baselines.entrySet()) {
      JsonNode before = JSON.readTree(b.getValue().toFile());
      JsonNode now = JSON.readTree(files.get(b.getKey()).toFile());
      problems.addAll(incompatibilities(b.getKey(), before, now));
      Schema current = REGISTRY.getSchema(now.toString(), InputFormat.JSON);
      for (JsonNode example : before.path("examples")) {
        if (!current.validate(example.toString(), InputFormat.JSON).isEmpty()) {
          problems.add(b.getKey() + ": no longer accepts the baseline's example " + example);
        }
      }
    }
    assertThat(problems).isEmpty();
  }

  @Test
  void theCompatibilityCheckRefusesANarrowedOrRemovedFieldAndAcceptsANewOptionalOne()
      throws IOException {
    JsonNode before = JSON.readTree(DIR.resolve("created.v1.json").toFile());
    ObjectNode added = before.deepCopy();
    ((ObjectNode) added.path("properties")).putObject("channel").put("type", "string");
    assertThat(incompatibilities("created", before, added)).isEmpty();

    ObjectNode required = added.deepCopy();
    ((com.fasterxml.jackson.databind.node.ArrayNode) required.path("required")).add("channel");
    assertThat(incompatibilities("created", before, required)).isNotEmpty();

    ObjectNode removed = before.deepCopy();
    ((ObjectNode) removed.path("properties")).remove("userId");
    assertThat(incompatibilities("created", before, removed)).isNotEmpty();

    ObjectNode narrowed = before.deepCopy();
    ((ObjectNode) narrowed.at("/properties/amountFen")).put("maximum", 100);
    assertThat(incompatibilities("created", before, narrowed)).isNotEmpty();
  }

  private static List<String> incompatibilities(String name, JsonNode before, JsonNode now) {
    List<String> out = new ArrayList<>();
    if (!before.path("required").equals(now.path("required"))) {
      Set<String> b = new TreeSet<>();
      Set<String> n = new TreeSet<>();
      before.path("required").forEach(r -> b.add(r.asText()));
      now.path("required").forEach(r -> n.add(r.asText()));
      if (!b.equals(n)) {
        out.add(name + ": required " + b + " became " + n);
      }
    }
    if (!before.path("additionalProperties").equals(now.path("additionalProperties"))) {
      out.add(name + ": additionalProperties changed");
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = before.path("properties").fields();
        it.hasNext(); ) {
      Map.Entry<String, JsonNode> p = it.next();
      JsonNode current = now.path("properties").get(p.getKey());
      if (current == null) {
        out.add(name + ": field " + p.getKey() + " removed");
      } else if (!withoutDescription(current).equals(withoutDescription(p.getValue()))) {
        out.add(
            name + ": field " + p.getKey() + " changed from " + p.getValue() + " to " + current);
      }
    }
    return out;
  }

  private static JsonNode withoutDescription(JsonNode property) {
    ObjectNode copy = property.deepCopy();
    copy.remove("description");
    return copy;
  }

  private static void keywords(JsonNode schema, List<String> unknown) {
    for (Iterator<Map.Entry<String, JsonNode>> it = schema.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> k = it.next();
      if (!DRAFT4_KEYWORDS.contains(k.getKey())) {
        unknown.add(k.getKey());
      }
      if (k.getKey().equals("properties")) {
        k.getValue().forEach(p -> keywords(p, unknown));
      } else if (k.getKey().equals("items")) {
        keywords(k.getValue(), unknown);
      }
    }
  }

  /** The schema files by name ("created.v1.json"). */
  private static Map<String, Path> schemaFiles() {
    Map<String, Path> out = new TreeMap<>();
    try (Stream<Path> files = Files.list(DIR)) {
      files
          .filter(p -> p.getFileName().toString().matches("[a-z_]+\\.v[0-9]+\\.json"))
          .forEach(p -> out.put(p.getFileName().toString(), p));
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return out;
  }

  /** Why an event does not match the schema of its type and version; a missing schema is one. */
  private static List<String> errors(JsonNode event) throws IOException {
    String name = event.path("type").asText() + ".v" + event.path("v").asInt() + ".json";
    Path file = DIR.resolve(name);
    if (!Files.exists(file)) {
      return List.of("no schema " + name);
    }
    Schema schema = REGISTRY.getSchema(Files.readString(file), InputFormat.JSON);
    return schema.validate(event.toString(), InputFormat.JSON).stream()
        .map(Object::toString)
        .toList();
  }

  private static String order(String id, int timeoutSeconds) {
    return "{\"orderId\":\""
        + id
        + "\",\"userId\":\"user-ev\",\"items\":[{\"skuId\":\"sku-0002\",\"quantity\":1}],"
        + "\"amountFen\":500,\"timeoutSeconds\":"
        + timeoutSeconds
        + "}";
  }

  private static String status(String id) throws Exception {
    return JSON.readTree(call("GET", "/orders/" + id, null).body()).path("status").asText();
  }

  private static JsonNode timeline(String id) throws Exception {
    return JSON.readTree(call("GET", "/orders/" + id + "/events", null).body()).path("events");
  }

  private static HttpResponse<String> call(String method, String path, String body)
      throws Exception {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(stack.apiUrl() + path))
            .header("content-type", "application/json")
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body))
            .build();
    return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
  }
}
