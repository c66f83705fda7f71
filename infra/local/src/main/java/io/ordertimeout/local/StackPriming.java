package io.ordertimeout.local;

import io.ordertimeout.mysql.DataAccessException;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import javax.sql.DataSource;

/**
 * What {@code ./local up} runs between starting the stack and printing {@code ready}: for a few
 * seconds, the order mix users send (place, then prepay and pay on the WeChat Pay simulator, or
 * cancel, or let the order expire), over the stack's own HTTP API, then it waits until the sweep
 * and the stream consumer have ended every one of those orders. A JVM starts interpreting; its JIT
 * compiles a method once it has run thousands of times, and until then a request costs several
 * times its steady-state CPU (the open-loop bench's first minute of an unprimed stack: twice the
 * CPU per order and 13x the placement p99 of the steady state). The first users then meet compiled
 * code, filled connection pools, loaded Redis scripts and a warm buffer pool: what SnapStart's
 * priming gives a Lambda environment, for the whole local stack.
 *
 * <p>The orders are the default tenant's, on SKUs of their own ({@code prime-sku-0000..}, seeded
 * here) and with ids of their own ({@code prime0000000001..}), so the demo catalogue's stock is
 * untouched; they go through every check and invariant a user's order does. {@code --prime-seconds
 * 0} skips priming.
 */
final class StackPriming {
  static final String ORDER_PREFIX = "prime";
  static final int SKUS = 32;
  static final long STOCK_PER_SKU = 1_000_000;

  /** How long {@code ./local up} primes unless {@code --prime-seconds} says otherwise. */
  static final int DEFAULT_SECONDS = 20;

  /** Users placing orders one after the other each while priming. */
  static final int USERS = 4;

  /** Each priming order expires this long after placement, so the sweep closes during priming. */
  static final int TIMEOUT_SECONDS = 5;

  /** How long priming waits for its last orders to end after it stopped placing. */
  private static final Duration DRAIN = Duration.ofSeconds(30);

  /** What priming did: requests and their outcome, and how the orders ended. */
  record Result(
      long placed,
      long paid,
      long cancelled,
      long closed,
      long unended,
      long unexpected,
      List<String> firstUnexpected,
      Duration took) {

    /** Every request answered as expected and every order ended. */
    boolean clean() {
      return unexpected == 0 && unended == 0;
    }

    String describe() {
      String line =
          String.format(
              Locale.ROOT,
              "primed        %,d orders in %.1f s (%,d paid, %,d cancelled, %,d closed by the sweep"
                  + " or the stream consumer; ids %s*, SKUs prime-sku-*; --prime-seconds 0 skips)",
              placed,
              took.toMillis() / 1000.0,
              paid,
              cancelled,
              closed,
              ORDER_PREFIX);
      if (clean()) {
        return line;
      }
      return line
          + String.format(
              Locale.ROOT,
              "%n  priming saw %d unexpected answers and %d orders not ended in time: %s",
              unexpected,
              unended,
              firstUnexpected);
    }
  }

  private final URI api;
  private final URI simulator;
  private final DataSource dataSource;
  private final HttpClient http;
  private final AtomicLong sequence = new AtomicLong();
  private final AtomicLong placed = new AtomicLong();
  private final AtomicLong cancelled = new AtomicLong();
  private final AtomicLong unexpected = new AtomicLong();
  private final ConcurrentLinkedQueue<String> unexpectedSample = new ConcurrentLinkedQueue<>();

  StackPriming(URI api, URI simulator, DataSource dataSource) {
    this.api = api;
    this.simulator = simulator;
    this.dataSource = dataSource;
    this.http =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
  }

  /**
   * Primes {@code stack} for {@code duration} with {@code users} users one after the other each.
   */
  static Result prime(LocalStack stack, Duration duration, int users) throws InterruptedException {
    StackPriming priming =
        new StackPriming(stack.apiUrl(), stack.simulator().baseUrl(), stack.app().dataSource());
    return priming.run(duration, users);
  }

  Result run(Duration duration, int users) throws InterruptedException {
    seed();
    long start = System.nanoTime();
    long end = start + duration.toNanos();
    ExecutorService pool = Executors.newFixedThreadPool(users);
    try {
      List<Future<?>> running = new ArrayList<>();
      for (int u = 0; u < users; u++) {
        int user = u;
        running.add(
            pool.submit(
                () -> {
                  while (System.nanoTime() < end && !Thread.currentThread().isInterrupted()) {
                    oneOrder(user);
                  }
                  return null;
                }));
      }
      for (Future<?> f : running) {
        try {
          f.get();
        } catch (java.util.concurrent.ExecutionException e) {
          unexpected(String.valueOf(e.getCause()));
        }
      }
    } finally {
      pool.shutdownNow();
      pool.awaitTermination(10, TimeUnit.SECONDS);
    }
    Counts ended = awaitEnded();
    return new Result(
        placed.get(),
        ended.paid(),
        cancelled.get(),
        ended.closed(),
        ended.unpaid(),
        unexpected.get(),
        List.copyOf(unexpectedSample),
        Duration.ofNanos(System.nanoTime() - start));
  }

  /** One user's order: placed, then paid (1 in 4), cancelled (1 in 10) or left to expire. */
  private void oneOrder(int user) throws IOException, InterruptedException {
    long n = sequence.incrementAndGet();
    String orderId = ORDER_PREFIX + String.format(Locale.ROOT, "%010d", n);
    String body =
        String.format(
            Locale.ROOT,
            "{\"orderId\":\"%s\",\"userId\":\"prime-user-%04d\",\"items\":[{\"skuId\":\"%s\","
                + "\"quantity\":1}],\"amountFen\":100,\"timeoutSeconds\":%d}",
            orderId,
            user,
            sku((int) (n % SKUS)),
            TIMEOUT_SECONDS);
    if (!post(api.resolve("/orders"), body, 201)) {
      return;
    }
    placed.incrementAndGet();
    if (n % 4 == 0) {
      if (post(api.resolve("/orders/" + orderId + "/prepay"), "{\"openId\":\"oPrime\"}", 200)) {
        post(simulator.resolve("/_sim/trades/" + orderId + "/pay"), "{}", 200);
      }
    } else if (n % 10 == 1) {
      if (post(api.resolve("/orders/" + orderId + "/cancel"), "", 202)) {
        cancelled.incrementAndGet();
      }
    }
  }

  private boolean post(URI uri, String body, int expected)
      throws IOException, InterruptedException {
    HttpRequest request =
        HttpRequest.newBuilder(uri)
            .timeout(Duration.ofSeconds(10))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build();
    HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() == expected) {
      return true;
    }
    unexpected(
        "POST " + uri.getPath() + " answered " + response.statusCode() + " " + response.body());
    return false;
  }

  private void unexpected(String what) {
    if (unexpected.incrementAndGet() <= 3) {
      unexpectedSample.add(what);
    }
  }

  static String sku(int n) {
    return String.format(Locale.ROOT, "prime-sku-%04d", n);
  }

  private void seed() {
    DemoCatalog.seedStock(
        dataSource, IntStream.range(0, SKUS).mapToObj(StackPriming::sku).toList(), STOCK_PER_SKU);
  }

  /** How the priming orders stand. */
  private record Counts(long unpaid, long paid, long closed) {}

  /** Waits until no priming order is UNPAID, at most {@link #DRAIN}; how they stand then. */
  private Counts awaitEnded() throws InterruptedException {
    long deadline = System.nanoTime() + DRAIN.toNanos();
    Counts counts = counts();
    while (counts.unpaid() > 0 && System.nanoTime() < deadline) {
      Thread.sleep(100);
      counts = counts();
    }
    return counts;
  }

  private Counts counts() {
    try (Connection c = dataSource.getConnection();
        PreparedStatement count =
            c.prepareStatement(
                "SELECT COALESCE(SUM(status = 'UNPAID'), 0), COALESCE(SUM(paid_at IS NOT NULL), 0),"
                    + " COALESCE(SUM(status = 'CLOSED'), 0) FROM orders"
                    + " WHERE tenant_id = 'default' AND order_id LIKE ?")) {
      count.setString(1, ORDER_PREFIX + "%");
      try (ResultSet rs = count.executeQuery()) {
        rs.next();
        return new Counts(rs.getLong(1), rs.getLong(2), rs.getLong(3));
      }
    } catch (SQLException e) {
      throw new DataAccessException("could not count the priming orders", e, false);
    }
  }
}
