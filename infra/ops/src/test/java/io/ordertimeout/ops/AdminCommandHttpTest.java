package io.ordertimeout.ops;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.api.parallel.Resources;

/**
 * {@code ./ops admin} over HTTP against a {@link FakeApi} that answers as the admin API does: the
 * requests each operation sends, the local stack found through its endpoints file, SigV4 with
 * {@code --api}, the printed forms and the exit codes. The same command against the real local
 * stack is infra/local's AdminCommandTest.
 */
// one at a time with other classes that set system properties (the fast tier runs classes in
// parallel): it sets the AWS SDK's credentials or the template's path for a while
@ResourceLock(Resources.SYSTEM_PROPERTIES)
class AdminCommandHttpTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Instant NOW = Instant.parse("2026-12-04T02:00:00Z");
  private static final String ACCESS_KEY = "AKIDOPSADMINTEST0000";

  @TempDir Path dir;

  record Run(int exit, String out, String err) {}

  @Test
  void storyPrintsTheTimelineByDefaultAndTheMachineFormWithJson() throws Exception {
    String story = Files.readString(Path.of("src/test/resources/stories/shipped.json"));
    try (FakeApi api = new FakeApi(r -> new FakeApi.Answer(200, story))) {
      Path endpoints = running(api.url());

      Run timeline = admin(endpoints, "story", "ops-demo-1", "--wechat");
      Run json = admin(endpoints, "story", "ops-demo-1", "--json", "--tenant", "shop-a");

      assertThat(timeline)
          .isEqualTo(new Run(0, StoryTimeline.render(StoryTimelineTest.story("shipped"), NOW), ""));
      assertThat(timeline.out()).contains("\n2026-12-04 01:57:23Z  shipped  SF SF123, receipt due");
      assertThat(json.exit()).isZero();
      JsonNode printed = JSON.readTree(json.out());
      assertThat(printed).isEqualTo(StoryTimelineTest.story("shipped"));
      assertThat(printed.at("/events/0/payload/amountFen").asLong()).isEqualTo(1000);
      assertThat(api.requests())
          .extracting(FakeApi.Request::method, FakeApi.Request::pathAndQuery)
          .containsExactly(
              org.assertj.core.api.Assertions.tuple("GET", "/admin/orders/ops-demo-1?wechat=true"),
              org.assertj.core.api.Assertions.tuple(
                  "GET", "/admin/orders/ops-demo-1?tenantId=shop-a"));
      assertThat(api.requests().get(0).header("authorization")).isNull();
    }
  }

  @Test
  void everyOperationSendsItsRouteAndBody() {
    assertThat(call("dead-letters"))
        .isEqualTo(new AdminCommand.Call("GET", "/admin/dead-letters", null));
    assertThat(
            call(
                "dead-letters",
                "--status",
                "all",
                "--tenant",
                "shop-a",
                "--order",
                "o|1*",
                "--type",
                "close_due",
                "--limit",
                "5"))
        .isEqualTo(
            new AdminCommand.Call(
                "GET",
                "/admin/dead-letters?status=all&tenantId=shop-a&orderId=o%7C1*&eventType=close_due"
                    + "&limit=5",
                null));
    assertThat(call("dead-letter", "41"))
        .isEqualTo(new AdminCommand.Call("GET", "/admin/dead-letters/41", null));
    assertThat(call("redrive", "41"))
        .isEqualTo(new AdminCommand.Call("POST", "/admin/dead-letters/41/redrive", "{}"));
    assertThat(call("redrive", "41", "42"))
        .isEqualTo(
            new AdminCommand.Call("POST", "/admin/dead-letters/redrive", "{\"ids\":[41,42]}"));
    assertThat(call("redrive", "--filter", "--order", "o-1", "--type", "close_due", "--limit", "9"))
        .isEqualTo(
            new AdminCommand.Call(
                "POST",
                "/admin/dead-letters/redrive",
                "{\"filter\":{\"orderId\":\"o-1\",\"eventType\":\"close_due\",\"limit\":9}}"));
    assertThat(call("redrive", "--all"))
        .isEqualTo(new AdminCommand.Call("POST", "/admin/dead-letters/redrive", "{\"all\":true}"));
    assertThat(call("force-close", "o 1", "--reason", "dup", "--disown-trade", "--tenant", "t"))
        .isEqualTo(
            new AdminCommand.Call(
                "POST",
                "/admin/orders/o%201/force-close?tenantId=t",
                "{\"reason\":\"dup\",\"disownTrade\":true}"));
    assertThat(call("pauses")).isEqualTo(new AdminCommand.Call("GET", "/admin/pauses", null));
    assertThat(call("pause", "all", "--reason", "INC-1"))
        .isEqualTo(
            new AdminCommand.Call(
                "POST", "/admin/pause", "{\"job\":\"all\",\"reason\":\"INC-1\"}"));
    assertThat(call("resume", "sweep"))
        .isEqualTo(new AdminCommand.Call("POST", "/admin/resume", "{\"job\":\"sweep\"}"));
    assertThat(call("compensate"))
        .isEqualTo(new AdminCommand.Call("POST", "/admin/compensation", "{}"));
    assertThat(call("reconcile", "--date", "2026-12-03", "--tenant", "shop-a"))
        .isEqualTo(
            new AdminCommand.Call(
                "POST",
                "/admin/reconciliation",
                "{\"date\":\"2026-12-03\",\"tenantId\":\"shop-a\"}"));
    assertThat(call("reconcile", "--date", "2026-12-03", "--show"))
        .isEqualTo(new AdminCommand.Call("GET", "/admin/reconciliation?date=2026-12-03", null));
  }

  @Test
  void withApiEveryRequestIsSignedForExecuteApiInTheGivenRegion() throws Exception {
    try (FakeApi api = new FakeApi(r -> new FakeApi.Answer(200, "{\"consumer\":\"running\"}"))) {
      Run run;
      System.setProperty("aws.accessKeyId", ACCESS_KEY);
      System.setProperty("aws.secretAccessKey", "ops-admin-test-secret-not-a-real-one-0000");
      try {
        run =
            admin(
                dir.resolve("none.json"),
                "pauses",
                "--api",
                api.url() + "/",
                "--region",
                "ap-east-1");
      } finally {
        System.clearProperty("aws.accessKeyId");
        System.clearProperty("aws.secretAccessKey");
      }

      assertThat(run)
          .isEqualTo(
              new Run(
                  0,
                  "JOB       STATE    SINCE  BY  REASON\nconsumer  RUNNING  -      -   -\n",
                  ""));
      FakeApi.Request sent = api.requests().get(0);
      assertThat(sent.pathAndQuery()).isEqualTo("/admin/pauses");
      assertThat(sent.header("authorization"))
          .startsWith("AWS4-HMAC-SHA256 Credential=" + ACCESS_KEY + "/")
          .contains("/ap-east-1/execute-api/aws4_request, SignedHeaders=")
          .containsPattern("Signature=[0-9a-f]{64}$");
      assertThat(sent.header("x-amz-date")).matches("\\d{8}T\\d{6}Z");
    }
  }

  @Test
  void aRefusalExitsOneWithTheApisCodeAndMessage() throws Exception {
    String refusal =
        "{\"error\":{\"code\":\"NOT_FOUND\",\"message\":\"tenant default has no order x-1\"}}";
    try (FakeApi api = new FakeApi(r -> new FakeApi.Answer(404, refusal));
        FakeApi broken = new FakeApi(r -> new FakeApi.Answer(502, "Bad Gateway"))) {
      Run notFound = admin(running(api.url()), "story", "x-1");
      Run gateway = admin(running(broken.url()), "pauses");

      assertThat(notFound)
          .isEqualTo(
              new Run(
                  1,
                  "",
                  "./ops admin: GET /admin/orders/x-1: 404 NOT_FOUND: tenant default has no order"
                      + " x-1\n"));
      assertThat(gateway)
          .isEqualTo(new Run(1, "", "./ops admin: GET /admin/pauses: 502 Bad Gateway\n"));
    }
  }

  @Test
  void usageErrorsExitTwoBeforeAnythingIsSent() throws Exception {
    try (FakeApi api = new FakeApi(r -> new FakeApi.Answer(200, "{}"))) {
      Path endpoints = running(api.url());

      assertThat(admin(endpoints, "explode").err())
          .startsWith("./ops admin: unknown operation 'explode'\nusage: ./ops admin <operation>");
      assertThat(admin(endpoints, "force-close", "o-1").err())
          .startsWith(
              "./ops admin: force-close needs --reason; usage: ./ops admin force-close <orderId>");
      assertThat(admin(endpoints, "story", "o-1", "--reason", "x").err())
          .startsWith("./ops admin: --reason does not apply to story\n");
      assertThat(admin(endpoints, "story").err())
          .startsWith("./ops admin: usage: ./ops admin story <orderId> [--tenant T] [--wechat]\n");
      assertThat(admin(endpoints, "story", "o-1", "--tenant").err())
          .startsWith("./ops admin: --tenant needs a value\n");
      assertThat(admin(endpoints, "story", "o-1", "--bogus").err())
          .startsWith("./ops admin: unknown flag --bogus\n");
      assertThat(admin(endpoints, "redrive", "1", "x").err())
          .startsWith("./ops admin: dead letter ids are numbers, got 'x'\n");
      assertThat(admin(endpoints, "redrive", "1", "--order", "o").err())
          .startsWith("./ops admin: redrive <id>... takes no --order, --type or --limit\n");
      assertThat(admin(endpoints, "redrive", "--filter", "--limit", "many").err())
          .startsWith("./ops admin: --limit must be a whole number, was 'many'\n");
      assertThat(admin(endpoints, "redrive", "--all", "--filter").err())
          .startsWith("./ops admin: usage: ./ops admin redrive <id>...");
      assertThat(admin(endpoints, "pauses", "--region", "ap-east-1").err())
          .startsWith("./ops admin: --region and --profile apply with --api only\n");
      assertThat(
              admin(
                      endpoints,
                      "pauses",
                      "--api",
                      "https://a.execute-api.cn-north-1.amazonaws.com.cn",
                      "--region",
                      "us-east-1")
                  .err())
          .startsWith(
              "./ops admin: --region us-east-1 but a.execute-api.cn-north-1.amazonaws.com.cn is in cn-north-1\n");
      assertThat(
              List.of(
                  admin(endpoints, "explode").exit(),
                  admin(endpoints, "force-close", "o-1").exit(),
                  admin(endpoints).exit()))
          .containsOnly(2);
      assertThat(api.requests()).isEmpty();

      Run help = admin(endpoints, "help");
      assertThat(help.exit()).isZero();
      assertThat(help.out())
          .startsWith(
              "usage: ./ops admin <operation> [--api <ApiUrl> [--region R] [--profile P]] [--json]\n")
          .contains("\n  story <orderId> [--tenant T] [--wechat]  ");
      assertThat(AdminCommand.operations())
          .containsExactlyInAnyOrder(
              "dead-letters",
              "dead-letter",
              "redrive",
              "story",
              "force-close",
              "pauses",
              "pause",
              "resume",
              "compensate",
              "reconcile");
      assertThat(admin(endpoints, "reconcile").exit()).as("reconcile without --date").isEqualTo(2);
    }
  }

  @Test
  void withoutApiAndWithoutARunningLocalStackItSaysHowToStartOne() throws Exception {
    Path missing = dir.resolve("local-up.json");
    Path dead = dir.resolve("dead.json");
    Process gone = new ProcessBuilder("true").start();
    gone.waitFor();
    new LocalEndpoints(
            URI.create("http://127.0.0.1:1"), URI.create("http://127.0.0.1:2"), gone.pid(), NOW)
        .write(dead);

    Run none = admin(missing, "pauses");
    Run stale = admin(dead, "pauses");

    assertThat(none)
        .isEqualTo(
            new Run(
                1,
                "",
                "./ops admin: no running ./local up found ("
                    + missing
                    + " does not exist); start ./local up, or pass --api <ApiUrl>\n"));
    assertThat(stale.exit()).isEqualTo(1);
    assertThat(stale.err())
        .isEqualTo(
            "./ops admin: the ./local up that wrote "
                + dead
                + " (pid "
                + gone.pid()
                + ") is no longer running; start ./local up again, or pass --api\n");
  }

  @Test
  void anUnreachableApiExitsOneNamingTheAddress() throws Exception {
    URI closed;
    try (FakeApi api = new FakeApi(r -> new FakeApi.Answer(200, "{}"))) {
      closed = api.url();
    }
    Run run = admin(running(closed), "pauses");

    assertThat(run.exit()).isEqualTo(1);
    assertThat(run.err()).startsWith("./ops admin: cannot reach the admin API at " + closed + " (");
  }

  // ---- helpers ----

  /** An endpoints file as a running ./local up writes it: this JVM is its writer, so alive. */
  private Path running(URI api) {
    Path file = dir.resolve("local-up-" + api.getPort() + ".json");
    new LocalEndpoints(api, URI.create("http://127.0.0.1:1"), ProcessHandle.current().pid(), NOW)
        .write(file);
    return file;
  }

  private static AdminCommand.Call call(String... words) {
    return AdminCommand.call(AdminCommand.Args.parse(List.of(words)));
  }

  private static Run admin(Path endpoints, String... words) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int exit =
        new AdminCommand(endpoints, Clock.fixed(NOW, ZoneOffset.UTC))
            .run(
                List.of(words),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Run(
        exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }
}
