package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.util.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The local stack's schedules fired as EventBridge Scheduler fires them, anywhere within each
 * period (seeded jitter, ScheduleRunner), at {@code --schedule-scale 0.05}: periods of 3 s, every
 * function with its template Timeout. For 12 periods an order falls due every 100 ms; each closes
 * TIMEOUT, never before its deadline and within one period of it (an unswept period would leave its
 * orders waiting for the next run), while the sweep runs start anywhere from together to two
 * periods apart, overlap, and end by handing over to the run started after them (with 150 s of
 * Timeout, a run that did not hand over would still be sweeping when the test ends). Prints the
 * seed and the figures; asserts no timing beyond the one-period coverage bound.
 */
@Tag("integration")
class JitteredScheduleCoverageTest {
  private static final long SEED = 20_261_203L;
  private static final double SCALE = 0.05;
  private static final int PERIODS = 12;
  private static final long PLACE_EVERY_MS = 100;

  @Test
  void everyOrderDueUnderJitteredOverlappingRunsClosesWithinOnePeriodAndRunsHandOver()
      throws Exception {
    String tag = "cov" + Long.toString(System.nanoTime() % 1_000_000_000L, 36);
    List<String> placed = new ArrayList<>();
    ScheduleRunner sweep;
    long period;
    List<long[]> closes = new ArrayList<>();
    try (LocalStack stack =
        LocalStack.start(
            new LocalStack.Options(
                Main.templatePath(), "127.0.0.1", 0, SCALE, new ScheduleRunner.Jitter(true, SEED)),
            System.getenv())) {
      sweep =
          stack.schedules().stream()
              .filter(s -> s.functionName().equals("TimeoutSweepFunction"))
              .findFirst()
              .orElseThrow();
      period = sweep.interval().toMillis();
      assertThat(period).isEqualTo(3_000);
      HttpClient http = HttpClient.newHttpClient();
      SplittableRandom random = new SplittableRandom(SEED);
      long start = System.nanoTime();
      long end = start + Duration.ofMillis(PERIODS * period).toNanos();
      for (int i = 0; System.nanoTime() < end; i++) {
        String orderId = tag + "-" + i;
        int status = place(http, stack.apiUrl(), orderId, i, 1 + random.nextInt(3));
        assertThat(status).as("POST /orders %s", orderId).isEqualTo(201);
        placed.add(orderId);
        long next = start + Duration.ofMillis((i + 1) * PLACE_EVERY_MS).toNanos();
        Thread.sleep(Math.max(0, (next - System.nanoTime()) / 1_000_000));
      }
      // the last orders are due within 3 s; give them two periods more
      long drainUntil = System.nanoTime() + Duration.ofMillis(3_000 + 2 * period).toNanos();
      while (System.nanoTime() < drainUntil && open(stack, tag) > 0) {
        Thread.sleep(200);
      }
      closes.addAll(closes(stack, tag));
      assertThat(open(stack, tag)).as("orders of %s still UNPAID", tag).isZero();
    }

    Histogram lag = new Histogram(3_600_000L, 3);
    for (long[] c : closes) {
      lag.recordValue(Math.max(0, c[0]));
    }
    long early = closes.stream().filter(c -> c[0] < 0).count();
    long completed = sweep.invocations();
    System.out.printf(
        "jittered schedules: seed %d, period %d ms, %d orders due over %d periods; close lag"
            + " p50 %d / p99 %d / max %d ms; sweep runs fired %d, returned %d (failed %d), %d"
            + " started beside a running one, at most %d at once, %d ms on average each%n",
        SEED,
        period,
        placed.size(),
        PERIODS,
        lag.getValueAtPercentile(50),
        lag.getValueAtPercentile(99),
        lag.getMaxValue(),
        sweep.fired(),
        completed,
        sweep.failures(),
        sweep.overlapping(),
        sweep.maxRunning(),
        completed == 0 ? 0 : sweep.runMillis() / completed);

    assertThat(closes).hasSize(placed.size());
    assertThat(closes).allSatisfy(c -> assertThat(c[1]).as("closed TIMEOUT").isEqualTo(1));
    assertThat(early).as("orders closed before their deadline").isZero();
    assertThat(lag.getMaxValue())
        .as("no order waits longer than a period for a sweeper")
        .isLessThan(period);
    // the runs overlapped (jitter) and ended by handing over: a run that did not would sweep for
    // 121 s, and none would have returned within the test's ~45 s
    assertThat(sweep.overlapping()).isPositive();
    assertThat(completed).isGreaterThanOrEqualTo(PERIODS - 2);
    assertThat(sweep.failures()).isZero();
    assertThat(sweep.maxRunning()).isLessThanOrEqualTo(3);
  }

  private static int place(HttpClient http, URI api, String orderId, int i, int timeoutSeconds)
      throws Exception {
    String body =
        Json.write(
            Json.object()
                .put("orderId", orderId)
                .put("userId", DemoCatalog.user(i % DemoCatalog.USERS))
                .put("timeoutSeconds", timeoutSeconds)
                .put("amountFen", 1_000)
                .set(
                    "items",
                    Json.MAPPER
                        .createArrayNode()
                        .add(
                            Json.object()
                                .put("skuId", DemoCatalog.sku(i % DemoCatalog.SKUS))
                                .put("quantity", 1))));
    HttpResponse<String> response =
        http.send(
            HttpRequest.newBuilder(URI.create(api + "/orders"))
                .timeout(Duration.ofSeconds(30))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    return response.statusCode();
  }

  private static long open(LocalStack stack, String tag) throws Exception {
    try (Connection c = stack.app().dataSource().getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT COUNT(*) FROM orders WHERE order_id LIKE ? AND status = 'UNPAID'")) {
      ps.setString(1, tag + "-%");
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /** Per closed order: close lag in ms (closed_at - expire_at) and 1 if closed TIMEOUT. */
  private static List<long[]> closes(LocalStack stack, String tag) throws Exception {
    List<long[]> out = new ArrayList<>();
    try (Connection c = stack.app().dataSource().getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT TIMESTAMPDIFF(MICROSECOND, expire_at, closed_at) DIV 1000,"
                    + " close_reason = 'TIMEOUT' FROM orders"
                    + " WHERE order_id LIKE ? AND status = 'CLOSED'")) {
      ps.setString(1, tag + "-%");
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(new long[] {rs.getLong(1), rs.getLong(2)});
        }
      }
    }
    return out;
  }
}
