package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ordertimeout.ops.LocalEndpoints;
import io.ordertimeout.testing.Await;
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
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./local wechat} end to end: the local stack started as {@code ./local up} starts it, its
 * endpoints recorded as {@code ./local up} records them, orders placed and prepaid over the HTTP
 * API, the command run through the same code path as from the shell, and the order row read back
 * from MariaDB.
 */
class WeChatCommandTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir static Path dir;
  static LocalStack stack;
  static Path endpoints;

  private final HttpClient http = HttpClient.newHttpClient();

  /** What one run of the command printed and returned. */
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
  void payTurnsThePrepaidOrderPaidInMariaDb() throws Exception {
    String orderId = placeAndPrepay(600);
    String before = status(orderId);

    Run pay = wechat("pay", orderId); // no --sim: the simulator ./local up recorded
    await(() -> "PAID".equals(status(orderId)), orderId + " PAID in MariaDB");
    // The webhook commits before it answers, and the simulator records the delivery only once the
    // answer is back: wait for that record rather than read it in the same instant.
    await(
        () -> shownDeliveries(orderId) > 0,
        orderId + " notification delivery recorded by the simulator");
    Run show = wechat("show", orderId);

    assertThat(before).isEqualTo("UNPAID");
    assertThat(pay.exit()).as(pay.err()).isZero();
    assertThat(pay.json().path("state").asText()).isEqualTo("SUCCESS");
    assertThat(transactionId(orderId)).isEqualTo(pay.json().path("transactionId").asText());
    assertThat(show.json().path("notifications").path("deliveries").get(0).path("status").asInt())
        .isEqualTo(204);
  }

  /**
   * The case the command exists for: WeChat took the money, the notification never came; the order
   * stays UNPAID until its deadline, when the close path asks WeChat first and records the payment
   * instead of closing.
   */
  @Test
  void aLostNotificationLeavesThePaymentToTheClosePathWhichRecordsIt() throws Exception {
    String orderId = placeAndPrepay(6);

    Run lose = wechat("lose-notification", orderId);
    Run pay = wechat("pay", orderId);
    JsonNode shown = wechat("show", orderId).json();
    await(() -> !"UNPAID".equals(status(orderId)), orderId + " leaving UNPAID at its deadline");

    assertThat(lose.exit()).as(lose.err()).isZero();
    assertThat(pay.exit()).as(pay.err()).isZero();
    assertThat(shown.path("notifications").path("lost").asInt()).isEqualTo(1);
    assertThat(shown.path("notifications").path("sent").asInt()).isZero();
    assertThat(status(orderId)).isEqualTo("PAID");
    assertThat(transactionId(orderId)).isEqualTo(shown.path("transactionId").asText());
  }

  @Test
  void refusalsExitNonZeroWithTheSimulatorsMessageAndChangeNothing() throws Exception {
    String orderId = placeAndPrepay(600);
    String sim = stack.simulator().baseUrl().toString();

    Run unknown = wechat("pay", "cmd-nosuch-1", "--sim", sim);
    Run badDelay = wechat("pay", orderId, "--late", "soon");
    Run badCopies = wechat("repeat-notification", orderId, "--copies", "three");
    Run noOrder = wechat("pay");

    assertThat(unknown.exit()).isEqualTo(1);
    assertThat(unknown.err())
        .contains(
            "POST /_sim/trades/cmd-nosuch-1/pay: 404 TRADE_NOT_FOUND:"
                + " no trade cmd-nosuch-1 in the simulator");
    assertThat(badDelay.exit()).isEqualTo(1);
    assertThat(badDelay.err()).contains("400 INVALID_FIELD: delay must be a duration");
    assertThat(badCopies.exit()).isEqualTo(2);
    assertThat(badCopies.err()).contains("--copies must be a whole number, was 'three'");
    assertThat(noOrder.exit()).isEqualTo(2);
    assertThat(noOrder.err()).contains("usage: ./local wechat pay <orderId> [--late 30s]");
    assertThat(wechat("show", orderId).json().path("state").asText()).isEqualTo("NOTPAY");
    assertThat(status(orderId)).isEqualTo("UNPAID");
  }

  @Test
  void withoutARunningStackTheCommandSaysWhatItLookedFor() throws Exception {
    Path missing = dir.resolve("none.json");
    Path stale = dir.resolve("stale.json");
    Process gone = new ProcessBuilder("true").start();
    gone.waitFor();
    new LocalEndpoints(stack.apiUrl(), stack.simulator().baseUrl(), gone.pid(), Instant.now())
        .write(stale);

    Run noFile = run(missing, "show", "cmd-any-1");
    Run deadWriter = run(stale, "show", "cmd-any-1");

    assertThat(noFile.exit()).isEqualTo(1);
    assertThat(noFile.err()).contains("no running ./local up found (" + missing);
    assertThat(deadWriter.exit()).isEqualTo(1);
    assertThat(deadWriter.err())
        .contains("(pid " + gone.pid() + ") is no longer running; start ./local up again");
  }

  // ---- helpers ----

  private static Run wechat(String... words) {
    return run(endpoints, words);
  }

  private static Run run(Path endpointsFile, String... words) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int exit =
        new WeChatCommand(endpointsFile)
            .run(
                new ArrayList<>(List.of(words)),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Run(
        exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /** Places a one-line order over the API and prepays it; answers its id. */
  private String placeAndPrepay(int timeoutSeconds) throws Exception {
    byte[] random = new byte[4];
    ThreadLocalRandom.current().nextBytes(random);
    String orderId = "cmd-" + HexFormat.of().formatHex(random);
    String order =
        "{\"orderId\":\""
            + orderId
            + "\",\"userId\":\""
            + DemoCatalog.user(7)
            + "\",\"items\":[{\"skuId\":\""
            + DemoCatalog.sku(7)
            + "\",\"quantity\":1}],\"amountFen\":1000,\"timeoutSeconds\":"
            + timeoutSeconds
            + "}";
    assertThat(post("/orders", order).statusCode()).isEqualTo(201);
    HttpResponse<String> prepay =
        post("/orders/" + orderId + "/prepay", "{\"openId\":\"oCommandPayer1\"}");
    assertThat(prepay.statusCode()).as(prepay.body()).isEqualTo(200);
    return orderId;
  }

  private HttpResponse<String> post(String path, String body) throws Exception {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(stack.apiUrl() + path))
            .header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build();
    return http.send(request, HttpResponse.BodyHandlers.ofString());
  }

  private static String status(String orderId) {
    return column(orderId, "status");
  }

  private static String transactionId(String orderId) {
    return column(orderId, "transaction_id");
  }

  private static String column(String orderId, String column) {
    try (Connection c = stack.app().dataSource().getConnection();
        PreparedStatement s =
            c.prepareStatement("SELECT status, transaction_id FROM orders WHERE order_id = ?")) {
      s.setString(1, orderId);
      try (ResultSet rs = s.executeQuery()) {
        return rs.next() ? rs.getString(column) : "(no row)";
      }
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException("could not read order " + orderId, e);
    }
  }

  /** Polls every 20 ms for up to 30 s (a deadline plus the sweep's pass on a loaded machine). */
  private static int shownDeliveries(String orderId) {
    try {
      return wechat("show", orderId).json().path("notifications").path("deliveries").size();
    } catch (Exception e) {
      throw new IllegalStateException("cannot show " + orderId + " at the simulator", e);
    }
  }

  private static void await(BooleanSupplier condition, String what) {
    Await.until(what, Duration.ofSeconds(30), condition);
  }
}
