package io.ordertimeout.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;

/**
 * {@code ./ops smoke}'s steps against a {@link FakeApi} that answers as the order API and the
 * webhook do: which answers pass, which fail which step, and what is printed. The same command
 * against the real local stack is infra/local's SmokeTest.
 */
class SmokeHttpTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String REGION = "ap-east-1";

  @Test
  void everyStepPassesWhenTheApiPlacesCancelsAndClosesTheOrderAndTheWebhookRefuses()
      throws Exception {
    AtomicBoolean cancelled = new AtomicBoolean();
    try (FakeApi api = new FakeApi(r -> orderApi(r, cancelled, 401))) {
      ByteArrayOutputStream printed = new ByteArrayOutputStream();
      Smoke.Report report = smoke(api, printed).run();

      assertThat(report.ok()).isTrue();
      assertThat(report.orderId()).matches("smoke\\d{14}-[0-9a-f]{6}");
      assertThat(report.steps())
          .extracting(Smoke.Step::name, Smoke.Step::method, Smoke.Step::status)
          .containsExactly(
              tuple("place", "POST", 201),
              tuple("read", "GET", 200),
              tuple("cancel", "POST", 202),
              tuple("closed", "GET", 200),
              tuple("webhook", "POST", 401));
      String out = printed.toString(StandardCharsets.UTF_8);
      assertThat(out)
          .startsWith("smoke: " + api.url() + " (region ap-east-1), order " + report.orderId())
          .containsPattern(
              "\nOK    cancel  POST /orders/smoke\\d{14}-[0-9a-f]{6}/cancel +202 +\\d+ ms\n")
          .endsWith("smoke: OK (order " + report.orderId() + " CLOSED USER_CANCEL)\n");
      JsonNode placed = JSON.readTree(api.requests().get(0).body());
      assertThat(placed.path("userId").asText()).isEqualTo(Smoke.USER_ID);
      assertThat(placed.path("timeoutSeconds").asInt()).isEqualTo(Smoke.ORDER_TIMEOUT_SECONDS);
      assertThat(placed.at("/items/0/skuId").asText()).isEqualTo(Smoke.DEFAULT_SKU);
      assertThat(api.requests().get(0).header("authorization")).startsWith("AWS4-HMAC-SHA256 ");
      FakeApi.Request webhook = api.requests().get(api.requests().size() - 1);
      assertThat(webhook.pathAndQuery()).isEqualTo("/wechatpay/notify");
      assertThat(webhook.header("authorization")).isNull();
      assertThat(webhook.header("wechatpay-serial")).isEqualTo("SMOKE_NOT_A_KEY_ID");
    }
  }

  @Test
  void aGatewayRefusingTheWebhookAndAnOrderNeverClosedFailTheirSteps() throws Exception {
    try (FakeApi api = new FakeApi(r -> orderApi(r, new AtomicBoolean(false), 403))) {
      ByteArrayOutputStream printed = new ByteArrayOutputStream();
      Smoke.Report report =
          new Smoke(
                  new Smoke.Settings(api.url(), REGION, "sku-1", Duration.ofMillis(600)),
                  credentials(),
                  new PrintStream(printed, true, StandardCharsets.UTF_8))
              .run();

      assertThat(report.ok()).isFalse();
      assertThat(report.steps())
          .extracting(Smoke.Step::name, Smoke.Step::ok)
          .containsExactly(
              tuple("place", true),
              tuple("read", true),
              tuple("cancel", true),
              tuple("closed", false),
              tuple("webhook", false));
      assertThat(report.firstFailure().orElseThrow().problem())
          .matches("still UNPAID after 0 s \\(\\d+ reads\\): is the stream consumer running\\?");
      assertThat(printed.toString(StandardCharsets.UTF_8))
          .contains(
              "FAIL  webhook POST /wechatpay/notify                                 403",
              "(API Gateway's own refusal: the route must have no IAM authorizer)")
          .endsWith(
              "smoke: FAILED at closed: " + report.firstFailure().orElseThrow().problem() + "\n");
    }
  }

  @Test
  void aPlaceRefusedEndsTheOrderStepsButTheWebhookIsStillChecked() throws Exception {
    try (FakeApi api =
        new FakeApi(
            r ->
                r.pathAndQuery().equals("/orders")
                    ? new FakeApi.Answer(400, "{\"error\":{\"code\":\"UNKNOWN_SKU\"}}")
                    : orderApi(r, new AtomicBoolean(), 401))) {
      Smoke.Report report = smoke(api, new ByteArrayOutputStream()).run();

      assertThat(report.steps())
          .extracting(Smoke.Step::name, Smoke.Step::status, Smoke.Step::ok)
          .containsExactly(tuple("place", 400, false), tuple("webhook", 401, true));
      assertThat(report.steps().get(0).problem())
          .isEqualTo(
              "expected 201 with the order placed, got 400 {\"error\":{\"code\":\"UNKNOWN_SKU\"}}");
    }
  }

  @Test
  void withoutApiOrWithAnUnusableOneTheCommandCannotStartAndExitsTwo() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrintStream print = new PrintStream(out, true, StandardCharsets.UTF_8);

    int none = Smoke.command(Flags.parse(java.util.List.of()), print);
    int ftp =
        Smoke.command(Flags.parse(java.util.List.of("--api", "ftp://x", "--region", "r")), print);

    assertThat(none).isEqualTo(2);
    assertThat(ftp).isEqualTo(2);
    assertThat(out.toString(StandardCharsets.UTF_8))
        .isEqualTo(
            "smoke: cannot start: --api <the stack's ApiUrl output> is required\n"
                + "smoke: cannot start: --api must be an http(s) URL, was ftp://x\n");
  }

  // ---- the fake order API ----

  /** Places UNPAID, reads UNPAID until cancelled, then CLOSED USER_CANCEL; the webhook answers. */
  private static FakeApi.Answer orderApi(
      FakeApi.Request r, AtomicBoolean cancelled, int webhookStatus) {
    String path = r.pathAndQuery();
    if (path.equals("/wechatpay/notify")) {
      return webhookStatus == 401
          ? new FakeApi.Answer(401, "{\"code\":\"FAIL\",\"message\":\"signature\"}")
          : new FakeApi.Answer(webhookStatus, "{\"message\":\"Forbidden\"}");
    }
    if (path.equals("/orders") && r.method().equals("POST")) {
      return new FakeApi.Answer(201, order(field(r.body(), "orderId"), "UNPAID", null));
    }
    String id = path.substring("/orders/".length()).replace("/cancel", "");
    if (path.endsWith("/cancel")) {
      cancelled.set(true);
      return new FakeApi.Answer(202, "{\"orderId\":\"" + id + "\"}");
    }
    return new FakeApi.Answer(
        200, cancelled.get() ? order(id, "CLOSED", "USER_CANCEL") : order(id, "UNPAID", null));
  }

  private static String order(String id, String status, String reason) {
    return JSON.createObjectNode()
        .put("orderId", id)
        .put("status", status)
        .put("closeReason", reason)
        .toString();
  }

  private static String field(String body, String name) {
    try {
      return JSON.readTree(body).path(name).asText();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Smoke smoke(FakeApi api, ByteArrayOutputStream printed) {
    return new Smoke(
        new Smoke.Settings(api.url(), REGION, Smoke.DEFAULT_SKU, Duration.ofSeconds(5)),
        credentials(),
        new PrintStream(printed, true, StandardCharsets.UTF_8));
  }

  private static StaticCredentialsProvider credentials() {
    return StaticCredentialsProvider.create(
        AwsBasicCredentials.create("AKIDOPSSMOKETEST0000", "ops-smoke-test-secret-not-real-00000"));
  }
}
