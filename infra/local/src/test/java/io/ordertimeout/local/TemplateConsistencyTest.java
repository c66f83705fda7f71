package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ordertimeout.config.OtcConfig;
import java.io.IOException;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * Keeps template.yaml and the code in step: handlers, CodeUris, environment variables, routes both
 * ways, and the schedules the local runner uses. A function whose module is not in this checkout is
 * skipped with a message, so each branch builds alone.
 */
class TemplateConsistencyTest {

  /** The schedules the functions are built for: function logical id -> expression. */
  private static final Map<String, String> AGREED_SCHEDULES =
      Map.of(
          "TimeoutSweepFunction", "rate(1 minute)",
          "StreamConsumerFunction", "rate(1 minute)",
          "CompensationFunction", "rate(5 minutes)");

  /**
   * OTC_ variables the code reads that the template does not set, each with why that is right. A
   * new variable in the code fails the test until it is set in template.yaml or listed here.
   */
  private static final Map<String, String> NOT_IN_TEMPLATE =
      Map.ofEntries(
          Map.entry(
              "OTC_RECONCILE_HOUR",
              "defaulted (10, Asia/Shanghai); docs/reference/configuration.md"),
          Map.entry(
              "OTC_RECONCILE_LOOKBACK_DAYS", "defaulted (3); docs/reference/configuration.md"),
          Map.entry("OTC_MYSQL_USER", "defaulted; on AWS from the DB secret"),
          Map.entry("OTC_MYSQL_PASSWORD", "defaulted; on AWS from the DB secret"),
          Map.entry(
              "OTC_SWEEP_RUNS", "tunable, default 1: sweep runs expected at once (SweepSettings)"),
          Map.entry(
              "OTC_SWEEP_GATHER_MS",
              "tunable, default 12: the sweep's trade of close lag for CPU (SweepSettings)"),
          Map.entry("OTC_STREAM_RUNS", "tunable, default 1: consumer runs expected at once"),
          Map.entry("OTC_DB_POOL_SIZE", "tunable with a default sized for Lambda (OtcConfig)"),
          Map.entry(
              "OTC_EVENT_BUS_NAME",
              "set on StreamConsumerFunction, whose relay puts events on the bus; unset: stream only"),
          Map.entry("OTC_EVENTBRIDGE_ENDPOINT", "local runs: an EventBridge emulator's endpoint"),
          Map.entry("OTC_OUTBOX_BATCH", "tunable with a default (outbox.RelaySettings)"),
          Map.entry("OTC_OUTBOX_LEASE_MS", "tunable with a default (outbox.RelaySettings)"),
          Map.entry("OTC_OUTBOX_POLL_MS", "tunable with a default (outbox.RelaySettings)"),
          Map.entry("OTC_OUTBOX_CANCEL_REDELIVER_MS", "tunable with a default (RelaySettings)"),
          Map.entry("OTC_OUTBOX_RETENTION_HOURS", "tunable with a default (RelaySettings)"),
          Map.entry("OTC_OUTBOX_RETENTION_BATCH", "tunable with a default (RelaySettings)"),
          Map.entry("OTC_OUTBOX_SOURCE", "tunable with a default (outbox.RelaySettings)"),
          Map.entry(
              "OTC_TENANT_PRINCIPALS",
              "OrderCreatedFunction's only (TenantPrincipals): the others keep the default tenant"),
          Map.entry(
              "OTC_ADMIN_PRINCIPALS",
              "AdminFunction's only (AdminPrincipals): no other function serves the admin routes"),
          Map.entry(
              "OTC_PROBE_PRINCIPAL",
              "OrderCreatedFunction's and AdminFunction's, the only ones with IAM callers"),
          Map.entry("OTC_KEY_PREFIX", "tunable; default 'otc', tests and local runs isolate by it"),
          Map.entry("OTC_TIMER_SHARDS", "tunable with a default (OtcConfig)"),
          Map.entry("OTC_DEFAULT_TIMEOUT_SECONDS", "tunable with a default (OtcConfig)"),
          Map.entry("OTC_MAX_TIMEOUT_SECONDS", "tunable with a default (OtcConfig)"),
          Map.entry("OTC_SWEEP_BATCH", "tunable with a default (OtcConfig)"),
          Map.entry("OTC_DEADLINE_BATCH", "tunable with a default (config.DeadlineSettings)"),
          Map.entry("OTC_CLAIM_LEASE_MS", "tunable with a default (OtcConfig)"),
          Map.entry("OTC_SWEEP_POLL_MS", "tunable with a default (OtcConfig)"),
          Map.entry("OTC_INVOCATION_MARGIN_MS", "tunable with a default (OtcConfig)"),
          Map.entry("OTC_DB_LOCK_WAIT_SECONDS", "tunable with a default (config.Waits)"),
          Map.entry("OTC_DB_SOCKET_TIMEOUT_MS", "tunable, derived from the lock wait (Waits)"),
          Map.entry("OTC_WECHAT_CONNECT_TIMEOUT_MS", "tunable with a default (config.Waits)"),
          Map.entry("OTC_WECHAT_READ_TIMEOUT_MS", "tunable with a default (config.Waits)"),
          Map.entry("OTC_WECHAT_STEP_TIMEOUT_MS", "tunable, derived from the WeChat call (Waits)"),
          Map.entry("OTC_USERPAYING_LIMIT_MS", "tunable with a default (OtcConfig)"),
          Map.entry("OTC_COMPENSATION_GRACE_MS", "tunable with a default (CompensationSettings)"),
          Map.entry("OTC_COMPENSATION_PAGE_SIZE", "tunable with a default (CompensationSettings)"),
          Map.entry(
              "OTC_COMPENSATION_PAGE_BUDGET", "tunable with a default (CompensationSettings)"),
          Map.entry(
              "OTC_COMPENSATION_RECENT_WINDOW_MS", "tunable with a default (CompensationSettings)"),
          Map.entry(
              "OTC_COMPENSATION_CLOSED_WINDOW_MS", "tunable with a default (CompensationSettings)"),
          Map.entry(
              "OTC_COMPENSATION_NOTIFY_GRACE_MS", "tunable with a default (CompensationSettings)"),
          Map.entry(
              "OTC_COMPENSATION_WECHAT_BUDGET", "tunable with a default (CompensationSettings)"),
          Map.entry(
              "OTC_COMPENSATION_STUCK_AFTER_MS", "tunable with a default (CompensationSettings)"),
          Map.entry(
              "OTC_COMPENSATION_PARK_FOR_MS", "tunable with a default (CompensationSettings)"),
          Map.entry("OTC_MIGRATE_ON_START", "local-only: tests and the local stack migrate"),
          Map.entry("OTC_STREAM_BATCH", "tunable with a default (StreamSettings)"),
          Map.entry("OTC_STREAM_BLOCK_MS", "tunable with a default (StreamSettings)"),
          Map.entry("OTC_STREAM_CONSUMER_SLOTS", "tunable with a default (StreamSettings)"),
          Map.entry("OTC_STREAM_MAXLEN", "tunable with a default (StreamSettings)"),
          Map.entry("OTC_STREAM_MAX_DELIVERIES", "tunable with a default (StreamSettings)"),
          Map.entry("OTC_STREAM_VISIBILITY_MS", "tunable with a default (StreamSettings)"),
          Map.entry(
              "OTC_WECHAT_MCHID", "local-only: on AWS the merchant secret (OTC_WECHAT_SECRET_ARN)"),
          Map.entry("OTC_WECHAT_APPID", "local-only: on AWS the merchant secret"),
          Map.entry("OTC_WECHAT_MERCHANT_SERIAL", "local-only: on AWS the merchant secret"),
          Map.entry("OTC_WECHAT_PRIVATE_KEY", "local-only: on AWS the merchant secret"),
          Map.entry("OTC_WECHAT_APIV3_KEY", "local-only: on AWS the merchant secret"),
          Map.entry("OTC_WECHAT_PUBLIC_KEY_ID", "local-only: on AWS the merchant secret"),
          Map.entry("OTC_WECHAT_PUBLIC_KEY", "local-only: on AWS the merchant secret"),
          Map.entry("OTC_WECHAT_NOTIFY_URL", "local-only: on AWS the merchant secret"),
          Map.entry("OTC_WECHAT_BASE_URL", "local-only: points the SDK at the simulator"),
          Map.entry("OTC_WECHAT_SUB_MCHID", "local-only: on AWS the merchant secret's subMchid"),
          Map.entry("OTC_WECHAT_SUB_APPID", "local-only: on AWS the merchant secret's subAppid"));

  /**
   * Template routes whose implementation is not in this checkout: a ROUTE_NOT_FOUND answer skips
   * the probe (with this message) instead of failing. Empty while every route has its handler.
   */
  private static final Map<String, String> PENDING_ROUTES = Map.of();

  /** Routes no handler may serve: a handler answering them would be a route the template lacks. */
  private static final List<String> MADE_UP_ROUTES =
      List.of(
          "GET /orders",
          "DELETE /orders/ord-000001",
          "PUT /orders/ord-000001",
          "POST /orders/ord-000001/refund",
          "GET /orders/ord-000001/items",
          "POST /wechatpay/refund-notify",
          "POST /wechatpay/notify/default/extra",
          "GET /wechatpay/notify/default");

  private static final Pattern OTC_NAME = Pattern.compile("\"(OTC_[A-Z0-9_]+)\"");

  private static Path root;
  private static SamTemplate template;
  private static LocalStack stack;

  /**
   * The functions as a deployed stack configures them (every mapping set), for the hook's samples.
   */
  private static ProductionFunctions production;

  private static final HttpClient http = HttpClient.newHttpClient();
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final ObjectMapper LENIENT =
      new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
  private static ObjectNode hookAnswers;

  @BeforeAll
  static void start() {
    root = Main.templatePath().getParent();
    template = SamTemplate.read(root.resolve("template.yaml"));
    stack =
        LocalStack.start(
            new LocalStack.Options(root.resolve("template.yaml"), "127.0.0.1", 0, 1.0),
            System.getenv());
  }

  @AfterAll
  static void stop() {
    if (production != null) {
      production.close();
    }
    stack.close();
  }

  @TestFactory
  Stream<DynamicTest> everyHandlerImplementsRequestHandlerWithItsEventTypes() {
    return template.functions().stream()
        .map(
            f ->
                DynamicTest.dynamicTest(
                    f.logicalId(),
                    () -> {
                      Class<?> type = handlerClass(f);
                      Type[] args = requestHandlerTypes(type);
                      if (!f.routes().isEmpty()) {
                        assertThat(args)
                            .containsExactly(
                                APIGatewayV2HTTPEvent.class, APIGatewayV2HTTPResponse.class);
                      } else {
                        assertThat(raw(args[0])).isEqualTo(Map.class);
                      }
                      assertThat(f.handlerMethod()).isEqualTo("handleRequest");
                    }));
  }

  @TestFactory
  Stream<DynamicTest> everyCodeUriIsTheModuleWhoseShadedJarTheMakefileShips() {
    return template.functions().stream()
        .map(
            f ->
                DynamicTest.dynamicTest(
                    f.logicalId(),
                    () -> {
                      // sam build runs the Makefile's build-<LogicalId> target, which copies
                      // functions/<module>/target/<module>-lambda.jar (TemplateProductionTest)
                      Matcher m = Pattern.compile("functions/([a-z0-9-]+)").matcher(f.codeUri());
                      assertThat(m.matches())
                          .as("CodeUri %s of %s", f.codeUri(), f.logicalId())
                          .isTrue();
                      Path pom = root.resolve("functions").resolve(m.group(1)).resolve("pom.xml");
                      assumeTrue(
                          Files.exists(pom),
                          "module functions/" + m.group(1) + " is not in this checkout");
                      assertThat(Files.readString(pom))
                          .contains("<artifactId>" + m.group(1) + "</artifactId>")
                          .contains("maven-shade-plugin");
                      // the parent's shade configuration names the jar the Makefile copies
                      assertThat(Files.readString(root.resolve("pom.xml")))
                          .contains(
                              "<outputFile>${project.build.directory}/${project.artifactId}"
                                  + "-lambda.jar</outputFile>");
                      assertThat(
                              handlerClass(f)
                                  .getProtectionDomain()
                                  .getCodeSource()
                                  .getLocation()
                                  .getPath())
                          .as("handler class of %s comes from its module", f.logicalId())
                          .contains("functions/" + m.group(1) + "/target/");
                    }));
  }

  @Test
  void everyEnvironmentVariableTheCodeReadsIsSetOrDocumented() throws IOException {
    Set<String> read = otcNamesInMainSources();
    assertThat(read).as("OTC_ names found in the sources").contains("OTC_MYSQL_URL");
    for (SamTemplate.Function f : template.functions()) {
      Set<String> set = new TreeSet<>(template.globalEnvironment().keySet());
      set.addAll(f.environment().keySet());
      Set<String> missing = new TreeSet<>(read);
      missing.removeAll(set);
      missing.removeAll(NOT_IN_TEMPLATE.keySet());
      assertThat(missing)
          .as(
              "variables %s reads that neither template.yaml nor NOT_IN_TEMPLATE covers",
              f.logicalId())
          .isEmpty();
    }
    assertThat(NOT_IN_TEMPLATE.keySet())
        .as("documented variables no code reads any more")
        .allMatch(read::contains);
  }

  /**
   * OTC_FUNCTION_TIMEOUT_MS is each function's Timeout (the init checks compare the waits with it),
   * the template's values pass those checks, and the two looping functions keep running through
   * their whole schedule period: the sweep starts passes while its remaining time exceeds the
   * margin and the WeChat step, and closes a batch inline when its measured closing time fits too,
   * so its Timeout must exceed the period by all three.
   */
  @TestFactory
  Stream<DynamicTest> everyFunctionsWaitsFitItsTimeoutAndTheLoopsCoverTheirSchedule() {
    return template.functions().stream()
        .map(f -> DynamicTest.dynamicTest(f.logicalId(), () -> waitsFit(f)));
  }

  private static void waitsFit(SamTemplate.Function f) {
    // every parameter given a production value, the mappings among them
    Map<String, String> env =
        ProductionFunctions.environment(
            template,
            f,
            ProductionFunctions.values(
                "jdbc:mysql://db.internal:3306/otc", "rediss://cache.internal:6379", "true"),
            TemplateProductionTest.parameterNames());
    long timeoutMillis = f.timeoutSeconds() * 1_000L;
    assertThat(env.get("OTC_FUNCTION_TIMEOUT_MS"))
        .as("OTC_FUNCTION_TIMEOUT_MS of %s", f.logicalId())
        .isEqualTo(Long.toString(timeoutMillis));
    OtcConfig config = OtcConfig.fromEnvironment(env);
    if (f.schedules().isEmpty() || f.logicalId().equals("CompensationFunction")) {
      return; // not a loop: compensation runs one pass per invocation
    }
    long idle = config.invocationMargin().toMillis();
    if (f.logicalId().equals("TimeoutSweepFunction")) {
      // a pass: the WeChat step and, before any batch was measured, 20 ms + 1 ms an order
      idle += config.waits().weChatStep().toMillis() + 20 + config.sweepBatch();
    }
    for (SamTemplate.Schedule s : f.schedules()) {
      assertThat(timeoutMillis - idle)
          .as("ms %s loops of its %d s, against its schedule", f.logicalId(), f.timeoutSeconds())
          .isGreaterThan(s.rate().toMillis());
    }
  }

  @TestFactory
  Stream<DynamicTest> everyTemplateRouteIsServedByItsHandler() {
    return template.routes().stream()
        .map(
            r ->
                DynamicTest.dynamicTest(
                    r.routeKey(),
                    () -> {
                      SamTemplate.Function f =
                          template.functions().stream()
                              .filter(x -> x.routes().contains(r))
                              .findFirst()
                              .orElseThrow();
                      assumeTrue(
                          loadable(f), f.handlerClass() + " is not in this checkout: skipped");
                      HttpResponse<String> response =
                          send(
                              r.method(),
                              r.path()
                                  .replace("{id}", "ord-000001")
                                  .replace("{tenantId}", "default")
                                  .replace("{spMchid}", "1900000100"),
                              "{}");
                      boolean notFound = response.body().contains("ROUTE_NOT_FOUND");
                      if (notFound && PENDING_ROUTES.containsKey(r.routeKey())) {
                        assumeTrue(false, r.routeKey() + ": " + PENDING_ROUTES.get(r.routeKey()));
                      }
                      // a 404 about the order (no such order) is an answer; a 404 about the route
                      // (API Gateway's Not Found, the handler's ROUTE_NOT_FOUND) is not
                      assertThat(response.body())
                          .as(
                              "%s answered %s %s",
                              r.routeKey(), response.statusCode(), response.body())
                          .doesNotContain("ROUTE_NOT_FOUND")
                          .isNotEqualTo("{\"message\":\"Not Found\"}");
                      assertThat(response.statusCode()).as(r.routeKey()).isNotIn(405, 501);
                    }));
  }

  @Test
  void handlersServeNoRouteTheTemplateLacks() throws Exception {
    for (String route : MADE_UP_ROUTES) {
      String[] parts = route.split(" ");
      HttpResponse<String> viaGateway = send(parts[0], parts[1], "{}");
      assertThat(viaGateway.statusCode()).as(route).isEqualTo(404);
      assertThat(viaGateway.body()).isEqualTo("{\"message\":\"Not Found\"}");
    }
    // the handlers themselves, asked directly as if the gateway had routed them anyway
    for (SamTemplate.Function f : template.functions()) {
      if (f.routes().isEmpty() || !loadable(f)) {
        continue;
      }
      LocalFunction function = LocalFunction.load(f, stack.app()).orElseThrow();
      for (String route : MADE_UP_ROUTES) {
        String[] parts = route.split(" ");
        APIGatewayV2HTTPResponse response = invokeDirectly(function, f, parts[0], parts[1]);
        assertThat(response.getStatusCode())
            .as(
                "%s answered %s %s: %s",
                f.logicalId(), route, response.getStatusCode(), response.getBody())
            .isIn(404, 405);
      }
    }
  }

  @Test
  void schedulesAreTheAgreedOnesAndTheLocalRunnerUsesThem() {
    for (SamTemplate.Function f : template.functions()) {
      List<String> expressions =
          f.schedules().stream().map(SamTemplate.Schedule::expression).toList();
      String agreed = AGREED_SCHEDULES.get(f.logicalId());
      assertThat(expressions)
          .as(f.logicalId())
          .isEqualTo(agreed == null ? List.of() : List.of(agreed));
      for (SamTemplate.Schedule s : f.schedules()) {
        assertThat(s.input()).as("Input of %s", f.logicalId()).startsWith("{").endsWith("}");
      }
    }
    List<ScheduleRunner> runners = new ArrayList<>();
    for (SamTemplate.Function f : template.functions()) {
      if (loadable(f)) {
        runners.addAll(
            ScheduleRunner.forAll(
                List.of(LocalFunction.load(f, stack.app()).orElseThrow()),
                1.0,
                ScheduleRunner.Jitter.off()));
      }
    }
    assertThat(runners).isNotEmpty();
    for (ScheduleRunner r : runners) {
      assertThat(r.interval()).isEqualTo(SamTemplate.rate(AGREED_SCHEDULES.get(r.functionName())));
    }
  }

  // ---- the pre-traffic hook's samples ----

  /**
   * Each sample of template.yaml's pre-traffic hook, sent to the real handler as the hook sends it
   * (a direct invoke, no gateway, its caller the hook's role), gets the answer the hook requires of
   * a healthy new version: with the function configured as deployed, TenantPrincipals and
   * AdminPrincipals set.
   */
  @TestFactory
  Stream<DynamicTest> preTrafficHookSamplesGetTheAnswersTheHookRequires() throws IOException {
    JsonNode samples = TemplateProductionTest.hookSamples();
    List<DynamicTest> tests = new ArrayList<>();
    for (SamTemplate.Function f : template.functions()) {
      String module = TemplateProductionTest.module(f);
      for (JsonNode sample : samples.path(module)) {
        tests.add(
            DynamicTest.dynamicTest(
                module + " " + sample.path("name").asText(),
                () -> {
                  JsonNode answer =
                      hookAnswers().path(module).get(indexOf(samples, module, sample));
                  assertThat(verdict(sample.path("expect"), answer))
                      .as("%s answered %s", module, answer)
                      .isEmpty();
                }));
      }
    }
    return tests.stream();
  }

  /**
   * The hook's own Python code (infra/hooks/pre-traffic/index.py), given the handlers' answers
   * through stubbed CodeDeploy and Lambda clients, reports Succeeded for every function and sends
   * the samples; one wrong answer makes it report Failed. Needs python3 with botocore (cfn-lint's
   * translator brings boto3).
   */
  @Test
  void preTrafficHookPassesTheseHandlersAndFailsAWrongAnswer(@TempDir Path work) throws Exception {
    Path python = TemplateProductionTest.onPath("python3");
    assumeTrue(python != null, "python3 is not on the PATH: hook run skipped");
    assumeTrue(
        TemplateProductionTest.run(work, python.toString(), "-c", "import boto3").code() == 0,
        "boto3 is not installed (pip install cfn-lint brings it): hook run skipped");
    Path hook = PreTrafficHookTest.hookDir();
    JsonNode samples = TemplateProductionTest.hookSamples();

    JsonNode results = runHook(python, hook, work, hookAnswers());
    for (String module : fieldNames(samples)) {
      assertThat(results.at("/" + module + "/status").asText()).as(module).isEqualTo("Succeeded");
      List<JsonNode> sent = new ArrayList<>();
      samples.path(module).forEach(sample -> sent.add(asTheHookSends(sample.path("event"))));
      assertThat(results.at("/" + module + "/invoked"))
          .as("events the hook sent to %s", module)
          .containsExactlyElementsOf(sent);
    }

    // and the answers of a stack whose functions do not know the hook's role (OTC_PROBE_PRINCIPAL
    // unset or another role): the order API refuses the samples, the deployment would roll back
    ObjectNode wrong = hookAnswers().deepCopy();
    ((ObjectNode) wrong.path("order-created").get(0)).put("statusCode", 500);
    wrong
        .withArray("timeout-sweep")
        .set(0, JSON.getNodeFactory().textNode("{\"failedBatches\":1}"));
    JsonNode failed = runHook(python, hook, work, wrong);
    assertThat(failed.at("/order-created/status").asText()).isEqualTo("Failed");
    assertThat(failed.at("/timeout-sweep/status").asText()).isEqualTo("Failed");
    assertThat(failed.at("/payment-notify/status").asText()).isEqualTo("Succeeded");
  }

  private static JsonNode runHook(Path python, Path hook, Path work, JsonNode answers)
      throws Exception {
    Files.writeString(work.resolve("answers.json"), answers.toString());
    TemplateProductionTest.Result out =
        TemplateProductionTest.run(
            work,
            false,
            python.toString(),
            TemplateProductionTest.tool("pretraffic_hook_driver.py").toString(),
            hook.toString(),
            work.resolve("answers.json").toString(),
            ProductionFunctions.HOOK_ROLE);
    assertThat(out.code()).as("pretraffic_hook_driver.py: %s", out.output()).isZero();
    return JSON.readTree(out.output());
  }

  /**
   * What each function, configured as deployed ({@link ProductionFunctions}), answered each hook
   * sample, as Lambda would return it (module -> list).
   */
  private static synchronized ObjectNode hookAnswers() throws IOException {
    if (hookAnswers == null) {
      if (production == null) {
        production =
            new ProductionFunctions(
                template, io.ordertimeout.embedded.EmbeddedServers.get(), stack.simulator());
      }
      JsonNode samples = TemplateProductionTest.hookSamples();
      ObjectNode answers = JSON.createObjectNode();
      for (SamTemplate.Function f : template.functions()) {
        assumeTrue(loadable(f), f.handlerClass() + " is not in this checkout: skipped");
        LocalFunction function = production.function(f.logicalId());
        ArrayNode moduleAnswers = answers.putArray(TemplateProductionTest.module(f));
        for (JsonNode sample : samples.path(TemplateProductionTest.module(f))) {
          JsonNode event = asTheHookSends(sample.path("event"));
          moduleAnswers.add(JSON.valueToTree(invokeAsTheHook(function, f, event)));
        }
      }
      hookAnswers = answers;
    }
    return hookAnswers;
  }

  /**
   * A sample as the hook sends it: an IAM caller of "PROBE_PRINCIPAL" becomes the hook's role (its
   * PROBE_PRINCIPAL variable, the functions' OTC_PROBE_PRINCIPAL).
   */
  static JsonNode asTheHookSends(JsonNode event) {
    JsonNode iam = event.at("/requestContext/authorizer/iam");
    if (!"PROBE_PRINCIPAL".equals(iam.path("userArn").asText(null))) {
      return event;
    }
    JsonNode sent = event.deepCopy();
    ((ObjectNode) sent.at("/requestContext/authorizer/iam"))
        .put("userArn", ProductionFunctions.HOOK_ROLE);
    return sent;
  }

  private static Object invokeAsTheHook(
      LocalFunction function, SamTemplate.Function f, JsonNode event) throws IOException {
    if (f.routes().isEmpty()) {
      // a scheduled pass runs until its remaining time falls under the 5 s invocation margin
      return function.invoke(
          JSON.treeToValue(event, Map.class), new LocalContext(f.logicalId(), 7_000, () -> false));
    }
    APIGatewayV2HTTPEvent request = LENIENT.treeToValue(event, APIGatewayV2HTTPEvent.class);
    return function.invoke(
        request, new LocalContext(f.logicalId(), function.timeoutMillis(), () -> false));
  }

  /**
   * The hook's check in Java: empty when {@code answer} meets {@code expect}, else what differs.
   */
  static String verdict(JsonNode expect, JsonNode answer) throws IOException {
    if (expect.has("statusCode")) {
      JsonNode body = JSON.readTree(answer.path("body").asText("{}"));
      String code =
          body.path("code").asText("").isEmpty()
              ? body.at("/error/code").asText(null)
              : body.path("code").asText();
      boolean passed =
          answer.path("statusCode").asInt() == expect.path("statusCode").asInt()
              && expect.path("code").asText().equals(code);
      return passed ? "" : "status " + answer.path("statusCode") + ", code " + code;
    }
    JsonNode stats = JSON.readTree(answer.asText());
    List<String> wrong = new ArrayList<>();
    expect
        .path("zero")
        .forEach(
            f -> {
              if (!stats.path(f.asText()).isIntegralNumber()
                  || stats.path(f.asText()).asLong() != 0) {
                wrong.add(f.asText() + "=" + stats.path(f.asText()));
              }
            });
    expect
        .path("empty")
        .forEach(
            f -> {
              if (!stats.path(f.asText()).isArray() || !stats.path(f.asText()).isEmpty()) {
                wrong.add(f.asText() + "=" + stats.path(f.asText()));
              }
            });
    return String.join(", ", wrong);
  }

  private static int indexOf(JsonNode samples, String module, JsonNode sample) {
    int i = 0;
    for (JsonNode s : samples.path(module)) {
      if (s == sample) {
        return i;
      }
      i++;
    }
    throw new AssertionError("sample not found");
  }

  private static List<String> fieldNames(JsonNode object) {
    List<String> out = new ArrayList<>();
    object.fieldNames().forEachRemaining(out::add);
    return out;
  }

  // ---- helpers ----

  private static APIGatewayV2HTTPResponse invokeDirectly(
      LocalFunction function, SamTemplate.Function f, String method, String path) {
    SamTemplate.HttpRoute fake = new SamTemplate.HttpRoute("probe", method, path, "AWS_IAM");
    RouteTable.Match match = new RouteTable.Match(RouteTable.entry(fake, function), Map.of());
    PayloadV2.Request request =
        new PayloadV2.Request(
            method,
            path,
            "",
            Map.of("Content-Type", List.of("application/json")),
            "{}".getBytes(),
            "127.0.0.1");
    return (APIGatewayV2HTTPResponse)
        function.invoke(
            PayloadV2.event(request, match),
            new LocalContext(f.logicalId(), function.timeoutMillis(), () -> false));
  }

  private static HttpResponse<String> send(String method, String path, String body)
      throws IOException, InterruptedException {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(stack.apiUrl() + path))
            .header("content-type", "application/json")
            .method(method, HttpRequest.BodyPublishers.ofString(body))
            .build();
    HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
    // every answer of a template route is as docs/reference/openapi.yaml says
    if (!SamTemplate.read(Main.templatePath()).routes().stream()
        .filter(r -> r.method().equals(method))
        .noneMatch(
            r ->
                path.replaceFirst("\\?.*$", "")
                    .matches(r.path().replaceAll("\\{[^/]+}", "[^/]+")))) {
      assertThat(ContractTest.conformance(request, body, response))
          .as(method + " " + path + " -> " + response.statusCode() + " " + response.body())
          .isEmpty();
    }
    return response;
  }

  private static boolean loadable(SamTemplate.Function f) {
    try {
      Class.forName(f.handlerClass());
      return true;
    } catch (ClassNotFoundException e) {
      return false;
    }
  }

  private static Class<?> handlerClass(SamTemplate.Function f) {
    try {
      return Class.forName(f.handlerClass());
    } catch (ClassNotFoundException e) {
      assumeTrue(false, f.handlerClass() + " is not in this checkout (" + f.logicalId() + ")");
      throw new AssertionError("unreachable");
    }
  }

  /**
   * The RequestHandler type arguments of a handler or of the base it extends (ScheduledHandler,
   * HttpApiHandler), where they must be concrete: Lambda reads them to deserialize the event.
   */
  private static Type[] requestHandlerTypes(Class<?> type) {
    for (Class<?> c = type; c != null; c = c.getSuperclass()) {
      for (Type t : c.getGenericInterfaces()) {
        if (t instanceof ParameterizedType p && p.getRawType() == RequestHandler.class) {
          assertThat(p.getActualTypeArguments()).allMatch(a -> !(a instanceof TypeVariable<?>));
          return p.getActualTypeArguments();
        }
      }
    }
    throw new AssertionError(type.getName() + " does not implement RequestHandler<I, O>");
  }

  private static Class<?> raw(Type t) {
    return t instanceof ParameterizedType p ? (Class<?>) p.getRawType() : (Class<?>) t;
  }

  /** "OTC_..." string literals in shared's and every function's main sources. */
  private static Set<String> otcNamesInMainSources() throws IOException {
    Set<String> names = new TreeSet<>();
    List<Path> dirs = new ArrayList<>(List.of(root.resolve("shared/src/main/java")));
    try (Stream<Path> functions = Files.list(root.resolve("functions"))) {
      functions.map(d -> d.resolve("src/main/java")).filter(Files::isDirectory).forEach(dirs::add);
    }
    for (Path dir : dirs) {
      try (Stream<Path> files = Files.walk(dir)) {
        for (Path file : files.filter(p -> p.toString().endsWith(".java")).toList()) {
          Matcher m = OTC_NAME.matcher(Files.readString(file));
          while (m.find()) {
            names.add(m.group(1));
          }
        }
      }
    }
    return names;
  }
}
