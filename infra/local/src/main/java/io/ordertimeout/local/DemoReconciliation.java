package io.ordertimeout.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.LocalDate;
import java.time.ZoneId;

/**
 * The demo's last step: the day's reconciliation against the simulator's trade bill, run as an
 * operator would (POST /admin/reconciliation), once every order has settled. Every payment of the
 * demo was notified or found by the close path but one, whose notifications were all lost: the bill
 * must apply that one (its order PAID, its line APPLIED) and flag nothing.
 */
final class DemoReconciliation {
  private static final ObjectMapper JSON = new ObjectMapper();

  private DemoReconciliation() {}

  /** The report line and the check of the day's reconciliation. */
  record Result(String line, DemoReport.Check check) {}

  /**
   * @param lostOrderId the order paid at WeChat whose notifications were all lost
   */
  static Result run(LocalStack stack, String lostOrderId) {
    String day = LocalDate.now(ZoneId.of("Asia/Shanghai")).toString();
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(stack.apiUrl() + "/admin/reconciliation"))
            .timeout(Duration.ofSeconds(60))
            .header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString("{\"date\":\"" + day + "\"}"))
            .build();
    HttpResponse<String> response;
    try {
      response =
          HttpClient.newBuilder()
              .version(HttpClient.Version.HTTP_1_1)
              .build()
              .send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new UncheckedIOException("POST /admin/reconciliation failed", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("POST /admin/reconciliation interrupted", e);
    }
    return result(
        day, response.statusCode(), response.body(), lostOrderId, status(stack, lostOrderId));
  }

  /** The order's status in the database, or "absent". */
  private static String status(LocalStack stack, String orderId) {
    try (java.sql.Connection c = stack.app().dataSource().getConnection();
        java.sql.PreparedStatement ps =
            c.prepareStatement("SELECT status FROM orders WHERE order_id = ?")) {
      ps.setString(1, orderId);
      try (java.sql.ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : "absent";
      }
    } catch (java.sql.SQLException e) {
      throw new io.ordertimeout.mysql.DataAccessException(
          "could not read order " + orderId, e, false);
    }
  }

  static Result result(
      String day, int status, String body, String lostOrderId, String lostOrderStatus) {
    if (status != 200) {
      String detail = "POST /admin/reconciliation answered " + status + ": " + body;
      return new Result(
          "reconciliation against the trade bill of " + day + ": " + detail,
          new DemoReport.Check("reconciliation", false, detail));
    }
    JsonNode report = read(body);
    long flags = report.path("flags").asLong(-1);
    long applied = report.path("counts").path("APPLIED").asLong(0);
    boolean found = applied >= 1 && "PAID".equals(lostOrderStatus);
    String line =
        String.format(
            "reconciliation against the trade bill of %s: %d lines, %s, %d flags;"
                + " lost notification of %s: %s",
            day,
            report.path("billLines").asLong(),
            report.path("counts"),
            flags,
            lostOrderId,
            found ? "found by the bill, order PAID" : "order " + lostOrderStatus);
    String detail =
        flags != 0
            ? flags + " flagged lines: " + report.path("flagged")
            : !found
                ? "the lost notification's order is "
                    + lostOrderStatus
                    + " and the bill applied "
                    + applied
                    + " lines"
                : report.path("billLines").asLong()
                    + " bill lines, 0 flags, the lost notification applied";
    return new Result(line, new DemoReport.Check("reconciliation", flags == 0 && found, detail));
  }

  private static JsonNode read(String body) {
    try {
      return JSON.readTree(body);
    } catch (IOException e) {
      throw new UncheckedIOException("the reconciliation report is not JSON: " + body, e);
    }
  }
}
