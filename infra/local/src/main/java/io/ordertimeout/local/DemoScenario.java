package io.ordertimeout.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ordertimeout.embedded.InvariantChecker;
import io.ordertimeout.embedded.wechat.TradeSnapshot;
import io.ordertimeout.util.Json;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The scripted demo: a mall backend and WeChat Pay working the local stack over HTTP. It places N
 * orders over the demo SKUs (a third of them with a line of the hot SKU), prepays some, has the
 * simulator pay most prepaid ones (some right at the deadline), cancels some, and lets the rest
 * time out; then it reads the outcome from the database and checks the invariants. Its second act
 * ({@link DemoLife}) lives the paid orders' life after payment with the deadlines scaled to seconds
 * ({@link #environment}): shipped, received by the user or automatically, extended once, an
 * after-sale opened and resolved, completed automatically; coupons issued with a short validity
 * expire, and one coupon locked by an order that times out expires when that order closes.
 */
final class DemoScenario {

  /** Flags of {@code ./local demo}. */
  record Settings(int orders, int timeoutSeconds, long seed) {
    Settings {
      if (orders < 1 || orders > 100_000) {
        throw new IllegalArgumentException("--orders must be 1..100000, was " + orders);
      }
      if (timeoutSeconds < 1 || timeoutSeconds > 3_600) {
        throw new IllegalArgumentException(
            "--timeout must be 1..3600 seconds, was " + timeoutSeconds);
      }
    }
  }

  /** What the script does with one order after placing it. */
  enum Plan {
    /** prepay, then the payer pays within the first half of the timeout */
    PAY,
    /** prepay, then the payer pays in the last 300 ms before the deadline */
    PAY_AT_DEADLINE,
    /** prepay, then the payer walks away: the close queries WeChat, then closes there and here */
    PREPAY_ONLY,
    /** the user cancels within the first half of the timeout */
    CANCEL,
    /** never touched again */
    TIMEOUT
  }

  record Order(String orderId, int index, Plan plan) {}

  /**
   * The deadlines of the life after payment, scaled to seconds for the demo unless the caller's
   * environment sets them: 3 s to receipt, 2 s more once extended, 3 s of after-sale window. The
   * longest life (extended, received automatically, completed) then takes 8 s after shipping, and
   * the user's calls 1 s after shipping or receipt keep 2 s clear of each deadline they race.
   */
  static final Map<String, String> SCALED_DEADLINES =
      Map.of(
          "OTC_RECEIPT_PERIOD", "PT3S",
          "OTC_RECEIPT_EXTENSION", "PT2S",
          "OTC_AFTER_SALE_WINDOW", "PT3S");

  /** {@code environment} with {@link #SCALED_DEADLINES} where it does not set them. */
  static Map<String, String> environment(Map<String, String> environment) {
    Map<String, String> env = new java.util.HashMap<>(environment);
    SCALED_DEADLINES.forEach(env::putIfAbsent);
    return env;
  }

  /** The client's answer to a payment: WeChat took it. */
  static final String PAY_SUCCESS = "WeChat SUCCESS";

  /**
   * What the client saw of one placed order, by its own clock: the deadline its POST answer gave
   * (expireAt), when it sent the prepay and what came back ("200", "409 ORDER_EXPIRED"), when it
   * paid or cancelled and what came back ("202", {@link #PAY_SUCCESS}, "refused by WeChat
   * (NOTPAY)", "no WeChat trade"). Null where the script did not get there.
   */
  record ClientView(
      Instant deadline,
      Instant prepaySentAt,
      String prepayAnswer,
      Instant actedAt,
      String actAnswer) {
    static ClientView placed(Instant deadline) {
      return new ClientView(deadline, null, null, null, null);
    }

    ClientView withPrepay(Instant sentAt, String answer) {
      return new ClientView(deadline, sentAt, answer, actedAt, actAnswer);
    }

    ClientView withAction(Instant at, String answer) {
      return new ClientView(deadline, prepaySentAt, prepayAnswer, at, answer);
    }

    boolean beforeDeadline(Instant at) {
      return at != null && at.isBefore(deadline);
    }
  }

  /**
   * What the demo found; {@link #print} ends with the invariants line and the verdict: {@code demo:
   * OK}, or {@code demo: FAILED} naming the checks of the plan that failed and the invariants.
   */
  record Report(
      List<String> lines,
      Map<String, Long> outcomes,
      List<String> violations,
      List<DemoReport.Check> checks) {
    boolean ok() {
      return violations.isEmpty() && failedChecks().isEmpty();
    }

    List<DemoReport.Check> failedChecks() {
      return checks.stream().filter(c -> !c.ok()).toList();
    }

    long outcome(String key) {
      return outcomes.getOrDefault(key, 0L);
    }

    void print(PrintStream out) {
      lines.forEach(out::println);
      out.println("checks of the plan (" + DemoReport.TOLERANCES + "):");
      checks.forEach(c -> out.println(c.line()));
      out.println(
          violations.isEmpty()
              ? "invariants: OK"
              : "invariants: FAILED ("
                  + violations.size()
                  + " violation(s): "
                  + String.join("; ", violations.subList(0, Math.min(5, violations.size())))
                  + ")");
      List<String> failed = new ArrayList<>();
      failedChecks().forEach(c -> failed.add(c.name() + ": " + c.detail()));
      if (!violations.isEmpty()) {
        failed.add("invariants");
      }
      out.println(ok() ? "demo: OK" : "demo: FAILED (" + String.join("; ", failed) + ")");
    }
  }

  /**
   * Requests in flight while placing: twice the cores. Everything runs on this one machine, where
   * on AWS the sweep has a Lambda of its own; placing is CPU-bound, so more clients place no faster
   * and only starve the sweep's thread. 2,000 orders on 2 cores shared with other builds (load
   * 6-17): 32 clients placed them in 25 s with close lag p99 5-10 s (six runs), 8 in 25 s with p99
   * 887 ms, 4 in 27-42 s with p99 378-604 ms (four runs).
   */
  private static final int CLIENTS = Math.max(4, 2 * Runtime.getRuntime().availableProcessors());

  /**
   * After the last deadline, how long the demo waits for closes: the sweep polls every 50 ms and
   * the first sweep invocation starts within 250 ms, so 30 s leaves a wide margin for a slow
   * machine.
   */
  private static final Duration GRACE = Duration.ofSeconds(30);

  private final LocalStack stack;
  private final Settings settings;
  private final PrintStream out;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final String tag;
  private final Map<String, ClientView> views = new ConcurrentHashMap<>();

  /**
   * Runs each order's payment or cancellation at its planned moment after that order's placement.
   */
  private final ScheduledExecutorService actions = Executors.newScheduledThreadPool(8);

  private final List<Future<?>> pending = java.util.Collections.synchronizedList(new ArrayList<>());
  private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
  private final long started = System.nanoTime();

  /**
   * The coupon issued to the last TIMEOUT order, valid until just before that order's deadline:
   * locked by the order past its validity, it must expire when the order closes.
   */
  private final String lockedCoupon;

  private String lockedOrderId;

  DemoScenario(LocalStack stack, Settings settings, PrintStream out) {
    this.stack = stack;
    this.settings = settings;
    this.out = out;
    byte[] random = new byte[3];
    java.util.concurrent.ThreadLocalRandom.current().nextBytes(random);
    this.tag = "d" + HexFormat.of().formatHex(random);
    this.lockedCoupon = tag + "-locked";
  }

  Report run() {
    List<Order> orders = plan();
    // the last TIMEOUT order: placed once the stack is warm, so its POST answers well within the
    // coupon's validity (the first POSTs of a cold stack on a loaded machine took over 3 s)
    lockedOrderId =
        orders.stream()
            .filter(o -> o.plan() == Plan.TIMEOUT)
            .map(Order::orderId)
            .reduce((first, second) -> second)
            .orElse(null);
    // fails before any order is placed when the deadlines are not scaled to seconds
    DemoLife life = new DemoLife(stack, tag);
    out.printf(
        "demo: %d orders (tag %s), timeout %d s, against %s%n",
        orders.size(), tag, settings.timeoutSeconds(), stack.apiUrl());
    // each order's story runs from its own placement, as a user's would: prepay right away, then
    // pay
    // or cancel at its planned moment, while later orders are still being placed
    parallel(orders, this::placeAndPlan, "placed");
    afterwards();
    Instant lastDeadline =
        views.values().stream()
            .map(ClientView::deadline)
            .max(Instant::compareTo)
            .orElse(Instant.now());
    waitForCloses(lastDeadline.plus(GRACE));

    List<DemoLife.Order> lives = DemoLife.plan(paidOrders());
    out.printf(
        "life after payment: %d paid orders, receipt period %s, extension %s, after-sale window"
            + " %s%n",
        lives.size(),
        life.periods().receiptPeriod(),
        life.periods().receiptExtension(),
        life.periods().afterSaleWindow());
    life.live(lives, CLIENTS);
    Instant lifeEnd = life.waitUntil();
    progressUntil(
        () -> life.settled(lives) || Instant.now().isAfter(lifeEnd), "life after payment");
    String lost = plantLostNotification();
    DemoReconciliation.Result reconciled = DemoReconciliation.run(stack, lost);
    return new DemoReport(stack, settings, orders, calls, views)
        .withLife(life, lives, lockedCoupon, lockedOrderId)
        .withReconciliation(reconciled)
        .build();
  }

  /**
   * One payment whose every notification WeChat loses, just before the day is reconciled: an order
   * with a 15-minute deadline, prepaid and paid at the simulator. No per-order path can have seen
   * the payment yet (compensation asks WeChat about a prepaid order only once its prepay is a
   * minute old, the sweep only at its deadline), so the trade bill is what must find it. Its id is
   * outside the demo's tag, so the report's per-order checks leave it to the reconciliation's.
   */
  private String plantLostNotification() {
    String orderId = tag + "lost";
    ObjectNode body =
        Json.object()
            .put("orderId", orderId)
            .put("userId", DemoCatalog.user(0))
            .put("timeoutSeconds", 900)
            .put("amountFen", 1_000L);
    body.putArray("items").addObject().put("skuId", DemoCatalog.sku(0)).put("quantity", 1);
    HttpResponse<String> placed = post("/orders", Json.write(body), "lost payment: place");
    HttpResponse<String> prepaid =
        post(
            "/orders/" + orderId + "/prepay",
            Json.write(Json.object().put("openId", "oDemoPayerLost")),
            "lost payment: prepay");
    if (placed.statusCode() != 201 || prepaid.statusCode() != 200) {
      throw new IllegalStateException(
          "the lost notification's order was refused: place "
              + placed.statusCode()
              + describe(placed)
              + ", prepay "
              + prepaid.statusCode()
              + describe(prepaid));
    }
    // the binding's out_trade_no is the order id: no other order of the merchant holds it
    // WeChat's first attempt and its 15 retries, all lost
    stack.simulator().loseNotifications(orderId, 16);
    stack.simulator().pay(orderId);
    out.printf("lost notification planted: %s paid at WeChat, never notified%n", orderId);
    return orderId;
  }

  /** This demo's PAID orders once the first act is over. */
  private List<String> paidOrders() {
    List<String> paid = new ArrayList<>();
    try (java.sql.Connection c = stack.app().dataSource().getConnection();
        java.sql.PreparedStatement ps =
            c.prepareStatement(
                "SELECT order_id FROM orders WHERE order_id LIKE ? AND status = 'PAID'")) {
      ps.setString(1, tag + "-%");
      try (java.sql.ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          paid.add(rs.getString(1));
        }
      }
    } catch (java.sql.SQLException e) {
      throw new io.ordertimeout.mysql.DataAccessException(
          "could not read the paid orders", e, false);
    }
    return paid;
  }

  // ---- the script ----

  private List<Order> plan() {
    Random random = new Random(settings.seed());
    List<Order> orders = new ArrayList<>();
    for (int i = 0; i < settings.orders(); i++) {
      double r = random.nextDouble();
      Plan plan =
          r < 0.25
              ? Plan.PAY
              : r < 0.30
                  ? Plan.PAY_AT_DEADLINE
                  : r < 0.40 ? Plan.PREPAY_ONLY : r < 0.50 ? Plan.CANCEL : Plan.TIMEOUT;
      orders.add(new Order(tag + "-" + i, i, plan));
    }
    return orders;
  }

  private static boolean prepays(Plan plan) {
    return plan == Plan.PAY || plan == Plan.PAY_AT_DEADLINE || plan == Plan.PREPAY_ONLY;
  }

  private void place(Order order) {
    HttpResponse<String> response = post("/orders", placeBody(order), "place");
    if (response.statusCode() == 201 || response.statusCode() == 200) {
      // the client's deadline: what the API promised, kept to compare with what the DB holds
      Instant deadline = Instant.parse(read(response.body()).get("expireAt").asText());
      views.put(order.orderId(), ClientView.placed(deadline));
    }
  }

  /** 1-3 lines over the 200 SKUs, a hot-SKU line in a third of the orders, a coupon in some. */
  private String placeBody(Order order) {
    SplittableRandom random = new SplittableRandom(settings.seed() * 31 + order.index());
    ObjectNode body =
        Json.object()
            .put("orderId", order.orderId())
            .put("userId", DemoCatalog.user(order.index() % DemoCatalog.USERS))
            .put("timeoutSeconds", settings.timeoutSeconds());
    ArrayNode items = body.putArray("items");
    long amount = 0;
    if (order.index() % 3 == 0) {
      items.addObject().put("skuId", DemoCatalog.HOT_SKU).put("quantity", 1);
      amount += 990;
    }
    int first = random.nextInt(DemoCatalog.SKUS);
    for (int line = 0, lines = 1 + random.nextInt(2); line < lines; line++) {
      int quantity = 1 + random.nextInt(2);
      items
          .addObject()
          .put("skuId", DemoCatalog.sku((first + line) % DemoCatalog.SKUS))
          .put("quantity", quantity);
      amount += 1_000L * quantity;
    }
    // each user's one coupon, on the user's first order when the index says so
    if (order.orderId().equals(lockedOrderId)) {
      body.put("couponId", lockedCoupon);
    } else if (order.index() < DemoCatalog.USERS && order.index() % 4 == 0) {
      body.put("couponId", DemoCatalog.coupon(order.index()));
    }
    return Json.write(body.put("amountFen", amount));
  }

  private void prepay(Order order) {
    // the payer's openid under the mall's appid, as wx.login would give the mini-program
    String body = Json.write(Json.object().put("openId", "oDemoPayer" + order.index()));
    Instant sentAt = Instant.now();
    HttpResponse<String> response = post("/orders/" + order.orderId() + "/prepay", body, "prepay");
    String answer = response.statusCode() + describe(response);
    views.computeIfPresent(order.orderId(), (id, v) -> v.withPrepay(sentAt, answer));
  }

  private void placeAndPlan(Order order) {
    if (order.orderId().equals(lockedOrderId)) {
      stack
          .app()
          .coupons()
          .issue(
              lockedCoupon,
              io.ordertimeout.wechat.EnvironmentMerchantDirectory.DEFAULT_TENANT,
              DemoCatalog.user(order.index() % DemoCatalog.USERS),
              // valid for the order's timeout from before it is placed: the order's own deadline
              // (placed + timeout) is later, so its close always finds the validity passed
              Instant.now().plusSeconds(settings.timeoutSeconds()));
    }
    place(order);
    ClientView placed = views.get(order.orderId());
    if (placed == null) {
      return;
    }
    Instant deadline = placed.deadline();
    if (prepays(order.plan())) {
      prepay(order);
    }
    SplittableRandom random = new SplittableRandom(settings.seed() * 17 + order.index());
    long half = settings.timeoutSeconds() * 500L;
    long untilDeadline = Duration.between(Instant.now(), deadline).toMillis();
    long at =
        switch (order.plan()) {
          case PAY, CANCEL -> random.nextLong(half + 1);
          case PAY_AT_DEADLINE -> Math.max(0, untilDeadline - random.nextLong(300));
          default -> -1;
        };
    if (at >= 0) {
      pending.add(actions.schedule(() -> act(order), at, TimeUnit.MILLISECONDS));
    }
  }

  /** Waits for every planned payment and cancellation to have run. */
  private void afterwards() {
    progressUntil(
        () -> {
          synchronized (pending) {
            return pending.stream().allMatch(Future::isDone);
          }
        },
        "payments and cancellations");
    actions.shutdown();
  }

  private void act(Order order) {
    Instant at = Instant.now();
    String answer = perform(order);
    views.computeIfPresent(order.orderId(), (id, v) -> v.withAction(at, answer));
  }

  /** Cancels or pays as planned; answers what came back. */
  private String perform(Order order) {
    if (order.plan() == Plan.CANCEL) {
      HttpResponse<String> response =
          post("/orders/" + order.orderId() + "/cancel", "{}", "cancel");
      return response.statusCode() + describe(response);
    }
    TradeSnapshot trade = stack.simulator().trade(order.orderId()).orElse(null);
    if (trade == null) {
      count("pay: no WeChat trade (not prepaid)");
      return "no WeChat trade";
    }
    try {
      stack.simulator().pay(order.orderId());
      count("pay: " + PAY_SUCCESS);
      return PAY_SUCCESS;
    } catch (IllegalStateException e) {
      // the trade was closed by the close path, or its time_expire passed: WeChat refuses to pay
      count("pay: refused by WeChat (" + trade.state() + ", closed or expired)");
      return "refused by WeChat (" + trade.state() + ")";
    }
  }

  private void waitForCloses(Instant until) {
    progressUntil(
        () -> {
          boolean allFinal = statuses().getOrDefault("UNPAID", 0L) == 0;
          return allFinal || Instant.now().isAfter(until);
        },
        "closes");
  }

  private Map<String, Long> statuses() {
    return new InvariantChecker(stack.app().dataSource()).summary().ordersByStatus();
  }

  private void progressUntil(java.util.function.BooleanSupplier done, String phase) {
    while (!done.getAsBoolean()) {
      progress(phase);
      sleep(Duration.ofSeconds(1));
    }
    progress(phase + " done");
  }

  private void progress(String phase) {
    Map<String, Long> s = statuses();
    out.printf(
        "[%6.1fs] %-30s unpaid %6d  paid %6d  closed %6d  shipped %4d  received %4d"
            + "  after-sale %4d  completed %4d%n",
        (System.nanoTime() - started) / 1e9,
        phase,
        s.getOrDefault("UNPAID", 0L),
        s.getOrDefault("PAID", 0L),
        s.getOrDefault("CLOSED", 0L),
        s.getOrDefault("SHIPPED", 0L),
        s.getOrDefault("RECEIVED", 0L),
        s.getOrDefault("AFTER_SALE", 0L),
        s.getOrDefault("COMPLETED", 0L));
  }

  // ---- HTTP ----

  private void parallel(List<Order> orders, Consumer<Order> call, String phase) {
    ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
    try {
      List<Future<?>> futures = new ArrayList<>();
      orders.forEach(o -> futures.add(pool.submit(() -> call.accept(o))));
      progressUntil(() -> futures.stream().allMatch(Future::isDone), phase);
      for (Future<?> f : futures) {
        f.get();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("demo interrupted while " + phase, e);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IllegalStateException("demo step failed while " + phase, e.getCause());
    } finally {
      pool.shutdownNow();
    }
  }

  private HttpResponse<String> post(String path, String body, String what) {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(stack.apiUrl() + path))
            .timeout(Duration.ofSeconds(30))
            .header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build();
    try {
      HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
      count(what + ": " + response.statusCode() + describe(response));
      return response;
    } catch (IOException e) {
      throw new UncheckedIOException(what + " " + path + " failed", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(what + " " + path + " interrupted", e);
    }
  }

  /** The error code of an error answer ("404 ROUTE_NOT_FOUND"), so the report says why. */
  private static String describe(HttpResponse<String> response) {
    if (response.statusCode() < 400) {
      return "";
    }
    JsonNode body = read(response.body());
    String code = body.path("error").path("code").asText(body.path("code").asText(""));
    return code.isEmpty() ? "" : " " + code;
  }

  private static JsonNode read(String body) {
    try {
      return Json.MAPPER.readTree(body == null || body.isEmpty() ? "{}" : body);
    } catch (IOException e) {
      return Json.object().put("raw", body);
    }
  }

  private void count(String key) {
    calls.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
  }

  private static void sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("demo interrupted", e);
    }
  }
}
