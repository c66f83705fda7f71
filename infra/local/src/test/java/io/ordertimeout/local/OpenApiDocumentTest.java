package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.ordertimeout.admin.DeadLetterAdmin;
import io.ordertimeout.http.LifecycleRequests;
import io.ordertimeout.http.PlaceOrderRequests;
import io.ordertimeout.http.PrepayRequests;
import io.ordertimeout.wechat.NotificationLimits;
import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.SpecVersion;
import io.swagger.v3.parser.OpenAPIV3Parser;
import io.swagger.v3.parser.core.models.ParseOptions;
import io.swagger.v3.parser.core.models.SwaggerParseResult;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/reference/openapi.yaml is a valid OpenAPI 3.1 document (swagger-parser reports no message),
 * has exactly template.yaml's routes, lists for each route the statuses and error codes the status
 * tables of http-api.md and admin-api.md give it, and states the code's own request limits.
 */
class OpenApiDocumentTest {
  private static final Path ROOT = Main.templatePath().toAbsolutePath().getParent();
  private static final OpenApi API = OpenApi.read();
  private static final Pattern ROUTE = Pattern.compile("`((?:GET|POST|PUT|PATCH|DELETE) /[^`]*)`");
  private static final Pattern STATUS_ROW = Pattern.compile("^\\| ([1-5]\\d\\d) \\|(.*)$");
  private static final Pattern CODE = Pattern.compile("`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)`");

  @Test
  void parsesAsOpenApi31WithoutAMessage() throws IOException {
    ParseOptions options = new ParseOptions();
    options.setResolve(true);
    SwaggerParseResult result =
        new OpenAPIV3Parser().readContents(Files.readString(OpenApi.FILE), null, options);
    assertThat(result.getMessages()).as("swagger-parser's messages").isEmpty();
    OpenAPI openApi = result.getOpenAPI();
    assertThat(openApi).isNotNull();
    assertThat(openApi.getSpecVersion()).isEqualTo(SpecVersion.V31);
    assertThat(openApi.getOpenapi()).isEqualTo("3.1.0");
    assertThat(openApi.getComponents().getSecuritySchemes()).containsKeys("sigv4");
    assertThat(openApi.getPaths()).hasSizeGreaterThan(20);
  }

  @Test
  void itsRoutesAreTheTemplatesRoutes() {
    Set<String> template = new TreeSet<>();
    SamTemplate.read(Main.templatePath()).routes().forEach(r -> template.add(r.routeKey()));
    assertThat(template).hasSizeGreaterThan(20);
    assertThat(new TreeSet<>(API.operations().keySet())).isEqualTo(template);
  }

  @Test
  void everyRouteIsIamSignedButTheWebhooksWhichAreWeChatSigned() {
    assertThat(API.root().at("/security/0").has("sigv4")).isTrue();
    assertThat(
            API.root()
                .at("/components/securitySchemes/sigv4/x-amazon-apigateway-authtype")
                .asText())
        .isEqualTo("awsSigv4");
    Map<String, String> webhooks = new TreeMap<>();
    for (SamTemplate.HttpRoute r : SamTemplate.read(Main.templatePath()).routes()) {
      JsonNode security = API.operation(r.routeKey()).get("security");
      if (r.routeKey().startsWith("POST /wechatpay/")) {
        webhooks.put(r.routeKey(), security.toString());
        List<String> headers = new ArrayList<>();
        API.parameters(r.routeKey()).forEach(p -> headers.add(p.path("name").asText()));
        assertThat(headers)
            .contains(
                "Wechatpay-Nonce",
                "Wechatpay-Serial",
                "Wechatpay-Signature",
                "Wechatpay-Timestamp");
      } else {
        assertThat(security).as(r.routeKey() + " keeps the document's sigv4").isNull();
      }
    }
    assertThat(webhooks)
        .hasSize(4)
        .allSatisfy((k, v) -> assertThat(v).contains("wechatpaySignature"));
  }

  /**
   * Each route's statuses and codes: every one its section's table names is in the document, and
   * the document names no other, but those of the tables every route of its file answers (before
   * the first route's section).
   */
  @Test
  void itsStatusesAndCodesAreTheReferencesTables() {
    Map<String, Map<Integer, Set<String>>> sections = new TreeMap<>();
    Map<Integer, Set<String>> orderCommon = new TreeMap<>();
    Map<Integer, Set<String>> adminCommon = new TreeMap<>();
    read(ROOT.resolve("docs/reference/http-api.md"), sections, orderCommon);
    read(ROOT.resolve("docs/reference/admin-api.md"), sections, adminCommon);
    assertThat(orderCommon).containsKeys(400, 403);
    assertThat(adminCommon).containsKeys(400, 403, 404, 500, 503);

    List<String> problems = new ArrayList<>();
    Map<Integer, Set<String>> usedCommon = new TreeMap<>();
    for (String route : API.operations().keySet()) {
      Map<Integer, Set<String>> table = sections.get(route);
      assertThat(table).as("a section of " + route).isNotNull();
      Map<Integer, Set<String>> common =
          route.startsWith("POST /wechatpay/")
              ? Map.of()
              : route.contains(" /admin/") ? adminCommon : orderCommon;
      Map<Integer, JsonNode> documented = API.responses(route);
      for (Map.Entry<Integer, Set<String>> row : table.entrySet()) {
        JsonNode response = documented.get(row.getKey());
        if (response == null) {
          problems.add(route + ": the table's " + row.getKey() + " is not in the document");
          continue;
        }
        Set<String> missing = new TreeSet<>(row.getValue());
        missing.removeAll(OpenApi.codes(response));
        if (!missing.isEmpty()) {
          problems.add(
              route + " " + row.getKey() + ": the table's " + missing + " not in the document");
        }
      }
      for (Map.Entry<Integer, JsonNode> response : documented.entrySet()) {
        int status = response.getKey();
        if (!table.containsKey(status) && !common.containsKey(status)) {
          problems.add(route + ": the document's " + status + " is in no table of the route");
          continue;
        }
        Set<String> extra = OpenApi.codes(response.getValue());
        extra.removeAll(table.getOrDefault(status, Set.of()));
        Set<String> fromCommon = new TreeSet<>(extra);
        extra.removeAll(common.getOrDefault(status, Set.of()));
        fromCommon.removeAll(extra);
        usedCommon.computeIfAbsent(status, s -> new TreeSet<>()).addAll(fromCommon);
        if (!extra.isEmpty()) {
          problems.add(
              route + " " + status + ": the document's " + extra + " in no table of the route");
        }
      }
    }
    for (Map<Integer, Set<String>> common : List.of(orderCommon, adminCommon)) {
      common.forEach(
          (status, codes) -> {
            Set<String> unused = new TreeSet<>(codes);
            unused.removeAll(usedCommon.getOrDefault(status, Set.of()));
            if (!unused.isEmpty()) {
              problems.add("common " + status + " " + unused + " on no route of the document");
            }
          });
    }
    assertThat(problems).isEmpty();
  }

  @Test
  void theCodesLimitsAreTheDocuments() throws Exception {
    JsonNode schemas = API.root().at("/components/schemas");
    JsonNode order = schemas.path("PlaceOrderRequest").path("properties");
    Map<String, Object> limits = new LinkedHashMap<>();
    Map<String, Object> document = new LinkedHashMap<>();

    limits.put("order id", anchored(constant(PlaceOrderRequests.class, "ORDER_ID")));
    document.put("order id", schemas.at("/OrderId/pattern").asText());
    limits.put("order id (path)", anchored(constant(PlaceOrderRequests.class, "ORDER_ID")));
    document.put(
        "order id (path)", API.root().at("/components/parameters/OrderId/schema/pattern").asText());
    limits.put(
        "order id (admin)",
        anchored(constant(Class.forName("io.ordertimeout.admin.OrderIds"), "ORDER_ID")));
    document.put("order id (admin)", schemas.at("/OrderId/pattern").asText());
    limits.put("tenant id", anchored(constant(PlaceOrderRequests.class, "TENANT_ID")));
    document.put("tenant id", schemas.at("/TenantId/pattern").asText());
    limits.put("X-Tenant-Id", anchored(constant(PlaceOrderRequests.class, "TENANT_ID")));
    document.put(
        "X-Tenant-Id",
        API.root().at("/components/parameters/TenantHeader/schema/pattern").asText());
    limits.put("plain id", anchored(constant(PlaceOrderRequests.class, "PLAIN_ID")));
    document.put("plain id", schemas.at("/PlainId/pattern").asText());
    limits.put("coupon id (path)", anchored(constant(PlaceOrderRequests.class, "PLAIN_ID")));
    document.put(
        "coupon id (path)",
        API.root().at("/components/parameters/CouponId/schema/pattern").asText());
    limits.put(
        "webhook and admin tenant", "^" + io.ordertimeout.domain.TenantIds.PATTERN.pattern() + "$");
    document.put(
        "webhook and admin tenant",
        API.parameters("POST /wechatpay/notify/{tenantId}").get(0).at("/schema/pattern").asText());
    limits.put("admin ?tenantId=", "^" + io.ordertimeout.domain.TenantIds.PATTERN.pattern() + "$");
    document.put(
        "admin ?tenantId=",
        API.root().at("/components/parameters/AdminTenantQuery/schema/pattern").asText());

    limits.put("items", List.of(1, PlaceOrderRequests.MAX_ITEMS));
    document.put(
        "items", List.of(order.at("/items/minItems").asInt(), order.at("/items/maxItems").asInt()));
    limits.put("quantity", List.of(1L, (long) PlaceOrderRequests.MAX_QUANTITY));
    document.put("quantity", range(order.at("/items/items/properties/quantity")));
    limits.put("amountFen", List.of(1L, PlaceOrderRequests.MAX_AMOUNT_FEN));
    document.put("amountFen", range(order.path("amountFen")));
    limits.put("timeoutSeconds", List.of(1L, defaultMaxTimeoutSeconds()));
    document.put("timeoutSeconds", range(order.path("timeoutSeconds")));

    limits.put("POST /orders body", PlaceOrderRequests.MAX_BODY_BYTES);
    document.put("POST /orders body", maxBody("POST /orders"));
    limits.put("prepay body", constant(PrepayRequests.class, "MAX_BODY_BYTES"));
    document.put("prepay body", maxBody("POST /orders/{id}/prepay"));
    for (String route :
        List.of(
            "POST /orders/{id}/ship",
            "POST /orders/{id}/receipt",
            "POST /orders/{id}/receipt/extend",
            "POST /orders/{id}/after-sale",
            "POST /orders/{id}/after-sale/resolve",
            "POST /coupons")) {
      limits.put(route + " body", constant(LifecycleRequests.class, "MAX_BODY_BYTES"));
      document.put(route + " body", maxBody(route));
    }
    limits.put("notification body", NotificationLimits.MAX_BODY_BYTES);
    document.put("notification body", maxBody("POST /wechatpay/notify"));
    limits.put("tenant notification body", NotificationLimits.MAX_BODY_BYTES);
    document.put("tenant notification body", maxBody("POST /wechatpay/notify/{tenantId}"));
    limits.put("Wechatpay-* headers", constant(NotificationLimits.class, "MAX_HEADER_CHARS"));
    document.put(
        "Wechatpay-* headers",
        API.root().at("/components/parameters/WechatpaySignature/schema/maxLength").asInt());

    JsonNode prepay = schemas.path("PrepayRequest").path("properties");
    limits.put("openId", anchored(constant(PrepayRequests.class, "OPEN_ID")));
    document.put("openId", prepay.at("/openId/pattern").asText());
    limits.put("description", constant(PrepayRequests.class, "MAX_DESCRIPTION"));
    document.put("description", prepay.at("/description/maxLength").asInt());
    JsonNode ship = schemas.path("ShipRequest").path("properties");
    limits.put("carrier", LifecycleRequests.MAX_CARRIER);
    document.put("carrier", ship.at("/carrier/maxLength").asInt());
    limits.put("trackingNo", anchored(constant(LifecycleRequests.class, "TRACKING_NO")));
    document.put("trackingNo", ship.at("/trackingNo/pattern").asText());

    limits.put("dead-letter limit", List.of(1L, (long) DeadLetterAdmin.MAX_ROWS));
    document.put(
        "dead-letter limit",
        range(
            API.parameters("GET /admin/dead-letters").stream()
                .filter(p -> p.path("name").asText().equals("limit"))
                .findFirst()
                .orElseThrow()
                .path("schema")));
    limits.put("redrive ids", DeadLetterAdmin.MAX_ROWS);
    document.put("redrive ids", schemas.at("/RedriveRequest/properties/ids/maxItems").asInt());
    limits.put("redrive filter limit", List.of(1L, (long) DeadLetterAdmin.MAX_ROWS));
    document.put(
        "redrive filter limit",
        range(schemas.at("/RedriveRequest/properties/filter/properties/limit")));
    limits.put(
        "force-close reason",
        constant(Class.forName("io.ordertimeout.admin.AdminActions"), "MAX_REASON"));
    document.put(
        "force-close reason", schemas.at("/ForceCloseRequest/properties/reason/maxLength").asInt());

    // the fields a body may have: the code refuses any other, and so does the document
    limits.put("POST /orders fields", fieldSet(PlaceOrderRequests.class, "FIELDS"));
    document.put("POST /orders fields", closedFields(schemas.path("PlaceOrderRequest")));
    limits.put("prepay fields", fieldSet(PrepayRequests.class, "FIELDS"));
    document.put("prepay fields", closedFields(schemas.path("PrepayRequest")));
    limits.put("ship fields", fieldSet(LifecycleRequests.class, "SHIP_FIELDS"));
    document.put("ship fields", closedFields(schemas.path("ShipRequest")));
    limits.put("coupon fields", fieldSet(LifecycleRequests.class, "COUPON_FIELDS"));
    document.put("coupon fields", closedFields(schemas.path("CouponRequest")));

    assertThat(document).isEqualTo(limits);
  }

  /** The ISO-8601 instants past which a coupon is refused equal the document's description. */
  @Test
  void theLatestValidUntilIsTheDocuments() {
    Object latest = constant(LifecycleRequests.class, "LATEST_VALID_UNTIL");
    assertThat(
            API.root()
                .at("/components/schemas/CouponRequest/properties/validUntil/description")
                .asText())
        .contains(latest.toString());
  }

  private static void read(
      Path file,
      Map<String, Map<Integer, Set<String>>> sections,
      Map<Integer, Set<String>> common) {
    List<Map<Integer, Set<String>>> current = new ArrayList<>();
    boolean routeSeen = false;
    for (String line : Docs.prose(Docs.read(file)).values()) {
      if (line.startsWith("#")) {
        current = new ArrayList<>();
        Matcher route = ROUTE.matcher(line);
        while (route.find()) {
          routeSeen = true;
          Map<Integer, Set<String>> table = new TreeMap<>();
          sections.put(route.group(1), table);
          current.add(table);
        }
        continue;
      }
      Matcher row = STATUS_ROW.matcher(line);
      if (!row.matches()) {
        continue;
      }
      int status = Integer.parseInt(row.group(1));
      Set<String> codes = new TreeSet<>();
      Matcher code = CODE.matcher(line.split("\\|", -1)[2]);
      while (code.find()) {
        codes.add(code.group(1));
      }
      if (!routeSeen) {
        common.computeIfAbsent(status, s -> new TreeSet<>()).addAll(codes);
      }
      for (Map<Integer, Set<String>> table : current) {
        table.computeIfAbsent(status, s -> new TreeSet<>()).addAll(codes);
      }
    }
  }

  private static int maxBody(String route) {
    JsonNode body = API.requestBody(route).orElseThrow();
    assertThat(body.has("x-max-body-bytes")).as(route + " x-max-body-bytes").isTrue();
    return body.get("x-max-body-bytes").asInt();
  }

  private static List<Long> range(JsonNode schema) {
    return List.of(schema.path("minimum").asLong(), schema.path("maximum").asLong());
  }

  private static String anchored(Object pattern) {
    return "^" + ((Pattern) pattern).pattern() + "$";
  }

  private static Set<String> fieldSet(Class<?> type, String name) {
    Set<String> out = new TreeSet<>();
    for (Object o : (Set<?>) constant(type, name)) {
      out.add((String) o);
    }
    return out;
  }

  /** The properties of a schema that refuses any other. */
  private static Set<String> closedFields(JsonNode schema) {
    assertThat(
            schema.path("additionalProperties").isBoolean()
                && !schema.path("additionalProperties").asBoolean())
        .as("additionalProperties: false")
        .isTrue();
    Set<String> out = new TreeSet<>();
    schema.path("properties").fieldNames().forEachRemaining(out::add);
    return out;
  }

  /** A static constant of the code, package-private ones too (read by reflection). */
  private static Object constant(Class<?> type, String name) {
    try {
      Field f = type.getDeclaredField(name);
      f.setAccessible(true);
      return f.get(null);
    } catch (ReflectiveOperationException e) {
      throw new AssertionError(type.getName() + "." + name + " is gone: update this test", e);
    }
  }

  /** OTC_MAX_TIMEOUT_SECONDS's default, as OtcConfig's source gives it. */
  private static long defaultMaxTimeoutSeconds() throws IOException {
    String source =
        Files.readString(
            ROOT.resolve("shared/src/main/java/io/ordertimeout/config/OtcConfig.java"));
    Matcher m = Pattern.compile("\"OTC_MAX_TIMEOUT_SECONDS\",\\s*([0-9_]+)\\)").matcher(source);
    assertThat(m.find()).as("OTC_MAX_TIMEOUT_SECONDS's default in OtcConfig").isTrue();
    return Long.parseLong(m.group(1).replace("_", ""));
  }
}
