package io.ordertimeout.load;

import static io.gatling.javaapi.core.CoreDsl.StringBody;
import static io.gatling.javaapi.core.CoreDsl.constantUsersPerSec;
import static io.gatling.javaapi.core.CoreDsl.exec;
import static io.gatling.javaapi.core.CoreDsl.percent;
import static io.gatling.javaapi.core.CoreDsl.responseTimeInMillis;
import static io.gatling.javaapi.core.CoreDsl.scenario;
import static io.gatling.javaapi.http.HttpDsl.http;
import static io.gatling.javaapi.http.HttpDsl.status;

import io.gatling.javaapi.core.ChainBuilder;
import io.gatling.javaapi.core.ScenarioBuilder;
import io.gatling.javaapi.core.Simulation;
import io.gatling.javaapi.http.HttpProtocolBuilder;
import io.gatling.javaapi.http.HttpRequestActionBuilder;
import java.time.Duration;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Users as they arrive at a mini-program's checkout, at a fixed rate whatever the API answers
 * (Gatling's open model: a slow answer delays no later arrival, and each latency runs from the
 * request's own start). Each places an order of one item (a random SKU of the local catalog, a
 * random user); one in {@code payEvery} prepays it and pays on the WeChat Pay simulator, which
 * notifies the webhook as WeChat does; one in {@code cancelEvery} cancels it; the rest let it
 * expire, so the sweep closes them at the placement rate. The request names ({@code place}, {@code
 * prepay}, {@code pay}, {@code cancel}) are the rows of Gatling's statistics.
 */
public class OrderMixSimulation extends Simulation {

  /** Orders the simulator accepted a payment for, for the end-state check. */
  static final Set<String> PAID_AT_WECHAT = ConcurrentHashMap.newKeySet();

  /** This step's response times; the driver swaps in a fresh one before each step. */
  static volatile Latencies latencies = new Latencies();

  private static final AtomicLong SEQUENCE = new AtomicLong();

  /** The catalog of {@code ./local up}: sku-0000..sku-0199. */
  private static final int SKUS = 200;

  private static final int USERS = 500;

  public OrderMixSimulation() {
    LoadSettings settings = LoadSettings.fromSystemProperties();
    HttpProtocolBuilder protocol =
        http.baseUrl(settings.api())
            .contentTypeHeader("application/json")
            .acceptHeader("application/json")
            // API Gateway ends the users' connections; what reaches the handler comes over the
            // gateway's kept-alive ones, as here over one shared pool.
            .shareConnections();

    ChainBuilder pay =
        exec(timed(
                http("prepay")
                    .post("/orders/#{orderId}/prepay")
                    .body(StringBody("{\"openId\":\"oLoad#{orderId}\"}")),
                "prepay",
                200))
            .exitHereIfFailed()
            .exec(
                timed(
                    http("pay")
                        .post(settings.sim() + "/_sim/trades/#{orderId}/pay")
                        .body(StringBody("{}")),
                    "pay",
                    200))
            .exitHereIfFailed()
            .exec(
                session -> {
                  PAID_AT_WECHAT.add(session.getString("orderId"));
                  return session;
                });
    ChainBuilder cancel = timed(http("cancel").post("/orders/#{orderId}/cancel"), "cancel", 202);

    ScenarioBuilder users =
        scenario("order mix")
            .exec(
                session -> {
                  ThreadLocalRandom random = ThreadLocalRandom.current();
                  return session
                      .set("orderId", orderId(settings.idPrefix(), SEQUENCE.incrementAndGet()))
                      .set("userId", String.format(Locale.ROOT, "user-%04d", random.nextInt(USERS)))
                      .set("skuId", String.format(Locale.ROOT, "sku-%04d", random.nextInt(SKUS)));
                })
            .exec(
                timed(
                    http("place")
                        .post("/orders")
                        .body(
                            StringBody(
                                "{\"orderId\":\"#{orderId}\",\"userId\":\"#{userId}\",\"items\":"
                                    + "[{\"skuId\":\"#{skuId}\",\"quantity\":1}],"
                                    + "\"amountFen\":100,\"timeoutSeconds\":"
                                    + settings.timeoutSeconds()
                                    + "}")),
                    "place",
                    201))
            .exitHereIfFailed()
            .randomSwitch()
            .on(
                percent(settings.payPercent()).then(pay),
                percent(settings.cancelPercent()).then(cancel));

    setUp(
            users.injectOpen(
                constantUsersPerSec(settings.rate())
                    .during(Duration.ofSeconds(settings.seconds()))))
        .protocols(protocol)
        // a step ends at its last arrival plus the slowest answer; no user outlives it by a minute
        .maxDuration(Duration.ofSeconds(settings.seconds() + 60L));
  }

  /**
   * The request, then its response time (Gatling's measurement) and whether the status was {@code
   * expected}, recorded in {@link #latencies}; a user whose answer was not expected goes no
   * further.
   */
  private static ChainBuilder timed(HttpRequestActionBuilder request, String name, int expected) {
    String time = name + "Ms";
    String code = name + "Status";
    return exec(request.check(responseTimeInMillis().saveAs(time), status().saveAs(code)))
        .exec(
            session -> {
              boolean ok = session.contains(code) && session.getInt(code) == expected;
              if (session.contains(time)) {
                latencies.record(name, session.getLong(time), ok);
              }
              return ok ? session : session.markAsFailed();
            });
  }

  /** out_trade_no allows 6 to 32 characters: the prefix (at most 20) and 10 digits. */
  static String orderId(String prefix, long sequence) {
    return prefix + String.format(Locale.ROOT, "%010d", sequence);
  }
}
