package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.abort;

import io.ordertimeout.embedded.InvariantChecker;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The TypeScript client (clients/typescript) against the whole local stack: {@code npm test} runs
 * its tests with the stack's URL, fake keys and the tenant in the environment, behind a {@link
 * RecordingProxy} playing API Gateway's edge, where every request's SigV4 signature is recomputed
 * and every exchange checked against docs/reference/openapi.yaml; then the database shows what the
 * client's orders did. Skipped, saying why, when node or npm is missing or {@code npm ci} cannot
 * reach a registry.
 */
@Tag("integration")
class TypeScriptClientTest {
  private static final Path ROOT = Main.templatePath().toAbsolutePath().getParent();
  private static final Path CLIENT = ROOT.resolve("clients/typescript");
  private static final String ACCESS_KEY = "AKIDTYPESCRIPT000000";
  private static final String SECRET_KEY = "typescript-client-test-key-not-a-real-one";
  private static final String REGION = "ap-east-1";

  /** npm's words for a registry it could not reach. */
  private static final Pattern OFFLINE =
      Pattern.compile(
          "ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|network|proxy",
          Pattern.CASE_INSENSITIVE);

  @Test
  void theClientsTestsPassSignedAndAsDocumentedAndItsOrdersAreInTheDatabase() throws Exception {
    requireNodeAndModules();
    String run = "ts" + Long.toString(System.currentTimeMillis(), 36);
    List<RecordingProxy.Answered> exchanges;
    Run test;
    try (LocalStack stack =
            LocalStack.start(
                new LocalStack.Options(Main.templatePath(), "127.0.0.1", 0, 1.0), System.getenv());
        RecordingProxy edge = new RecordingProxy(stack.apiUrl(), Map.of())) {
      test =
          npm(
              180,
              Map.of(
                  "ORDER_TIMEOUT_API_URL", edge.url().toString(),
                  "ORDER_TIMEOUT_API_REGION", REGION,
                  "ORDER_TIMEOUT_TENANT_ID", "default",
                  "ORDER_TIMEOUT_TEST_SKU", DemoCatalog.sku(1),
                  "ORDER_TIMEOUT_TEST_RUN", run,
                  "AWS_ACCESS_KEY_ID", ACCESS_KEY,
                  "AWS_SECRET_ACCESS_KEY", SECRET_KEY),
              "test");
      assertThat(test.exit()).as("npm test in clients/typescript:\n" + test.output()).isZero();
      assertThat(test.output())
          .as(test.output())
          .containsPattern("(?m)^# pass [1-9][0-9]*$")
          .containsPattern("(?m)^# fail 0$")
          .containsPattern("(?m)^# skipped 0$")
          // node counts a skipped suite in no total: the stack's suite must have run
          .containsPattern("(?m)^ok \\d+ - against the stack at ORDER_TIMEOUT_API_URL$")
          .doesNotContain("# SKIP");
      exchanges = edge.exchanges();

      // the database: one RESERVE per order, however often it was placed (the retried ones too)
      assertThat(movements(stack, run + "same"))
          .containsExactly("RESERVE " + DemoCatalog.sku(1) + " 2");
      assertThat(movements(stack, run + "lost"))
          .containsExactly("RESERVE " + DemoCatalog.sku(1) + " 2");
      assertThat(movements(stack, run + "cncl"))
          .containsExactly(
              "RESERVE " + DemoCatalog.sku(1) + " 2", "RELEASE " + DemoCatalog.sku(1) + " 2");
      assertThat(movements(stack, run + "qty")).isEmpty();
      assertThat(new InvariantChecker(stack.app().dataSource()).violations()).isEmpty();
    }

    // every request was signed for execute-api with the test's keys, the tenant header among what
    // it signed; every exchange is as the document says
    SigV4Wire sigV4 = new SigV4Wire(ACCESS_KEY, SECRET_KEY, REGION);
    assertThat(exchanges).hasSizeGreaterThanOrEqualTo(15);
    for (RecordingProxy.Answered a : exchanges) {
      assertThat(sigV4.assertSigned(a.request())).contains("x-tenant-id");
      assertThat(a.request().header("x-tenant-id")).isEqualTo("default");
    }
    assertThat(
            exchanges.stream()
                .filter(
                    a ->
                        a.request().method().equals("POST")
                            && a.request().pathAndQuery().equals("/orders")
                            && new String(a.request().body(), StandardCharsets.UTF_8)
                                .contains(run + "lost"))
                .map(RecordingProxy.Answered::status))
        .as("the lost answer's order: placed, then the retry's 200")
        .containsExactly(201, 200);
    assertThat(ContractTest.conformance(exchanges)).isEmpty();
  }

  // ---- helpers ----

  private record Run(int exit, String output) {}

  /** Skips unless node and npm run; installs clients/typescript's packages unless installed. */
  private static void requireNodeAndModules() throws Exception {
    for (String tool : List.of("node", "npm")) {
      Run version;
      try {
        version = run(30, Map.of(), tool, "--version");
      } catch (IOException notFound) {
        abort(tool + " is not on the PATH: the TypeScript client's tests need Node 20+ and npm");
        return;
      }
      if (version.exit() != 0) {
        abort(tool + " --version failed: " + version.output());
      }
    }
    Path installed = CLIENT.resolve("node_modules/.package-lock.json");
    if (Files.exists(installed)
        && !Files.getLastModifiedTime(installed)
            .toInstant()
            .isBefore(Files.getLastModifiedTime(CLIENT.resolve("package-lock.json")).toInstant())) {
      return; // installed from this package-lock.json (npm ci or npm install writes it after)
    }
    Run ci = npm(300, Map.of(), "ci", "--no-audit", "--no-fund");
    if (ci.exit() != 0 && OFFLINE.matcher(ci.output()).find()) {
      abort(
          "npm ci could not reach a registry, the TypeScript client's tests skipped:\n"
              + ci.output());
    }
    assertThat(ci.exit()).as("npm ci in clients/typescript:\n" + ci.output()).isZero();
  }

  private static Run npm(int seconds, Map<String, String> env, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of("npm"));
    command.addAll(List.of(args));
    return run(seconds, env, command.toArray(String[]::new));
  }

  /**
   * A command in clients/typescript with the output of both streams; the caller's AWS settings left
   * out, so the credentials are the ones given.
   */
  private static Run run(int seconds, Map<String, String> env, String... command) throws Exception {
    ProcessBuilder builder = new ProcessBuilder(command).directory(CLIENT.toFile());
    builder.redirectErrorStream(true);
    builder.environment().keySet().removeIf(k -> k.startsWith("AWS_"));
    builder.environment().put("AWS_EC2_METADATA_DISABLED", "true");
    builder.environment().putAll(env);
    Process p = builder.start();
    CompletableFuture<String> output =
        CompletableFuture.supplyAsync(() -> read(p.getInputStream()));
    if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
      return new Run(
          -1,
          "timed out after "
              + seconds
              + " s: "
              + String.join(" ", command)
              + "\n"
              + output.get(10, TimeUnit.SECONDS));
    }
    return new Run(p.exitValue(), output.get(10, TimeUnit.SECONDS));
  }

  private static String read(InputStream in) {
    try (in) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The order's stock ledger, oldest first: "KIND sku quantity". */
  private static List<String> movements(LocalStack stack, String orderId) throws Exception {
    List<String> out = new ArrayList<>();
    try (Connection c = stack.app().dataSource().getConnection();
        PreparedStatement q =
            c.prepareStatement(
                "SELECT kind, sku_id, quantity FROM stock_movements WHERE tenant_id = 'default'"
                    + " AND order_id = ?"
                    + " ORDER BY movement_id")) {
      q.setString(1, orderId);
      try (ResultSet rs = q.executeQuery()) {
        while (rs.next()) {
          out.add(rs.getString(1) + " " + rs.getString(2) + " " + rs.getInt(3));
        }
      }
    }
    return out;
  }
}
