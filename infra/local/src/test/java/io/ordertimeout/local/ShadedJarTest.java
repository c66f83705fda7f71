package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import io.ordertimeout.testing.TestStack;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * The six deployment packages as Lambda runs them: each function's shaded jar
 * (functions/&lt;module&gt;/target/&lt;module&gt;-lambda.jar, what `sam build` ships) carries what
 * its handler loads and none of the artifacts named below, stays under its size budget, and its
 * handler runs from that jar alone in a child JVM (init through the no-argument constructor, as
 * Lambda's runtime does) against the embedded Redis and MariaDB, the WeChat Pay simulator, and a
 * stand-in for Secrets Manager and EventBridge on AWS_ENDPOINT_URL. Run after `./mvnw package` (in
 * `verify` this module comes after the function modules); a missing jar skips with a message.
 *
 * <p>Before this check two jars could not run: order-created and stream-consumer shipped without
 * Lettuce, compensation and admin without jackson-databind, because a test-scoped declaration in
 * the module overrode the compile scope the library has through shared.
 */
@Tag("integration")
class ShadedJarTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Path ROOT = Main.templatePath().getParent();
  private static final SamTemplate SAM = SamTemplate.read(ROOT.resolve("template.yaml"));

  /** Entry prefix -> the artifact it belongs to, in no function's jar. */
  private static final Map<String, String> UNWANTED =
      Map.of(
          "com/google/protobuf/", "protobuf-java (only Connector/J's X DevAPI uses it)",
          "org/apache/hc/", "Apache HttpClient 5 (the SDK's apache5-client)",
          "software/amazon/awssdk/http/apache5/", "the SDK's apache5-client",
          "software/amazon/awssdk/http/apache/", "the SDK's apache-client",
          "software/amazon/awssdk/http/nio/", "the SDK's netty-nio-client",
          "org/apache/http/", "Apache HttpClient 4 (wechatpay-java's ApacheHttpClientBuilder)");

  private static final String FLYWAY = "org/flywaydb/";
  private static final String EVENTBRIDGE = "software/amazon/awssdk/services/eventbridge/";

  /** Where each may be: the one function that migrates, the one that puts events on the bus. */
  private static final Map<String, String> ONLY_IN =
      Map.of(FLYWAY, "admin", EVENTBRIDGE, "stream-consumer");

  /**
   * What every handler loads: Redis, JSON, JDBC, the SDK's HTTP client, WeChat Pay's HTTP client.
   */
  private static final List<String> REQUIRED =
      List.of(
          "io/lettuce/core/RedisClient.class",
          "com/fasterxml/jackson/databind/ObjectMapper.class",
          "com/mysql/cj/jdbc/Driver.class",
          "com/zaxxer/hikari/HikariDataSource.class",
          "software/amazon/awssdk/http/urlconnection/UrlConnectionHttpClient.class",
          "okhttp3/OkHttpClient.class",
          "ch/qos/logback/classic/Logger.class");

  /**
   * Size budget per jar, bytes: the measured size after slimming (docs/operations/deploy.md) plus
   * about 1.5 MB for growth. A jar past it has gained a dependency: name it here or keep it out.
   */
  private static final Map<String, Long> MAX_BYTES =
      Map.of(
          "order-created", 26_500_000L,
          "payment-notify", 26_500_000L,
          "timeout-sweep", 25_500_000L,
          "stream-consumer", 27_500_000L,
          "compensation", 25_500_000L,
          "admin", 27_500_000L);

  private static final String DB_SECRET =
      "arn:aws:secretsmanager:ap-southeast-1:123456789012:secret:otc-db";
  private static final String PROBE_ROLE = "arn:aws:iam::123456789012:role/otc-pre-traffic-hook";
  private static final String WECHAT_SECRET =
      "arn:aws:secretsmanager:ap-southeast-1:123456789012:secret:otc-wechat";
  private static final String ORDER_ID = "wx20261130000001";
  private static final String OPEN_ID = "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o";
  private static final long SCHEDULED_REMAINING_MS = 15_000;
  private static final long ORDER_TIMEOUT_SECONDS = 15;

  private static WeChatPaySimulator wechat;
  private static HttpServer aws;
  private static final Map<String, String> secrets = new HashMap<>();
  private static final List<JsonNode> putEvents = new CopyOnWriteArrayList<>();

  @BeforeAll
  static void start() throws IOException {
    wechat = WeChatPaySimulator.start();
    aws = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    aws.createContext("/", ShadedJarTest::answerAsAws);
    aws.start();
  }

  @AfterAll
  static void stop() {
    if (aws != null) {
      aws.stop(0);
    }
    if (wechat != null) {
      wechat.close();
    }
  }

  @TestFactory
  Stream<DynamicTest> everyJarCarriesWhatItsHandlerLoadsAndNothingNamedUnwanted() {
    return SAM.functions().stream()
        .map(
            f ->
                DynamicTest.dynamicTest(
                    f.logicalId(),
                    () -> {
                      String module = TemplateProductionTest.module(f);
                      Path jar = jar(module);
                      Set<String> entries = entries(jar);
                      List<String> required = new ArrayList<>(REQUIRED);
                      required.add(f.handlerClass().replace('.', '/') + ".class");
                      assertThat(entries).as("%s carries", jar).containsAll(required);
                      for (Map.Entry<String, String> u : UNWANTED.entrySet()) {
                        assertThat(entries)
                            .as("%s carries %s", jar, u.getValue())
                            .noneMatch(e -> e.startsWith(u.getKey()));
                      }
                      ONLY_IN.forEach(
                          (prefix, owner) -> {
                            boolean carries = entries.stream().anyMatch(e -> e.startsWith(prefix));
                            assertThat(carries)
                                .as("%s carries %s (only %s's jar should)", jar, prefix, owner)
                                .isEqualTo(module.equals(owner));
                          });
                      assertThat(Files.size(jar))
                          .as("size of %s (budget in ShadedJarTest.MAX_BYTES)", jar)
                          .isLessThanOrEqualTo(MAX_BYTES.get(module));
                    }));
  }

  /**
   * One order's life through the six jars, each in its own JVM: admin migrates a fresh schema at
   * init (the only jar with Flyway), order-created places and prepays (Redis, MySQL, WeChat over
   * OkHttp), payment-notify refuses a stale notification after parsing it, the sweep closes the
   * order at its deadline (closing the trade at WeChat), the consumer's relay puts the order's
   * events on the bus (the only jar with the EventBridge client), and compensation runs a pass.
   */
  @Test
  void everyHandlerRunsFromItsJarAlone(@TempDir Path work) throws Exception {
    for (String module : List.of("admin", "order-created", "payment-notify", "timeout-sweep")) {
      assumeTrue(Files.exists(jarPath(module)), jarPath(module) + " is not built: skipped");
    }
    try (TestStack stack = TestStack.create("shaded-jars")) {
      EmbeddedServers servers = stack.servers();
      stack.seedSku("sku-tea-500g", 10);
      stack.seedSku("sku-cup", 10);
      stack.seedCoupon("cp-welcome-10", OPEN_ID);
      String user = dbUser(stack);
      secrets.put(DB_SECRET, "{\"username\":\"" + user + "\",\"password\":\"jar-pass\"}");
      String prefix = stack.app().config().keyPrefix();
      // as the hook sends them: the samples' caller PROBE_PRINCIPAL is the hook's role
      JsonNode samples =
          JSON.readTree(
              TemplateProductionTest.hookSamples()
                  .toString()
                  .replace("\"PROBE_PRINCIPAL\"", "\"" + PROBE_ROLE + "\""));

      // admin: migrations at init on an empty schema, then the hook's samples
      String empty = servers.createSchema("shaded-admin");
      try {
        Map<String, String> adminEnv = environment("AdminFunction", servers, empty, prefix);
        adminEnv.put("OTC_MIGRATE_ON_START", "true");
        List<JsonNode> answers = run(work, "admin", adminEnv, samples.path("admin"), 10_000);
        assertHookVerdicts(samples.path("admin"), answers);
        assertThat(count(stack, "SELECT COUNT(*) FROM " + empty + ".flyway_schema_history"))
            .as("migrations applied by the admin jar")
            .isPositive();
      } finally {
        servers.dropSchema(empty);
      }

      // order-created: place (a 15 s deadline) and prepay
      String schema = stack.schema();
      JsonNode place =
          JSON.readTree(ROOT.resolve("events/order-created-post-orders.json").toFile());
      ObjectNode prepay = place.deepCopy();
      prepay.put("routeKey", "POST /orders/{id}/prepay");
      prepay.put("rawPath", "/orders/" + ORDER_ID + "/prepay");
      prepay.putObject("pathParameters").put("id", ORDER_ID);
      ((ObjectNode) prepay.path("requestContext")).put("routeKey", "POST /orders/{id}/prepay");
      ((ObjectNode) prepay.at("/requestContext/http"))
          .put("path", "/orders/" + ORDER_ID + "/prepay");
      prepay.put("body", "{\"openId\":\"" + OPEN_ID + "\"}");
      List<JsonNode> placed =
          run(
              work,
              "order-created",
              environment("OrderCreatedFunction", servers, schema, prefix),
              JSON.createArrayNode().add(place).add(prepay),
              10_000);
      assertThat(placed.get(0).path("statusCode").asInt())
          .as("place: %s", placed.get(0))
          .isEqualTo(201);
      assertThat(placed.get(1).path("statusCode").asInt())
          .as("prepay: %s", placed.get(1))
          .isEqualTo(200);
      assertThat(wechat.trade(ORDER_ID)).as("the trade prepaid at WeChat").isPresent();

      // payment-notify: the hook's stale notification is parsed and refused (401)
      List<JsonNode> notified =
          run(
              work,
              "payment-notify",
              environment("PaymentNotifyFunction", servers, schema, prefix),
              samples.path("payment-notify"),
              10_000);
      assertHookVerdicts(samples.path("payment-notify"), notified);

      // timeout-sweep: once the order's deadline has passed, one short pass closes it
      awaitDeadline(stack);
      JsonNode swept =
          stats(
              run(
                  work,
                  "timeout-sweep",
                  environment("TimeoutSweepFunction", servers, schema, prefix),
                  samples.path("timeout-sweep"),
                  SCHEDULED_REMAINING_MS));
      assertThat(swept.path("failedBatches").asLong()).as("sweep: %s", swept).isZero();
      assertThat(
              stack.dump(
                  "SELECT status FROM orders WHERE tenant_id = 'default' AND order_id = '"
                      + ORDER_ID
                      + "'"))
          .as("the order after the sweep's pass")
          .containsExactly("CLOSED|");

      // stream-consumer: its relay puts the order's events on the bus
      if (Files.exists(jarPath("stream-consumer"))) {
        Map<String, String> consumerEnv =
            environment("StreamConsumerFunction", servers, schema, prefix);
        consumerEnv.put("OTC_EVENT_BUS_NAME", "otc-shaded-jar-test");
        JsonNode consumed =
            stats(
                run(
                    work,
                    "stream-consumer",
                    consumerEnv,
                    samples.path("stream-consumer"),
                    SCHEDULED_REMAINING_MS));
        assertThat(consumed.path("errors").asLong()).as("consumer: %s", consumed).isZero();
        assertThat(putEvents.toString()).as("PutEvents the relay sent").contains(ORDER_ID);
      }

      // compensation: a pass (it stops at its margin; nothing fails)
      if (Files.exists(jarPath("compensation"))) {
        JsonNode compensated =
            stats(
                run(
                    work,
                    "compensation",
                    environment("CompensationFunction", servers, schema, prefix),
                    samples.path("compensation"),
                    SCHEDULED_REMAINING_MS));
        assertThat(compensated.path("failures").isArray()).as("%s", compensated).isTrue();
        assertThat(compensated.path("failures")).as("compensation: %s", compensated).isEmpty();
      }
    }
  }

  @Test
  void aFunctionWithoutFlywayToldToMigrateFailsItsInitSayingSo(@TempDir Path work)
      throws Exception {
    assumeTrue(Files.exists(jarPath("order-created")), "order-created's jar is not built: skipped");
    try (TestStack stack = TestStack.create("shaded-no-flyway")) {
      secrets.put(DB_SECRET, "{\"username\":\"" + dbUser(stack) + "\",\"password\":\"jar-pass\"}");
      Map<String, String> env =
          environment(
              "OrderCreatedFunction",
              stack.servers(),
              stack.schema(),
              stack.app().config().keyPrefix());
      env.put("OTC_MIGRATE_ON_START", "true");

      Run run = runner(work, "order-created", env, List.of(), 10_000);

      assertThat(run.code()).as(run.output()).isEqualTo(2);
      assertThat(run.output()).contains("OTC_MIGRATE_ON_START").contains("admin");
    }
  }

  // ---- the child JVM ----

  private record Run(int code, String output) {}

  /** Runs {@code events} through the module's handler in a child JVM; its answers, in order. */
  private static List<JsonNode> run(
      Path work, String module, Map<String, String> env, JsonNode events, long remainingMs)
      throws Exception {
    List<JsonNode> list = new ArrayList<>();
    events.forEach(s -> list.add(s.has("event") ? s.path("event") : s));
    Run run = runner(work, module, env, list, remainingMs);
    assertThat(run.code()).as("%s from its jar:%n%s", module, run.output()).isZero();
    List<JsonNode> answers = new ArrayList<>();
    for (String line : run.output().split("\n")) {
      if (line.startsWith("RESULT ")) {
        answers.add(JSON.readTree(line.substring("RESULT ".length())));
      }
    }
    assertThat(answers).as("answers of %s:%n%s", module, run.output()).hasSize(list.size());
    return answers;
  }

  private static Run runner(
      Path work, String module, Map<String, String> env, List<JsonNode> events, long remainingMs)
      throws Exception {
    SamTemplate.Function f =
        SAM.functions().stream()
            .filter(x -> TemplateProductionTest.module(x).equals(module))
            .findFirst()
            .orElseThrow();
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xmx384m");
    command.add("-XX:TieredStopAtLevel=1");
    command.add("-cp");
    command.add(jarPath(module).toString());
    command.add(runnerSource().toString());
    command.add(f.handlerClass());
    command.add(Long.toString(remainingMs));
    int i = 0;
    for (JsonNode event : events) {
      Path file = work.resolve(module + "-" + i++ + ".json");
      Files.writeString(file, event.toString(), StandardCharsets.UTF_8);
      command.add(file.toString());
    }
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    pb.environment().keySet().removeIf(k -> k.startsWith("OTC_") || k.startsWith("AWS_"));
    pb.environment().putAll(env);
    Path log = work.resolve(module + ".log");
    pb.redirectOutput(log.toFile());
    Process child = pb.start();
    if (!child.waitFor(120, TimeUnit.SECONDS)) {
      child.destroyForcibly();
      throw new AssertionError(module + " did not finish in 120 s: " + Files.readString(log));
    }
    return new Run(child.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
  }

  /** Lambda's environment for the function: the template's, pointed at the local servers. */
  private static Map<String, String> environment(
      String logicalId, EmbeddedServers servers, String schema, String prefix) {
    SamTemplate.Function f = SAM.function(logicalId).orElseThrow();
    Map<String, String> env = new LinkedHashMap<>(SAM.globalEnvironment());
    env.putAll(f.environment());
    // values the template takes from parameters
    env.remove("OTC_WECHAT_SECRET_ARN");
    env.remove("OTC_TENANT_PRINCIPALS");
    env.remove("OTC_EVENT_BUS_NAME");
    env.remove("OTC_ADMIN_PRINCIPALS");
    env.remove("OTC_REDIS_SECRET_ARN");
    env.put("OTC_PROBE_PRINCIPAL", PROBE_ROLE);
    env.put("OTC_REDIS_URI", servers.redisUri());
    env.put("OTC_REDIS_CLUSTER", "false");
    env.put("OTC_MYSQL_URL", servers.jdbcUrl(schema));
    env.put("OTC_DB_SECRET_ARN", DB_SECRET);
    env.put("OTC_DB_SET_LOCK_WAIT", "true");
    env.put("OTC_KEY_PREFIX", prefix);
    env.put("OTC_TIMER_SHARDS", "4");
    // a deadline past the child JVM's start and the prepay (WeChat refuses a past time_expire)
    env.put("OTC_DEFAULT_TIMEOUT_SECONDS", Long.toString(ORDER_TIMEOUT_SECONDS));
    env.put("OTC_INVOCATION_MARGIN_MS", "2000");
    env.put("OTC_EVENTBRIDGE_ENDPOINT", awsEndpoint());
    // the merchant keys from Secrets Manager, as on Lambda (plain keys fail init there); the
    // simulator's address is not a secret: the environment's base URL override points at it
    synchronized (secrets) {
      secrets.put(
          WECHAT_SECRET,
          JSON.createObjectNode()
              .put("mchid", wechat.mchid())
              .put("appid", wechat.appid())
              .put("merchantSerialNumber", wechat.merchantSerialNumber())
              .put("privateKey", wechat.merchantPrivateKeyPem())
              .put("apiV3Key", wechat.apiV3Key())
              .put("wechatPayPublicKeyId", wechat.platformPublicKeyId())
              .put("wechatPayPublicKey", wechat.platformPublicKeyPem())
              .put("notifyUrl", "https://mall.example.com/wechatpay/notify")
              .toString());
    }
    env.put("OTC_WECHAT_SECRET_ARN", WECHAT_SECRET);
    env.put("OTC_WECHAT_BASE_URL", wechat.baseUrl().toString());
    // The SDK pointed at the stand-in (no instance metadata lookups). Not AWS_LAMBDA_FUNCTION_NAME:
    // with it init demands a TLS-verified JDBC URL, which the embedded MariaDB (no TLS) cannot
    // give; the Lambda-only checks have their own tests (JdbcTransportTest,
    // PlainSecretsOnLambdaTest)
    env.put("AWS_REGION", "ap-southeast-1");
    env.put("AWS_ACCESS_KEY_ID", "AKIDSHADEDJARTEST");
    env.put("AWS_SECRET_ACCESS_KEY", "shaded-jar-test");
    env.put("AWS_ENDPOINT_URL", awsEndpoint());
    env.put("AWS_EC2_METADATA_DISABLED", "true");
    return env;
  }

  // ---- Secrets Manager and EventBridge, as far as the functions call them ----

  private static void answerAsAws(HttpExchange exchange) throws IOException {
    String target = String.valueOf(exchange.getRequestHeaders().getFirst("X-Amz-Target"));
    JsonNode request;
    try (InputStream in = exchange.getRequestBody()) {
      request = JSON.readTree(in.readAllBytes());
    }
    ObjectNode answer = JSON.createObjectNode();
    int status = 200;
    switch (target) {
      case "secretsmanager.GetSecretValue" -> {
        String id = request.path("SecretId").asText();
        if (secrets.containsKey(id)) {
          answer.put("ARN", id).put("Name", id).put("VersionId", "v1");
          answer.put("SecretString", secrets.get(id));
        } else {
          status = 400;
          answer.put("__type", "ResourceNotFoundException").put("message", "no secret " + id);
        }
      }
      case "AWSEvents.PutEvents" -> {
        putEvents.add(request);
        answer.put("FailedEntryCount", 0);
        var entries = answer.putArray("Entries");
        request
            .path("Entries")
            .forEach(e -> entries.addObject().put("EventId", "ev-" + putEvents.size()));
      }
      default -> {
        status = 400;
        answer.put("__type", "UnknownOperationException").put("message", target);
      }
    }
    byte[] body = answer.toString().getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().add("Content-Type", "application/x-amz-json-1.1");
    exchange.getResponseHeaders().add("x-amzn-RequestId", "shaded-jar-test");
    exchange.sendResponseHeaders(status, body.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(body);
    }
  }

  private static String awsEndpoint() {
    return "http://127.0.0.1:" + aws.getAddress().getPort();
  }

  // ---- helpers ----

  /** A DB login with a password (the secret's shape requires one; the embedded root has none). */
  private static String dbUser(TestStack stack) {
    String user = "otcjar";
    for (String host : List.of("%", "localhost", "127.0.0.1")) {
      stack.update(
          "CREATE USER IF NOT EXISTS '" + user + "'@'" + host + "' IDENTIFIED BY 'jar-pass'");
      stack.update("GRANT ALL PRIVILEGES ON *.* TO '" + user + "'@'" + host + "'");
    }
    return user;
  }

  private static void awaitDeadline(TestStack stack) throws InterruptedException {
    long waitMs =
        stack.count(
            "SELECT GREATEST(0, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(3), expire_at)) DIV 1000"
                + " FROM orders WHERE order_id = ?",
            ORDER_ID);
    assertThat(waitMs).as("ms to the order's deadline").isLessThan(ORDER_TIMEOUT_SECONDS * 1000);
    Thread.sleep(waitMs + 500);
  }

  private static long count(TestStack stack, String sql) {
    return stack.count(sql);
  }

  private static void assertHookVerdicts(JsonNode samples, List<JsonNode> answers)
      throws IOException {
    for (int i = 0; i < samples.size(); i++) {
      assertThat(TemplateConsistencyTest.verdict(samples.get(i).path("expect"), answers.get(i)))
          .as("%s: %s", samples.get(i).path("name").asText(), answers.get(i))
          .isEmpty();
    }
  }

  /** The stats a scheduled handler answers (a JSON string), checked as the hook checks them. */
  private static JsonNode stats(List<JsonNode> answers) throws IOException {
    return JSON.readTree(answers.get(0).asText());
  }

  private static Path jar(String module) {
    Path jar = jarPath(module);
    assumeTrue(
        Files.exists(jar),
        jar + " is not built (./mvnw package -pl functions/" + module + " -am): skipped");
    return jar;
  }

  private static Path jarPath(String module) {
    return ROOT.resolve("functions")
        .resolve(module)
        .resolve("target")
        .resolve(module + "-lambda.jar");
  }

  private static Set<String> entries(Path jar) throws IOException {
    Set<String> names = new TreeSet<>();
    try (ZipFile zip = new ZipFile(jar.toFile())) {
      for (Enumeration<? extends ZipEntry> e = zip.entries(); e.hasMoreElements(); ) {
        names.add(e.nextElement().getName());
      }
    }
    return names;
  }

  private static Path runnerSource() {
    try {
      return Path.of(ShadedJarTest.class.getResource("/shaded-jar/HandlerRunner.java").toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }
}
