package io.ordertimeout.ops;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.ProfileCredentialsProvider;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain;

/**
 * {@code ./ops smoke --api <ApiUrl>}: the post-deploy check. One real order through the deployed
 * API, signed with SigV4 as the mall backend signs ({@code execute-api:Invoke}): place it, read it,
 * cancel it, read until the stream consumer has closed it USER_CANCEL. Then one unsigned POST to
 * the webhook, which must reach payment-notify and be refused by it with 401 {"code":"FAIL", ...}:
 * API Gateway's own 403 {"message":"Forbidden"} would mean the route demands IAM auth, and WeChat
 * Pay's notifications would never arrive. One line per step; the first failed step named.
 */
public final class Smoke {

  static final String NAME = "smoke";

  /** The user every smoke order belongs to: reports and queries can leave it out. */
  public static final String USER_ID = "smoke-test";

  /** Smoke order ids are {@code smoke<yyyyMMddHHmmss UTC>-<6 hex>}: 26 of out_trade_no's 32. */
  public static final String ORDER_PREFIX = "smoke";

  /**
   * The first SKU the local stack seeds (its demo catalogue); a deployed stack needs {@code --sku}.
   */
  public static final String DEFAULT_SKU = "sku-0000";

  /**
   * 300 s: an order the smoke leaves behind (it stopped after placing) times out and gives its one
   * unit of stock back within 5 minutes instead of the API's default 15.
   */
  public static final int ORDER_TIMEOUT_SECONDS = 300;

  /**
   * 90 s: the stream consumer is scheduled every minute and reads for about 66 s of its 85 s, so
   * runs overlap and a cancel is normally closed within a second; 90 s still covers a dropped run
   * and the next one a minute later.
   */
  public static final Duration DEFAULT_CLOSE_WAIT = Duration.ofSeconds(90);

  /** Reads while waiting for the close: at most 180 in 90 s, far under the API's 200/s. */
  private static final Duration POLL = Duration.ofMillis(500);

  /** How much of an unexpected answer a failure line quotes. */
  private static final int QUOTE_CHARS = 200;

  private static final Pattern API_GATEWAY_HOST =
      Pattern.compile("[a-z0-9]+\\.execute-api\\.([a-z0-9-]+)\\.amazonaws\\.com(\\.cn)?");
  private static final DateTimeFormatter ID_TIME =
      DateTimeFormatter.ofPattern("yyyyMMddHHmmss").withZone(ZoneOffset.UTC);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final SecureRandom RANDOM = new SecureRandom();

  /** Where and what: the API's base URL, its region, the SKU to order one unit of. */
  public record Settings(URI api, String region, String sku, Duration closeWait) {
    public Settings {
      if (!("https".equals(api.getScheme()) || "http".equals(api.getScheme()))
          || api.getHost() == null) {
        throw new IllegalArgumentException("--api must be an http(s) URL, was " + api);
      }
      api = URI.create(api.toString().replaceAll("/+$", ""));
    }
  }

  /** One step's line: status -1 when no answer came (connection refused, timeout). */
  public record Step(
      String name, String method, String path, int status, long millis, String problem) {
    public boolean ok() {
      return problem == null;
    }

    public String line() {
      return String.format(
          "%-4s  %-7s %-4s %-48s %4s %6d ms%s",
          ok() ? "OK" : "FAIL",
          name,
          method,
          path,
          status < 0 ? "-" : Integer.toString(status),
          millis,
          ok() ? "" : "  " + problem);
    }
  }

  /** The order the smoke placed and every step run, in order. */
  public record Report(String orderId, List<Step> steps) {
    public Report {
      steps = List.copyOf(steps);
    }

    public Optional<Step> firstFailure() {
      return steps.stream().filter(s -> !s.ok()).findFirst();
    }

    public boolean ok() {
      return firstFailure().isEmpty();
    }
  }

  /** A step that got an answer it could not accept. */
  private static final class Refused extends Exception {
    private static final long serialVersionUID = 1L;
    private final int status;

    Refused(int status, String message) {
      super(message, null, false, false);
      this.status = status;
    }
  }

  private final Settings settings;
  private final SigV4Client client;
  private final PrintStream out;

  public Smoke(Settings settings, AwsCredentialsProvider credentials, PrintStream out) {
    this.settings = settings;
    this.client = new SigV4Client(credentials.resolveCredentials(), settings.region());
    this.out = out;
  }

  /**
   * {@code ./ops smoke --api URL [--region R] [--profile P] [--sku S] [--wait SECONDS]}: 0 when
   * every step passed, 1 when one failed, 2 when it could not start (flags, region, credentials).
   */
  static int command(Flags flags, PrintStream out) {
    Smoke smoke;
    try {
      smoke = fromFlags(flags, out);
    } catch (IllegalArgumentException | SdkClientException e) {
      out.println("smoke: cannot start: " + e.getMessage());
      return 2;
    }
    return smoke.run().ok() ? 0 : 1;
  }

  /**
   * Credentials: --profile's, else the SDK's default chain (environment, system properties, the
   * AWS_PROFILE or default profile, container and instance roles), resolved once here.
   */
  private static Smoke fromFlags(Flags flags, PrintStream out) {
    String api = flags.value("api", null);
    if (api == null) {
      throw new IllegalArgumentException("--api <the stack's ApiUrl output> is required");
    }
    Optional<String> profile = Optional.ofNullable(flags.value("profile", null));
    URI uri = URI.create(api);
    Settings settings =
        new Settings(
            uri,
            region(uri, Optional.ofNullable(flags.value("region", null)), profile),
            flags.value("sku", DEFAULT_SKU),
            Duration.ofSeconds(flags.intValue("wait", (int) DEFAULT_CLOSE_WAIT.toSeconds())));
    AwsCredentialsProvider credentials =
        profile
            .<AwsCredentialsProvider>map(ProfileCredentialsProvider::create)
            .orElseGet(() -> DefaultCredentialsProvider.builder().build());
    return new Smoke(settings, credentials, out);
  }

  /**
   * The signing region: --region, else the one in an execute-api host name, else the profile's or
   * the environment's. A --region that contradicts the host would only earn a 403: refused here.
   */
  public static String region(URI api, Optional<String> flag, Optional<String> profile) {
    Matcher host = API_GATEWAY_HOST.matcher(String.valueOf(api.getHost()));
    Optional<String> fromHost = host.matches() ? Optional.of(host.group(1)) : Optional.empty();
    if (flag.isPresent() && fromHost.isPresent() && !flag.get().equals(fromHost.get())) {
      throw new IllegalArgumentException(
          "--region " + flag.get() + " but " + api.getHost() + " is in " + fromHost.get());
    }
    if (flag.isPresent() || fromHost.isPresent()) {
      return flag.orElseGet(fromHost::get);
    }
    try {
      DefaultAwsRegionProviderChain.Builder chain = DefaultAwsRegionProviderChain.builder();
      profile.ifPresent(chain::profileName);
      return chain.build().getRegion().id();
    } catch (SdkClientException e) {
      throw new IllegalArgumentException(
          "no region to sign for " + api + " (not an execute-api host name): pass --region", e);
    }
  }

  /** Runs every step, printing each as it ends, then the verdict. */
  public Report run() {
    String orderId = newOrderId();
    out.println(
        "smoke: " + settings.api() + " (region " + settings.region() + "), order " + orderId);
    List<Step> steps = new ArrayList<>();
    List<Supplier<Step>> orderSteps =
        List.of(
            () -> place(orderId),
            () -> read(orderId),
            () -> cancel(orderId),
            () -> awaitClosed(orderId));
    for (Supplier<Step> next : orderSteps) {
      Step step = report(steps, next.get());
      if (!step.ok()) {
        break; // each order step needs the one before it; the webhook does not
      }
    }
    report(steps, webhook());
    Report result = new Report(orderId, steps);
    out.println(
        result
            .firstFailure()
            .map(f -> "smoke: FAILED at " + f.name() + ": " + f.problem())
            .orElse("smoke: OK (order " + orderId + " CLOSED USER_CANCEL)"));
    return result;
  }

  private Step report(List<Step> steps, Step step) {
    steps.add(step);
    out.println(step.line());
    return step;
  }

  static String newOrderId() {
    byte[] random = new byte[3];
    RANDOM.nextBytes(random);
    return ORDER_PREFIX + ID_TIME.format(Instant.now()) + "-" + HexFormat.of().formatHex(random);
  }

  // ---- the steps ----

  private Step place(String orderId) {
    String body =
        JSON.createObjectNode()
            .put("orderId", orderId)
            .put("userId", USER_ID)
            .put("amountFen", 1)
            .put("timeoutSeconds", ORDER_TIMEOUT_SECONDS)
            .set(
                "items",
                JSON.createArrayNode()
                    .add(JSON.createObjectNode().put("skuId", settings.sku()).put("quantity", 1)))
            .toString();
    return step(
        "place",
        "POST",
        "/orders",
        body,
        true,
        r -> expectOrder(r, 201, orderId, "UNPAID", "placed"));
  }

  private Step read(String orderId) {
    return step(
        "read",
        "GET",
        "/orders/" + orderId,
        null,
        true,
        r -> expectOrder(r, 200, orderId, "UNPAID", "read"));
  }

  private Step cancel(String orderId) {
    return step(
        "cancel",
        "POST",
        "/orders/" + orderId + "/cancel",
        "{}",
        true,
        r -> expectStatus(r, 202, "202 (cancel requested)"));
  }

  /** Reads until the order is CLOSED; one line for all the reads, with the time they took. */
  private Step awaitClosed(String orderId) {
    String path = "/orders/" + orderId;
    long started = System.nanoTime();
    Instant deadline = Instant.now().plus(settings.closeWait());
    int reads = 0;
    SigV4Client.Response last = null;
    try {
      while (true) {
        last = call("GET", path, null, true);
        reads++;
        JsonNode order = expectOrder(last, 200, orderId, null, "read");
        String status = order.path("status").asText();
        if (status.equals("CLOSED")) {
          String reason = order.path("closeReason").asText();
          if (!reason.equals("USER_CANCEL")) {
            throw new Refused(
                last.status(), "CLOSED with closeReason " + reason + ", not USER_CANCEL");
          }
          return closedStep(path, last.status(), started, null);
        }
        if (Instant.now().isAfter(deadline)) {
          throw new Refused(
              last.status(),
              "still "
                  + status
                  + " after "
                  + settings.closeWait().toSeconds()
                  + " s ("
                  + reads
                  + " reads): is the stream consumer running?");
        }
        Thread.sleep(POLL.toMillis());
      }
    } catch (Refused e) {
      return closedStep(path, e.status, started, e.getMessage());
    } catch (IOException e) {
      return closedStep(path, -1, started, "no answer: " + e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return closedStep(path, last == null ? -1 : last.status(), started, "interrupted");
    }
  }

  private Step closedStep(String path, int status, long startedNanos, String problem) {
    return new Step(
        "closed", "GET", path, status, (System.nanoTime() - startedNanos) / 1_000_000, problem);
  }

  /**
   * Unsigned, with WeChat Pay's headers, a fresh timestamp and a signature that cannot verify:
   * payment-notify answers 401 {"code":"FAIL",...} before it decrypts anything or touches an order.
   */
  private Step webhook() {
    byte[] signature = new byte[256]; // an RSA-2048 signature's length, all zeros
    String body =
        "{\"id\":\"EV-"
            + newOrderId()
            + "\",\"event_type\":\"TRANSACTION.SUCCESS\",\"resource_type\":\"encrypt-resource\","
            + "\"resource\":{\"algorithm\":\"AEAD_AES_256_GCM\",\"ciphertext\":\"AAAA\","
            + "\"associated_data\":\"transaction\",\"nonce\":\"smoke0000000\"}}";
    return step(
        "webhook",
        "POST",
        "/wechatpay/notify",
        body,
        false,
        r -> {
          JsonNode answer = json(r);
          if (r.status() != 401 || !answer.path("code").isTextual() || !answer.has("message")) {
            throw new Refused(
                r.status(),
                "expected 401 {\"code\":...,\"message\":...} from payment-notify, got "
                    + r.status()
                    + " "
                    + quote(r.body())
                    + (r.status() == 403
                        ? " (API Gateway's own refusal: the route must have no IAM authorizer)"
                        : ""));
          }
          return answer;
        },
        "wechatpay-timestamp",
        Long.toString(Instant.now().getEpochSecond()),
        "wechatpay-nonce",
        newOrderId(),
        "wechatpay-serial",
        "SMOKE_NOT_A_KEY_ID",
        "wechatpay-signature",
        Base64.getEncoder().encodeToString(signature),
        "wechatpay-signature-type",
        "WECHATPAY2-SHA256-RSA2048");
  }

  // ---- calls and checks ----

  @FunctionalInterface
  private interface Check {
    JsonNode accept(SigV4Client.Response response) throws Refused;
  }

  private Step step(
      String name,
      String method,
      String path,
      String body,
      boolean sign,
      Check check,
      String... headers) {
    SigV4Client.Response response;
    try {
      response = call(method, path, body, sign, headers);
    } catch (IOException e) {
      return new Step(name, method, path, -1, 0, "no answer: " + e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Step(name, method, path, -1, 0, "interrupted");
    }
    try {
      check.accept(response);
      return new Step(name, method, path, response.status(), response.millis(), null);
    } catch (Refused e) {
      return new Step(name, method, path, e.status, response.millis(), e.getMessage());
    }
  }

  private SigV4Client.Response call(
      String method, String path, String body, boolean sign, String... headers)
      throws IOException, InterruptedException {
    return client.send(method, URI.create(settings.api() + path), body, sign, headers);
  }

  /** The answer is {@code expected} with the order's JSON, its status {@code status} if given. */
  private static JsonNode expectOrder(
      SigV4Client.Response r, int expected, String orderId, String status, String what)
      throws Refused {
    expectStatus(r, expected, expected + " with the order " + what);
    JsonNode order = json(r);
    if (!orderId.equals(order.path("orderId").asText())
        || (status != null && !status.equals(order.path("status").asText()))) {
      throw new Refused(
          r.status(),
          "expected order "
              + orderId
              + (status == null ? "" : " " + status)
              + ", got "
              + quote(r.body()));
    }
    return order;
  }

  private static JsonNode expectStatus(SigV4Client.Response r, int expected, String what)
      throws Refused {
    if (r.status() != expected) {
      throw new Refused(
          r.status(), "expected " + what + ", got " + r.status() + " " + quote(r.body()));
    }
    return json(r);
  }

  private static JsonNode json(SigV4Client.Response r) {
    try {
      return JSON.readTree(r.body() == null || r.body().isEmpty() ? "{}" : r.body());
    } catch (IOException e) {
      return JSON.createObjectNode();
    }
  }

  private static String quote(String body) {
    String b = body == null ? "" : body.strip();
    return b.length() <= QUOTE_CHARS ? b : b.substring(0, QUOTE_CHARS) + "...";
  }
}
