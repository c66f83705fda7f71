package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.PlaceOrderCommand;
import io.ordertimeout.embedded.wechat.Delivery;
import io.ordertimeout.embedded.wechat.TradeSnapshot;
import io.ordertimeout.payment.PaidTrade;
import io.ordertimeout.payment.PaymentOutcome;
import io.ordertimeout.wiring.Components;
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
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The whole local stack: the simulator settles a paid-after-close refund on its own and posts the
 * signed, encrypted refund notification to the refund's notify_url, the template's {@code POST
 * /wechatpay/refund-notify/{tenantId}} route, whose 204 follows the committed row; the simulator's
 * HTTP control (and {@code ./local wechat refund}) makes one ABNORMAL.
 */
@Tag("integration")
class LocalRefundsTest {
  private static LocalStack stack;
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @BeforeAll
  static void startStack() {
    stack =
        LocalStack.start(
            new LocalStack.Options(Main.templatePath(), "127.0.0.1", 0, 1.0), System.getenv());
    stack.simulator().setRefundDelay(Duration.ofMillis(100));
  }

  @AfterAll
  static void stopStack() {
    stack.close();
  }

  /** A default-tenant order paid at WeChat after it closed here: its refund is requested. */
  private static String refundedAfterClose() throws Exception {
    Components app = stack.app();
    String orderId = "lr" + UUID.randomUUID().toString().replace("-", "").substring(0, 20);
    sql(
        "INSERT INTO stock (tenant_id, sku_id, available, total) VALUES ('default', ?, 5, 5)",
        "sku-" + orderId);
    app.placeOrders()
        .place(
            new PlaceOrderCommand(
                orderId,
                "default",
                "u1",
                List.of(new OrderItem("sku-" + orderId, 1)),
                null,
                100,
                600));
    app.prepays().prepay("default", orderId, "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o", null);
    stack.simulator().loseNotifications(orderId, 1); // the payment's own notification: not here
    stack.simulator().pay(orderId);
    sql(
        "UPDATE orders SET prepaid_at = NULL, prepay_id = NULL,"
            + " expire_at = TIMESTAMPADD(MICROSECOND, -1000, NOW(3))"
            + " WHERE tenant_id = 'default' AND order_id = ?",
        orderId);
    assertThat(app.closer().close("default", List.of(orderId), CloseReason.TIMEOUT).closed())
        .hasSize(1);
    return orderId;
  }

  private static void payAfterClose(String orderId) {
    TradeSnapshot paid = stack.simulator().trade(orderId).orElseThrow();
    assertThat(
            stack
                .app()
                .payments()
                .apply(
                    new PaidTrade(
                        "default",
                        orderId,
                        paid.transactionId(),
                        100,
                        paid.successTime(),
                        PaidTrade.Source.CLOSE)))
        .isEqualTo(PaymentOutcome.PAID_AFTER_CLOSE);
  }

  @Test
  void theSimulatorsRefundNotificationSettlesTheRefundThroughTheTemplatesRoute() throws Exception {
    String orderId = refundedAfterClose();
    String outRefundNo = orderId + "-pac";

    payAfterClose(orderId);

    String row = awaitStatus(outRefundNo, "SUCCESS");
    assertThat(row).isEqualTo("SUCCESS|NOTIFY|SUCCESS");
    assertThat(stack.simulator().refundNotifyUrl(outRefundNo))
        .hasValue(
            stack.apiUrl().toString().replaceAll("/+$", "") + "/wechatpay/refund-notify/default");
    assertThat(deliveriesOf(orderId)).extracting(Delivery::status).containsExactly(204);
  }

  @Test
  void anAbnormalRefundMadeByTheControlIsFlaggedForAnOperator() throws Exception {
    String orderId = refundedAfterClose();
    String outRefundNo = orderId + "-pac";
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    // planned before the refund exists, as ./local wechat does it
    int exit =
        new WeChatCommand(Path.of("no-such-local-up.json"))
            .run(
                List.of(
                    "refund",
                    outRefundNo,
                    "abnormal",
                    "--sim",
                    stack.simulator().baseUrl().toString()),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    assertThat(exit).as(err.toString(StandardCharsets.UTF_8)).isZero();
    assertThat(out.toString(StandardCharsets.UTF_8))
        .containsPattern("\"planned\" ?: ?\"ABNORMAL\"");

    payAfterClose(orderId);

    assertThat(awaitStatus(outRefundNo, "ABNORMAL")).isEqualTo("ABNORMAL|NOTIFY|ABNORMAL");
    assertThat(
            sql1(
                "SELECT COUNT(*) FROM compensation_flags WHERE kind = 'REFUND_ABNORMAL'"
                    + " AND tenant_id = 'default' AND subject = ? AND resolved_at IS NULL",
                orderId))
        .isEqualTo("1");
    HttpResponse<String> control =
        HTTP.send(
            HttpRequest.newBuilder(
                    URI.create(stack.simulator().baseUrl() + "/_sim/refunds/" + outRefundNo))
                .GET()
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(control.statusCode()).isEqualTo(200);
    assertThat(control.body()).containsPattern("\"status\" ?: ?\"ABNORMAL\"");
    assertThat(deliveriesOf(orderId)).extracting(Delivery::status).containsExactly(204);
  }

  private static List<Delivery> deliveriesOf(String orderId) {
    List<Delivery> of = new ArrayList<>();
    for (Delivery d : stack.simulator().refundDeliveries()) {
      if (d.outTradeNo().equals(orderId)) {
        of.add(d);
      }
    }
    return of;
  }

  private static String awaitStatus(String outRefundNo, String status) throws Exception {
    Instant until = Instant.now().plusSeconds(20);
    String row = "";
    while (Instant.now().isBefore(until)) {
      row =
          sql1(
              "SELECT CONCAT_WS('|', r.status, r.status_source, p.refund_status) FROM refunds r"
                  + " JOIN paid_after_close p ON p.tenant_id = r.tenant_id"
                  + " AND p.out_refund_no = r.out_refund_no WHERE r.out_refund_no = ?",
              outRefundNo);
      if (row != null && row.startsWith(status + "|")) {
        return row;
      }
      Thread.sleep(50);
    }
    return row;
  }

  private static void sql(String statement, String... args) throws Exception {
    try (Connection c = stack.app().dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement(statement)) {
      for (int i = 0; i < args.length; i++) {
        ps.setString(i + 1, args[i]);
      }
      ps.executeUpdate();
    }
  }

  private static String sql1(String query, String... args) throws Exception {
    try (Connection c = stack.app().dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement(query)) {
      for (int i = 0; i < args.length; i++) {
        ps.setString(i + 1, args[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }
}
