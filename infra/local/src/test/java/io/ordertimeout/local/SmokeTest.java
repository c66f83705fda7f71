package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.ordertimeout.ops.Ops;
import io.ordertimeout.ops.Smoke;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.api.parallel.Resources;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;

/**
 * {@code ./ops smoke} against the local stack, behind a {@link RecordingProxy} that plays API
 * Gateway's edge: the local gateway verifies no SigV4, so the proxy's record of the wire is where
 * the signatures are checked (recomputed with the same fake keys).
 */
// one at a time with other classes that set system properties (the fast tier runs classes in
// parallel): it sets the AWS SDK's credentials or the template's path for a while
@ResourceLock(Resources.SYSTEM_PROPERTIES)
class SmokeTest {
  private static final String ACCESS_KEY = "AKIDSMOKETEST0000000";
  private static final String SECRET_KEY = "smoke-test-secret-key-not-a-real-one-00000";
  private static final String REGION = "ap-east-1";

  private static LocalStack stack;

  @BeforeAll
  static void startStack() {
    stack =
        LocalStack.start(
            new LocalStack.Options(Main.templatePath(), "127.0.0.1", 0, 1.0), System.getenv());
  }

  @AfterAll
  static void stopStack() {
    stack.close();
  }

  @Test
  void everyStepPassesSignedAndTheOrderEndsClosedUserCancelInTheDatabase() throws Exception {
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    Smoke.Report report;
    List<RecordingProxy.Recorded> wire;
    try (RecordingProxy edge = new RecordingProxy(stack.apiUrl(), Map.of())) {
      report = smoke(edge.url(), printed).run();
      wire = edge.requests();
      // every exchange ./ops smoke had with the stack is as docs/reference/openapi.yaml says
      assertThat(edge.exchanges()).hasSizeGreaterThanOrEqualTo(5);
      assertThat(ContractTest.conformance(edge.exchanges())).isEmpty();
    }

    assertThat(report.steps())
        .extracting(Smoke.Step::name, Smoke.Step::method, Smoke.Step::status, Smoke.Step::ok)
        .containsExactly(
            tuple("place", "POST", 201, true),
            tuple("read", "GET", 200, true),
            tuple("cancel", "POST", 202, true),
            tuple("closed", "GET", 200, true),
            tuple("webhook", "POST", 401, true));
    String output = printed.toString(StandardCharsets.UTF_8);
    assertThat(output)
        .containsPattern("OK    place   POST /orders +201 +\\d+ ms")
        .containsPattern("OK    webhook POST /wechatpay/notify +401 +\\d+ ms");
    assertThat(output.strip())
        .endsWith("smoke: OK (order " + report.orderId() + " CLOSED USER_CANCEL)");
    assertThat(orderRow(report.orderId())).isEqualTo("CLOSED USER_CANCEL smoke-test");

    List<RecordingProxy.Recorded> orderCalls =
        wire.stream().filter(r -> r.pathAndQuery().startsWith("/orders")).toList();
    assertThat(orderCalls).hasSizeGreaterThanOrEqualTo(4);
    SigV4Wire sigV4 = new SigV4Wire(ACCESS_KEY, SECRET_KEY, REGION);
    orderCalls.forEach(r -> sigV4.assertSigned(r, signedBase(wire)));
    RecordingProxy.Recorded webhook = wire.get(wire.size() - 1);
    assertThat(webhook.pathAndQuery()).isEqualTo("/wechatpay/notify");
    assertThat(webhook.header("authorization")).isNull();
    assertThat(webhook.header("x-amz-date")).isNull();
  }

  /**
   * API Gateway's own 403 on the webhook (an IAM authorizer on it): the command fails naming it.
   */
  @Test
  void aWebhookRefusedByTheGatewayWith403FailsTheCommandAtTheWebhookStep() throws Exception {
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    int exit;
    try (RecordingProxy edge =
        new RecordingProxy(
            stack.apiUrl(),
            Map.of(
                "POST /wechatpay/notify",
                new RecordingProxy.Canned(403, "{\"message\":\"Forbidden\"}")))) {
      exit =
          withFakeKeysInSystemProperties(
              () ->
                  Ops.run(
                      List.of("smoke", "--api", edge.url() + "/", "--region", REGION),
                      new PrintStream(printed, true, StandardCharsets.UTF_8),
                      new PrintStream(printed, true, StandardCharsets.UTF_8)));
    }

    String output = printed.toString(StandardCharsets.UTF_8);
    assertThat(exit).isEqualTo(1);
    assertThat(output).containsPattern("OK    closed  GET  /orders/smoke\\d{14}-[0-9a-f]{6} +200");
    assertThat(output)
        .containsPattern("FAIL  webhook POST /wechatpay/notify +403 +\\d+ ms  expected 401");
    assertThat(output.strip())
        .endsWith(
            "smoke: FAILED at webhook: expected 401 {\"code\":...,\"message\":...} from"
                + " payment-notify, got 403 {\"message\":\"Forbidden\"} (API Gateway's own"
                + " refusal: the route must have no IAM authorizer)");
  }

  /** The SKU a smoke orders by default is the first one the local stack seeds. */
  @Test
  void theDefaultSkuIsTheFirstOfTheDemoCatalogue() {
    assertThat(Smoke.DEFAULT_SKU).isEqualTo(DemoCatalog.sku(0));
  }

  // ---- helpers ----

  private static Smoke smoke(URI api, ByteArrayOutputStream printed) {
    return new Smoke(
        new Smoke.Settings(api, REGION, Smoke.DEFAULT_SKU, Smoke.DEFAULT_CLOSE_WAIT),
        StaticCredentialsProvider.create(AwsBasicCredentials.create(ACCESS_KEY, SECRET_KEY)),
        new PrintStream(printed, true, StandardCharsets.UTF_8));
  }

  /** The proxy's address as the smoke signed it: the Host header of the first request. */
  private static URI signedBase(List<RecordingProxy.Recorded> wire) {
    return URI.create("http://" + wire.get(0).header("host"));
  }

  private static String orderRow(String orderId) throws Exception {
    try (Connection c = stack.app().dataSource().getConnection();
        PreparedStatement q =
            c.prepareStatement(
                "SELECT status, close_reason, user_id FROM orders WHERE order_id = ?")) {
      q.setString(1, orderId);
      try (ResultSet rs = q.executeQuery()) {
        assertThat(rs.next()).as("order " + orderId + " in MariaDB").isTrue();
        return rs.getString("status")
            + " "
            + rs.getString("close_reason")
            + " "
            + rs.getString("user_id");
      }
    }
  }

  @FunctionalInterface
  private interface Body {
    int run() throws Exception;
  }

  /**
   * The command's own path to credentials: the SDK's default chain, which reads aws.accessKeyId and
   * aws.secretAccessKey among its sources.
   */
  private static int withFakeKeysInSystemProperties(Body body) throws Exception {
    System.setProperty("aws.accessKeyId", ACCESS_KEY);
    System.setProperty("aws.secretAccessKey", SECRET_KEY);
    try {
      return body.run();
    } finally {
      System.clearProperty("aws.accessKeyId");
      System.clearProperty("aws.secretAccessKey");
    }
  }
}
