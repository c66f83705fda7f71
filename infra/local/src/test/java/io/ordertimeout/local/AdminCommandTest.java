package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ordertimeout.ops.AdminCommand;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.api.parallel.Resources;

/**
 * {@code ./ops admin} end to end: the local stack as {@code ./local up} starts it (the admin routes
 * read from template.yaml), the command run through the same code as from the shell, rows read back
 * from MariaDB; and {@code --api} through a {@link RecordingProxy} that checks SigV4.
 */
// one at a time with other classes that set system properties (the fast tier runs classes in
// parallel): it sets the AWS SDK's credentials or the template's path for a while
@ResourceLock(Resources.SYSTEM_PROPERTIES)
class AdminCommandTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String ACCESS_KEY = "AKIDADMINTEST0000000";
  private static final String SECRET_KEY = "admin-test-secret-key-not-a-real-one-00000";

  @TempDir static Path dir;
  static LocalStack stack;
  static Path endpoints;

  private final HttpClient http = HttpClient.newHttpClient();

  record Run(int exit, String out, String err) {
    JsonNode json() throws Exception {
      return JSON.readTree(out);
    }
  }

  @BeforeAll
  static void start() {
    stack =
        LocalStack.start(
            new LocalStack.Options(Main.templatePath(), "127.0.0.1", 0, 1.0), System.getenv());
    endpoints = dir.resolve("local-up.json");
    stack.endpoints().write(endpoints);
  }

  @AfterAll
  static void stop() {
    stack.close();
  }

  @Test
  void storyThenForceCloseThenStoryAgainShowTheCloseInMariaDb() throws Exception {
    String orderId = place();

    Run before = admin("story", orderId, "--wechat", "--json");
    Run closed =
        admin("force-close", orderId, "--reason", "duplicate order, ticket CS-1", "--json");
    Run after = admin("story", orderId, "--json");

    assertThat(before.exit()).as(before.err()).isZero();
    assertThat(before.json().at("/order/status").asText()).isEqualTo("UNPAID");
    assertThat(before.json().at("/timer/state").asText()).isEqualTo("SCHEDULED");
    assertThat(before.json().at("/wechat/tradeState").asText()).isEqualTo("NOT_FOUND");
    assertThat(closed.exit()).as(closed.err()).isZero();
    assertThat(closed.json().path("outcome").asText()).isEqualTo("CLOSED");
    assertThat(row(orderId)).isEqualTo("CLOSED OPERATOR");
    assertThat(after.json().at("/timer/state").asText()).isEqualTo("ABSENT");
    assertThat(after.json().at("/adminActions/0/reason").asText())
        .isEqualTo("duplicate order, ticket CS-1");
    assertThat(after.json().at("/adminActions/0/operator").asText())
        .endsWith(":user/local-mall-backend");
  }

  @Test
  void refusalsExitOneWithTheApisCodeAndUsageErrorsExitTwo() throws Exception {
    String orderId = place();

    Run unknown = admin("story", "nosuch-00001");
    Run noReason = admin("force-close", orderId);
    Run badJob = admin("pause", "everything", "--reason", "x");
    Run badFlag = admin("story", orderId, "--reason", "x");
    Run unknownOp = admin("explode");
    // the default tenant's order is not shop-a's, and a malformed tenant is refused by the API
    Run otherTenant =
        admin("force-close", orderId, "--tenant", "shop-a", "--reason", "wrong tenant");
    Run badTenant = admin("story", orderId, "--tenant", "Shop A");

    assertThat(unknown.exit()).isEqualTo(1);
    assertThat(unknown.err())
        .contains(
            "GET /admin/orders/nosuch-00001: 404 NOT_FOUND: tenant default has no order nosuch-00001");
    assertThat(noReason.exit()).isEqualTo(2);
    assertThat(noReason.err()).contains("force-close needs --reason");
    assertThat(badJob.exit()).isEqualTo(1);
    assertThat(badJob.err()).contains("400 INVALID_JOB");
    assertThat(badFlag.exit()).isEqualTo(2);
    assertThat(badFlag.err()).contains("--reason does not apply to story");
    assertThat(unknownOp.exit()).isEqualTo(2);
    assertThat(otherTenant.exit()).isEqualTo(1);
    assertThat(otherTenant.err())
        .contains(
            "/admin/orders/"
                + orderId
                + "/force-close?tenantId=shop-a: 404 NOT_FOUND: tenant shop-a has no order "
                + orderId);
    assertThat(badTenant.exit()).isEqualTo(1);
    assertThat(badTenant.err()).contains("400 INVALID_TENANT_ID");
    assertThat(row(orderId)).isEqualTo("UNPAID null");
  }

  @Test
  void pauseShowsInPausesAndResumeClearsItAndDeadLettersAndCompensateAnswer() throws Exception {
    Run paused = admin("pause", "consumer", "--reason", "INC-7", "--json");
    Run shown = admin("pauses", "--json");
    Run resumed = admin("resume", "consumer", "--json");
    Run letters = admin("dead-letters", "--status", "all", "--json");
    Run redriven = admin("redrive", "--all", "--json");
    Run report = admin("compensate", "--json");

    assertThat(paused.exit()).as(paused.err()).isZero();
    assertThat(shown.json().at("/consumer/reason").asText()).isEqualTo("INC-7");
    assertThat(shown.json().at("/sweep").asText()).isEqualTo("running");
    assertThat(resumed.json().at("/consumer").asText()).isEqualTo("running");
    assertThat(letters.json().isArray()).isTrue();
    assertThat(redriven.exit()).as(redriven.err()).isZero();
    assertThat(report.exit()).as(report.err()).isZero();
    assertThat(report.json().path("counts").isObject()).isTrue();
  }

  @Test
  void withApiEveryRequestIsSignedWithSigV4() throws Exception {
    String orderId = place();
    List<RecordingProxy.Recorded> wire;
    Run story;
    try (RecordingProxy edge = new RecordingProxy(stack.apiUrl(), Map.of())) {
      System.setProperty("aws.accessKeyId", ACCESS_KEY);
      System.setProperty("aws.secretAccessKey", SECRET_KEY);
      try {
        story =
            admin("story", orderId, "--api", edge.url() + "/", "--region", "ap-east-1", "--json");
      } finally {
        System.clearProperty("aws.accessKeyId");
        System.clearProperty("aws.secretAccessKey");
      }
      wire = edge.requests();
      // the admin client's exchange is as docs/reference/openapi.yaml says
      assertThat(edge.exchanges()).hasSize(1);
      assertThat(ContractTest.conformance(edge.exchanges())).isEmpty();
    }

    assertThat(story.exit()).as(story.err()).isZero();
    assertThat(story.json().at("/order/orderId").asText()).isEqualTo(orderId);
    assertThat(wire)
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.pathAndQuery()).isEqualTo("/admin/orders/" + orderId);
              assertThat(r.header("authorization"))
                  .startsWith("AWS4-HMAC-SHA256 Credential=" + ACCESS_KEY + "/")
                  .contains("/ap-east-1/execute-api/aws4_request");
              assertThat(r.header("x-amz-date")).matches("\\d{8}T\\d{6}Z");
            });
  }

  /**
   * Without --json the story is the timeline a person reads, from this stack's answer; with it, the
   * same answer for scripts: camelCase keys and the outbox payloads as nested objects.
   */
  @Test
  void storyPrintsTheTimelineByDefaultAndCamelCaseJsonWithNestedPayloadsWithJson()
      throws Exception {
    String orderId = place();

    Run timeline = admin("story", orderId);
    Run json = admin("story", orderId, "--json");
    Run pauses = admin("pauses");

    assertThat(timeline.exit()).as(timeline.err()).isZero();
    assertThat(timeline.out())
        .startsWith("order " + orderId + "  tenant default  UNPAID  1000 fen  user ")
        .containsPattern("\\n\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\dZ  placed  pay by ")
        .contains("(10m 0s to pay)\n")
        .containsPattern(
            "\\ndeadline  payment due [-0-9 :]+Z, in 9m \\d+s \\(the close path closes it\\)\\n")
        .containsPattern(
            "\\ntimer     SCHEDULED, due [-0-9 :]+Z \\(in 9m \\d+s\\); shard \\d+; sweeper lease ")
        .contains("\nitems     " + DemoCatalog.sku(3) + " x1\n")
        .contains("\nstock     RESERVE " + DemoCatalog.sku(3) + " x1\n");
    assertThat(json.exit()).as(json.err()).isZero();
    assertThat(json.json().at("/order/orderId").asText()).isEqualTo(orderId);
    assertThat(json.json().at("/order/expireAt").isTextual()).isTrue();
    assertThat(json.json().has("order_id")).isFalse();
    assertThat(json.json().at("/events/0/eventType").asText()).isEqualTo("created");
    assertThat(json.json().at("/events/0/payload/amountFen").asLong()).isEqualTo(1000);
    assertThat(json.out()).doesNotContain("_id\"", "\\\"");
    assertThat(pauses.out())
        .startsWith("JOB       STATE    SINCE  BY  REASON\n")
        .contains("consumer  RUNNING  -      -   -\n");
  }

  // ---- helpers ----

  private static Run admin(String... words) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int exit =
        new AdminCommand(endpoints)
            .run(
                new ArrayList<>(List.of(words)),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Run(
        exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /** Places a one-line order over the API, due in 10 minutes; answers its id. */
  private String place() throws Exception {
    byte[] random = new byte[4];
    ThreadLocalRandom.current().nextBytes(random);
    String orderId = "adm-" + HexFormat.of().formatHex(random);
    String order =
        "{\"orderId\":\""
            + orderId
            + "\",\"userId\":\""
            + DemoCatalog.user(3)
            + "\",\"items\":[{\"skuId\":\""
            + DemoCatalog.sku(3)
            + "\",\"quantity\":1}],\"amountFen\":1000,\"timeoutSeconds\":600}";
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(stack.apiUrl() + "/orders"))
            .header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(order))
            .build();
    HttpResponse<String> placed = http.send(request, HttpResponse.BodyHandlers.ofString());
    assertThat(placed.statusCode()).as(placed.body()).isEqualTo(201);
    return orderId;
  }

  private static String row(String orderId) throws Exception {
    try (Connection c = stack.app().dataSource().getConnection();
        PreparedStatement s =
            c.prepareStatement("SELECT status, close_reason FROM orders WHERE order_id = ?")) {
      s.setString(1, orderId);
      try (ResultSet rs = s.executeQuery()) {
        return rs.next() ? rs.getString(1) + " " + rs.getString(2) : "(no row)";
      }
    }
  }
}
