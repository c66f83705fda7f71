package io.ordertimeout.functions.orders;

import static org.assertj.core.api.Assertions.assertThat;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import io.ordertimeout.testing.LambdaTestContext;
import io.ordertimeout.testing.TestStack;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Hostile requests against every order-created route through the real handler, in the sample
 * event's envelope. Each gets a 4xx and changes nothing in MariaDB or Redis.
 */
class HostileInputTest {
  static final String POST_EVENT = "../../events/order-created-post-orders.json";
  static final String TEN_MIB = "{\"orderId\":\"" + "x".repeat(10 * 1024 * 1024) + "\"}";
  static final String SQL = "x'; DROP TABLE orders; --";
  static final String UNICODE = "订单\u202e💥\u0000";
  static WeChatPaySimulator wechat;
  static TestStack stack;
  static OrderApiHandler handler;

  /** A request as API Gateway hands it over: the matched route's key and the {id} parameter. */
  record Case(
      String name, String routeKey, String id, String body, Consumer<APIGatewayV2HTTPEvent> tweak) {
    Case(String name, String routeKey, String id, String body) {
      this(name, routeKey, id, body, e -> {});
    }
  }

  @BeforeAll
  static void setUp() {
    wechat = WeChatPaySimulator.start();
    stack = TestStack.withWeChat("hostile", wechat);
    stack.seedSku("sku-tea-500g", 10);
    stack.seedCoupon("cp-1", "u1");
    stack.place("o-existing", "u1", 600, "cp-1", new OrderItem("sku-tea-500g", 2));
    handler = new OrderApiHandler(stack.app().orderApi());
  }

  @AfterAll
  static void tearDown() {
    stack.assertInvariants();
    stack.close();
    wechat.close();
  }

  static List<Case> cases() {
    List<Case> c = new ArrayList<>();
    String items = "[{\"skuId\":\"sku-tea-500g\",\"quantity\":1}]";
    String ok = "{\"orderId\":\"h-1\",\"userId\":\"u1\",\"items\":" + items + ",\"amountFen\":100}";
    for (String body :
        List.of(
            "{",
            "[]",
            "null",
            "",
            "\"text\"",
            "{\"orderId\":\"h-1\",\"userId\":\"u1\",\"items\":\"tea\",\"amountFen\":100}",
            "{\"orderId\":\"h-1\",\"userId\":\"u1\",\"items\":[{\"skuId\":\"sku-tea-500g\",\"quantity\":\"two\"}],\"amountFen\":100}",
            "{\"orderId\":7,\"userId\":[],\"items\":" + items + ",\"amountFen\":\"100\"}",
            "{\"orderId\":\"h-1\",\"userId\":\"u1\",\"items\":[{\"skuId\":\"sku-tea-500g\",\"quantity\":99999999999999999999}],\"amountFen\":100}",
            "{\"orderId\":\"h-1\",\"userId\":\"u1\",\"items\":[{\"skuId\":\"sku-tea-500g\",\"quantity\":1e308}],\"amountFen\":100}",
            "{\"orderId\":\"h-1\",\"userId\":\"u1\",\"items\":"
                + items
                + ",\"amountFen\":9223372036854775808}",
            "{\"orderId\":\"h-1\",\"userId\":\"u1\",\"items\":" + items + ",\"amountFen\":-1}",
            "{\"orderId\":\"h-1\",\"userId\":\"u1\",\"items\":[{\"skuId\":\"sku-tea-500g\",\"quantity\":0}],\"amountFen\":100}",
            "{\"orderId\":\"h-1\",\"userId\":\"u1\",\"items\":[{\"skuId\":\"sku-tea-500g\",\"quantity\":-3}],\"amountFen\":100}",
            "{\"orderId\":\"h-1\",\"userId\":\"u1\",\"items\":[{\"skuId\":\"sku-tea-500g\",\"quantity\":1000000}],\"amountFen\":100}",
            "{\"orderId\":\"h-1\",\"userId\":\"u1\",\"items\":[],\"amountFen\":100}",
            "{\"orderId\":\"h-1\",\"userId\":\"u1\",\"items\":[{\"skuId\":\"no-such-sku\",\"quantity\":1}],\"amountFen\":100}",
            ok.replace("h-1", SQL),
            ok.replace("h-1", UNICODE),
            ok.replace("h-1", "y".repeat(10_000)),
            ok.replace("u1", SQL),
            ok.replace("}", ",\"couponId\":\"" + SQL + "\"}"),
            ok.replace("}", ",\"timeoutSeconds\":-5}"),
            ok.replace("}", ",\"timeoutSeconds\":99999999999}"),
            "[".repeat(100_000),
            TEN_MIB)) {
      c.add(new Case("POST /orders " + abbreviate(body), "POST /orders", null, body));
    }
    c.add(new Case("POST /orders no headers", "POST /orders", null, "{", e -> e.setHeaders(null)));
    c.add(new Case("POST /orders no body", "POST /orders", null, null));
    c.add(
        new Case(
            "POST /orders bad base64",
            "POST /orders",
            null,
            "%%%not-base64%%%",
            e -> e.setIsBase64Encoded(true)));
    c.add(
        new Case(
            "POST /orders base64 of junk",
            "POST /orders",
            null,
            Base64.getEncoder().encodeToString(new byte[] {(byte) 0xff, 0, 1, 2}),
            e -> e.setIsBase64Encoded(true)));
    c.add(new Case("DELETE /orders", "DELETE /orders", null, ok));
    for (String id :
        List.of(SQL, UNICODE, "z".repeat(10_000), "%27%20OR%201%3D1", "..", " ", "no-such-order")) {
      c.add(new Case("GET " + abbreviate(id), OrderApiHandler.GET, id, null));
      c.add(new Case("cancel " + abbreviate(id), OrderApiHandler.CANCEL, id, null));
      c.add(
          new Case("prepay " + abbreviate(id), OrderApiHandler.PREPAY, id, "{\"openId\":\"o1\"}"));
    }
    for (String body :
        List.of("{", "[]", "{\"openId\":7}", "{\"openId\":\"" + SQL + "\"}", "{}", TEN_MIB)) {
      c.add(
          new Case("prepay body " + abbreviate(body), OrderApiHandler.PREPAY, "o-existing", body));
    }
    c.add(
        new Case("cancel no headers", OrderApiHandler.CANCEL, SQL, null, e -> e.setHeaders(null)));
    c.add(new Case("GET wrong method", "PUT /orders/{id}", "o-existing", null));
    c.add(new Case("unknown route", "POST /orders/{id}/pay", "o-existing", null));
    return c;
  }

  static String abbreviate(String s) {
    if (s == null) {
      return "null";
    }
    String one = s.replace('\n', ' ');
    return one.length() > 40 ? one.substring(0, 40) + "...(" + s.length() + " chars)" : one;
  }

  @Test
  void everyHostileRequestGetsA4xxAndChangesNothing() {
    List<String> report = new ArrayList<>();
    List<String> failures = new ArrayList<>();
    for (Case c : cases()) {
      List<String> db = stack.databaseState();
      List<String> redis = stack.redisState();
      APIGatewayV2HTTPResponse r =
          handler.handleRequest(event(c), new LambdaTestContext("h", 10_000));
      int status = r.getStatusCode();
      report.add(status + "  " + c.name());
      if (status < 400 || status > 499) {
        failures.add(c.name() + " answered " + status + ": " + r.getBody());
      }
      if (!db.equals(stack.databaseState()) || !redis.equals(stack.redisState())) {
        failures.add(c.name() + " changed state");
      }
    }
    System.out.println(
        "Hostile input, order-created ("
            + report.size()
            + " requests):\n"
            + String.join("\n", report));
    assertThat(failures).isEmpty();
    assertThat(report.size()).isGreaterThanOrEqualTo(50);
  }

  private static APIGatewayV2HTTPEvent event(Case c) {
    APIGatewayV2HTTPEvent e = ApiEvents.route(c.routeKey()).id(c.id()).build();
    e.setBody(
        c.body() == null
            ? null
            : new String(c.body().getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8));
    e.setIsBase64Encoded(false);
    c.tweak().accept(e);
    return e;
  }
}
