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
 * demo was notified or found by the close path, so the bill must show nothing missed: 0 flags.
 */
final class DemoReconciliation {
  private static final ObjectMapper JSON = new ObjectMapper();

  private DemoReconciliation() {}

  /** The report line and the check of the day's reconciliation. */
  record Result(String line, DemoReport.Check check) {}

  static Result run(LocalStack stack) {
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
    return result(day, response.statusCode(), response.body());
  }

  static Result result(String day, int status, String body) {
    if (status != 200) {
      String detail = "POST /admin/reconciliation answered " + status + ": " + body;
      return new Result(
          "reconciliation against the trade bill of " + day + ": " + detail,
          new DemoReport.Check("reconciliation", false, detail));
    }
    JsonNode report = read(body);
    long flags = report.path("flags").asLong(-1);
    String line =
        String.format(
            "reconciliation against the trade bill of %s: %d lines, %s, %d flags",
            day, report.path("billLines").asLong(), report.path("counts"), flags);
    String detail =
        flags == 0
            ? report.path("billLines").asLong() + " bill lines, 0 flags"
            : flags + " flagged lines: " + report.path("flagged");
    return new Result(line, new DemoReport.Check("reconciliation", flags == 0, detail));
  }

  private static JsonNode read(String body) {
    try {
      return JSON.readTree(body);
    } catch (IOException e) {
      throw new UncheckedIOException("the reconciliation report is not JSON: " + body, e);
    }
  }
}
