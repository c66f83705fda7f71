package io.ordertimeout.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ordertimeout.ops.CommandWords.Failure;
import io.ordertimeout.ops.CommandWords.UsageException;
import io.ordertimeout.ops.LocalEndpoints;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code ./local tenant add <tenantId> [--sku SKU=QTY ...] | list}: onboards a tenant on the
 * running {@code ./local up} (the API address it recorded in {@link LocalEndpoints}), which does
 * the work itself ({@link LocalTenants}): the tenant row, its stock, its merchant account; then
 * prints its notify URL and the OTC_TENANT_PRINCIPALS mapping that lets the local caller act for
 * it. The input is checked whole first: bad input is exit 2 and nothing is sent.
 *
 * <p>Exit 0 when the tenant is onboarded, whether this run added anything or it already was (the
 * last line says which); 1 when the stack refused or cannot be reached; 2 on a usage error.
 */
final class TenantCommand {

  static final String NAME = "tenant";

  private static final ObjectMapper JSON = new ObjectMapper();

  private final Path endpointsFile;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /** {@code endpointsFile}: where {@code ./local up} records the API's address. */
  TenantCommand(Path endpointsFile) {
    this.endpointsFile = endpointsFile;
  }

  int run(List<String> words, PrintStream out, PrintStream err) {
    try {
      if (words.isEmpty()) {
        usage(err);
        return 2;
      }
      List<String> rest = new ArrayList<>(words.subList(1, words.size()));
      boolean json = rest.remove("--json");
      switch (words.get(0)) {
        case "help" -> usage(out);
        case "add" -> {
          TenantSpec spec;
          try {
            spec = TenantSpec.fromWords(rest);
          } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
          }
          JsonNode answer = send("POST", spec.toJson().toString());
          if (json) {
            out.println(answer.toPrettyString());
          } else {
            printAdded(answer, out);
          }
        }
        case "list" -> {
          if (!rest.isEmpty()) {
            throw new UsageException("list takes no arguments but --json, got " + rest);
          }
          JsonNode answer = send("GET", null);
          if (json) {
            out.println(answer.toPrettyString());
          } else {
            printList(answer, out);
          }
        }
        default -> throw new UsageException("unknown operation '" + words.get(0) + "'");
      }
      return 0;
    } catch (UsageException e) {
      err.println("./local tenant: " + e.getMessage());
      usage(err);
      return 2;
    } catch (Failure e) {
      err.println("./local tenant: " + e.getMessage());
      return 1;
    }
  }

  private static void printAdded(JsonNode a, PrintStream out) {
    String tenant = a.path("tenantId").asText();
    out.printf(
        "tenant    %s: %s%n",
        tenant,
        a.path("tenantAdded").asBoolean() ? "added (tenants row)" : "already there, unchanged");
    for (JsonNode s : a.path("stock")) {
      String now =
          "available "
              + s.path("available").asLong()
              + ", reserved "
              + s.path("reserved").asLong()
              + ", sold "
              + s.path("sold").asLong();
      if (s.path("added").asBoolean()) {
        out.printf("stock     %s: added, %s%n", s.path("skuId").asText(), now);
      } else {
        out.printf(
            "stock     %s: already there, unchanged: %s (asked %d; stock is set only when a SKU is"
                + " added)%n",
            s.path("skuId").asText(), now, s.path("asked").asLong());
      }
    }
    out.printf(
        "merchant  %s: mchid %s, %s (the simulator has one merchant account, which every tenant"
            + " shares, as a single-merchant secret does on AWS)%n",
        tenant,
        a.path("mchid").asText(),
        a.path("merchantAdded").asBoolean() ? "added" : "already there, unchanged");
    out.printf("notify    %s%n", a.path("notifyUrl").asText());
    if (a.path("callerMayAct").asBoolean()) {
      out.printf(
          "IAM       this stack's caller %s may act for %s: send X-Tenant-Id: %s%n",
          a.path("caller").asText(), tenant, tenant);
    } else {
      out.printf(
          "IAM       this stack's caller %s may NOT act for %s: OTC_TENANT_PRINCIPALS is read at"
              + " start; restart with the line below (a restart starts an empty schema: run this"
              + " command again then)%n",
          a.path("caller").asText(), tenant);
    }
    out.printf("mapping   OTC_TENANT_PRINCIPALS='%s'%n", a.path("principals").asText());
    out.println(
        a.path("changed").asBoolean()
            ? "done: " + tenant + " onboarded"
            : "nothing changed: " + tenant + " was onboarded already");
  }

  private static void printList(JsonNode a, PrintStream out) {
    out.printf(
        "%-32s %6s %14s %-11s %-14s %s%n",
        "tenant", "skus", "available", "mchid", "caller may act", "notify URL");
    for (JsonNode t : a.path("tenants")) {
      out.printf(
          "%-32s %6d %14d %-11s %-14s %s%n",
          t.path("tenantId").asText(),
          t.path("skus").asLong(),
          t.path("available").asLong(),
          t.path("mchid").isNull() ? "none" : t.path("mchid").asText(),
          t.path("callerMayAct").asBoolean() ? "yes" : "no",
          t.path("notifyUrl").isNull() ? "-" : t.path("notifyUrl").asText());
    }
  }

  // ---- the stack ----

  private JsonNode send(String method, String body) {
    URI url = URI.create(localApi() + LocalTenants.PATH);
    HttpRequest request =
        HttpRequest.newBuilder(url)
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/json")
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body))
            .build();
    HttpResponse<String> response;
    try {
      response = http.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new Failure("cannot reach the local stack at " + url + " (" + e + ")");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new Failure("interrupted while calling " + method + " " + url);
    }
    JsonNode answer;
    try {
      answer = JSON.readTree(response.body());
    } catch (IOException e) {
      throw new Failure(method + " " + url + ": " + response.statusCode() + " " + response.body());
    }
    if (response.statusCode() != 200) {
      JsonNode error = answer == null ? null : answer.path("error");
      String message =
          error == null || error.isMissingNode()
              ? response.body().strip()
              : error.path("code").asText() + ": " + error.path("message").asText();
      if (response.statusCode() == 404) {
        message += " (is this ./local up older than ./local tenant? restart it)";
      }
      throw new Failure(method + " " + url + ": " + response.statusCode() + " " + message);
    }
    return answer;
  }

  /** What ./local up recorded, if that process still runs. */
  private URI localApi() {
    try {
      return URI.create(
          LocalEndpoints.running(endpointsFile, " first", "")
              .api()
              .toString()
              .replaceAll("/+$", ""));
    } catch (IllegalStateException e) {
      throw new Failure(e.getMessage());
    }
  }

  private static void usage(PrintStream out) {
    out.println("usage: ./local tenant <operation> [--json]");
    out.println(
        "  add <tenantId> [--sku SKU=QTY ...]   onboard a tenant on the running ./local up: its"
            + " tenants row, the stock of its SKUs, a merchant account; prints its notify URL and"
            + " IAM mapping (twice = once)");
    out.println(
        "  list                                 every tenant: SKUs, available units, merchant,"
            + " whether this stack's caller may act for it");
    out.println(
        "  tenant ids: 1-32 of [a-z0-9_-]; SKU ids: 1-64 of [0-9A-Za-z_.:-]; QTY: 0.."
            + TenantSpec.MAX_QUANTITY);
    out.println("The stack is the one ./local up recorded in " + LocalEndpoints.FILE + ".");
  }
}
