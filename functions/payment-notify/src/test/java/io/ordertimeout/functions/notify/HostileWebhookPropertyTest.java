package io.ordertimeout.functions.notify;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.amazonaws.services.lambda.runtime.tests.EventLoader;
import com.fasterxml.jackson.databind.JsonNode;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.PlaceOrderCommand;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.wechat.SignedNotification;
import io.ordertimeout.testing.LambdaTestContext;
import io.ordertimeout.testing.LogLines;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.testing.WeChatStackFixture;
import io.ordertimeout.util.Json;
import io.ordertimeout.wechat.GatewaySettings;
import io.ordertimeout.wechat.MerchantCredentials;
import io.ordertimeout.wechat.StaticMerchantDirectory;
import io.ordertimeout.wechat.SubMerchant;
import io.ordertimeout.wechat.WeChatPayGateway;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Property: whatever an unauthenticated caller sends to any webhook route (the default tenant's, a
 * tenant's, a service provider's, a tenant's refund route), while MariaDB and Redis are up, the
 * answer is a 4xx with {@code {"code":"FAIL"}}, nothing is written (no table's checksum and no
 * Redis key of the stack changes) and every log line is bounded and free of the body, the nonce and
 * the signature.
 *
 * <p>Requests are drawn from a {@link SplittableRandom} whose seed is printed (rerun one with
 * {@code -Dotc.webhook.seed=<seed>}; {@code -Dotc.webhook.tries=<n>} per route, 300 by default):
 * headers missing, in two casings with two values, huge, in other scripts, numbers out of every
 * range; bodies of random bytes, JSON-ish, huge, truncated, and genuine-looking notifications
 * signed with a key that is not WeChat's. None carries a valid signature: each starts from a forged
 * one or spoils a genuine one in a part the signature covers, and a draw that puts the spoiled part
 * back (a fresh timestamp equal to the signed one, say) is set aside and drawn again. A failing
 * request is shrunk (headers dropped, values and body halved) while it still fails, and reported
 * with the seed.
 */
@Tag("integration")
class HostileWebhookPropertyTest extends WeChatStackFixture {
  static final String EVENT = "../../events/payment-notify-wechat-success.json";
  static final int TRIES = Integer.getInteger("otc.webhook.tries", 300);
  static final long SEED = Long.getLong("otc.webhook.seed", System.nanoTime());

  /** Generous: a refusal line is about 500 characters; a body or a header would make it larger. */
  static final int MAX_LOG_LINE = 2048;

  static final int MAX_LINES_PER_REQUEST = 4;
  static final int FULL_CHECK_EVERY = 25;
  private static final APIGatewayV2HTTPEvent SAMPLE = EventLoader.loadApiGatewayHttpEvent(EVENT);
  static final List<String> WECHATPAY =
      List.of(
          "Wechatpay-Timestamp",
          "Wechatpay-Nonce",
          "Wechatpay-Serial",
          "Wechatpay-Signature",
          "Wechatpay-Signature-Type");

  /** The simulator lives for the class: each test pays an order of its own. */
  private static final java.util.concurrent.atomic.AtomicInteger ORDERS =
      new java.util.concurrent.atomic.AtomicInteger();

  private PaymentNotifyHandler handler;
  private String checksum;
  private String orderId;
  private SignedNotification genuine;

  /** A paid order of shop-p, a sub-merchant of the simulator as a service provider. */
  private String providerOrderId;

  private SignedNotification genuineProvider;

  static final String SHOP_P = "shop-p";
  static final String SUB_P = "1900000301";
  private PrivateKey foreignKey;

  @Override
  protected TestStack newStack() {
    wechat.subMerchants().register(SUB_P, null);
    MerchantCredentials direct = TestStack.credentialsFor(wechat);
    MerchantCredentials sub =
        new MerchantCredentials(
            direct.mchid(),
            direct.appid(),
            direct.merchantSerialNumber(),
            direct.privateKeyPem(),
            direct.apiV3Key(),
            direct.wechatPayPublicKeyId(),
            direct.wechatPayPublicKeyPem(),
            direct.notifyUrl(),
            new SubMerchant(SUB_P, null));
    return TestStack.withOverrides(
        "hostile-property",
        Map.of(),
        new WeChatPayGateway(
            new StaticMerchantDirectory(Map.of(TenantIds.DEFAULT, direct, SHOP_P, sub)),
            Clock.systemUTC(),
            GatewaySettings.production().withBaseUrl(wechat.baseUrl())));
  }

  @BeforeEach
  void setUp() throws Exception {
    stack.seedSku("sku-tea", 10);
    handler = new PaymentNotifyHandler(stack.app().paymentWebhook());
    orderId = "prop-paid-" + ORDERS.incrementAndGet();
    stack.place(orderId, "u1", 600, null, new OrderItem("sku-tea", 1));
    stack.app().prepays().prepay(TenantIds.DEFAULT, orderId, OPEN_ID, null);
    wechat.pay(orderId); // paid at WeChat: a genuine notification would mark it PAID
    genuine = wechat.notification(orderId).build();
    stack.app().tenants().onboard(SHOP_P);
    stack.update(
        "INSERT INTO stock (sku_id, tenant_id, available, total) VALUES ('sku-p', ?, 10, 10)",
        SHOP_P);
    providerOrderId = "prop-sub-" + ORDERS.get();
    stack
        .app()
        .placeOrders()
        .place(
            new PlaceOrderCommand(
                providerOrderId, SHOP_P, "u1", List.of(new OrderItem("sku-p", 1)), null, 100, 600));
    stack.app().prepays().prepay(SHOP_P, providerOrderId, OPEN_ID, null);
    wechat.subMerchants().pay(SUB_P, providerOrderId);
    genuineProvider = wechat.subMerchants().notification(SUB_P, providerOrderId).build();
    KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
    generator.initialize(2048);
    foreignKey = generator.generateKeyPair().getPrivate();
  }

  /**
   * One request: the route ("default", "tenant", "provider" or "refund"), its path parameter (a
   * tenant id or an spMchid; null for the default route), headers, body.
   */
  record Case(
      String route, String tenantId, Map<String, String> headers, String body, boolean base64) {
    String describe() {
      StringBuilder out = new StringBuilder();
      out.append(
              switch (route) {
                case "tenant" -> "POST /wechatpay/notify/{tenantId} tenantId=" + show(tenantId);
                case "refund" ->
                    "POST /wechatpay/refund-notify/{tenantId} tenantId=" + show(tenantId);
                case "provider" ->
                    "POST /wechatpay/notify/provider/{spMchid} spMchid=" + show(tenantId);
                default -> "POST /wechatpay/notify";
              })
          .append("\n  headers:");
      headers.forEach((k, v) -> out.append("\n    ").append(show(k)).append(": ").append(show(v)));
      out.append("\n  base64: ").append(base64).append("\n  body: ").append(show(body));
      return out.toString();
    }

    private static String show(String s) {
      if (s == null) {
        return "null";
      }
      String cut = s.length() > 160 ? s.substring(0, 160) + "...(" + s.length() + " chars)" : s;
      return Json.write(cut);
    }
  }

  @ParameterizedTest(name = "{0} route")
  @ValueSource(strings = {"default", "tenant", "provider", "refund"})
  void anyUnauthenticatedRequestIs4xxWritesNothingAndLogsBoundedLines(String route) {
    long seed = SEED ^ route.hashCode();
    System.out.printf(
        "HostileWebhookPropertyTest %s route: seed %d, %d tries (rerun: -Dotc.webhook.seed=%d)%n",
        route, SEED, TRIES, SEED);
    long started = System.nanoTime();
    SplittableRandom random = new SplittableRandom(seed);
    String full = fullState();
    List<Case> batch = new ArrayList<>();
    int genuineDrawn = 0;
    for (int i = 0; i < TRIES; i++) {
      Case c = generate(random, route);
      while (signedByWeChat(c)) { // a spoiled part drawn back to its genuine value: not hostile
        genuineDrawn++;
        c = generate(random, route);
      }
      batch.add(c);
      String failure = check(c, this::quickState);
      if (failure != null) {
        report(route, i, failure, shrink(c));
      }
      if (batch.size() == FULL_CHECK_EVERY || i == TRIES - 1) {
        if (!fullState().equals(full)) {
          Case culprit = culprit(batch);
          report(route, i, "a write in one of the last " + batch.size() + " tries", culprit);
        }
        batch.clear();
      }
    }
    System.out.printf(
        "HostileWebhookPropertyTest %s route: %d tries in %d ms (%d genuine draws set aside)%n",
        route, TRIES, (System.nanoTime() - started) / 1_000_000, genuineDrawn);
  }

  /**
   * The filter that sets authentic draws aside knows WeChat's signature when it sees one, in any
   * casing and base64 too, and nothing spoiled; the genuine request is accepted, as it must be.
   */
  @Test
  void aDrawThatPutsTheSignedPartsBackIsAuthenticAndSetAside() {
    Map<String, String> headers = new LinkedHashMap<>();
    genuine.headers().forEach((k, v) -> headers.put(k.toUpperCase(Locale.ROOT), v));
    headers.put("wechatpay-timestamp", "1"); // a second casing, spoiled: the other one verifies
    Case authentic = new Case("default", null, headers, genuine.body(), false);
    String base64 =
        Base64.getEncoder().encodeToString(genuine.body().getBytes(StandardCharsets.UTF_8));
    assertThat(signedByWeChat(authentic)).isTrue();
    assertThat(signedByWeChat(new Case("default", null, headers, base64, true))).isTrue();
    SplittableRandom random = new SplittableRandom(SEED);
    for (int i = 0; i < 40; i++) {
      SignedNotification spoiled = base(random, false);
      assertThat(
              signedByWeChat(new Case("default", null, spoiled.headers(), spoiled.body(), false)))
          .as("spoiled draw %d", i)
          .isFalse();
    }
    Map<String, String> plain = new LinkedHashMap<>(genuine.headers());
    APIGatewayV2HTTPResponse accepted =
        handler.handleRequest(
            event(new Case("default", null, plain, genuine.body(), false)),
            new LambdaTestContext("payment-notify", 10_000));
    assertThat(accepted.getStatusCode()).isEqualTo(204);
    assertThat(stack.dump("SELECT status FROM orders WHERE order_id = '" + orderId + "'"))
        .containsExactly("PAID|");
  }

  private void report(String route, int attempt, String failure, Case small) {
    fail(
        "seed %d, try %d of the %s route: %s%nminimized request:%n%s%nfails with: %s",
        SEED, attempt, route, failure, small.describe(), check(small, this::fullState));
  }

  /** The batch's request that writes when replayed alone (the first of them if none does). */
  private Case culprit(List<Case> batch) {
    for (Case c : batch) {
      if (check(c, this::fullState) != null) {
        return shrink(c);
      }
    }
    return batch.get(0);
  }

  /**
   * Null if the request is refused as it must be; else what went wrong.
   *
   * @param state what must not change: {@link #quickState()} per try, {@link #fullState()} for the
   *     batch and while shrinking
   */
  private String check(Case c, java.util.function.Supplier<String> state) {
    String before = state.get();
    APIGatewayV2HTTPResponse response;
    List<JsonNode> lines;
    APIGatewayV2HTTPEvent ev = event(c);
    try (LogLines log = LogLines.capture()) {
      try {
        response = handler.handleRequest(ev, new LambdaTestContext("payment-notify", 10_000));
      } catch (RuntimeException e) {
        return "threw " + e;
      }
      lines = log.json();
    }
    int status = response.getStatusCode();
    if (status < 400 || status > 499) {
      return "status " + status + " " + response.getBody();
    }
    String code = json(response.getBody()).path("code").asText();
    if (!"FAIL".equals(code)) {
      return "status " + status + " without code FAIL: " + response.getBody();
    }
    String after = state.get();
    if (!after.equals(before)) {
      return "status " + status + " but the stack changed:\n" + before + "\n->\n" + after;
    }
    return logFailure(c, lines);
  }

  private String logFailure(Case c, List<JsonNode> lines) {
    if (lines.size() > MAX_LINES_PER_REQUEST) {
      return lines.size() + " log lines for one request: " + lines;
    }
    List<String> secrets = new ArrayList<>();
    // logged on purpose: the serial sent and the tenant's key id, which an operator needs when
    // WeChat rotates its key (a nonce or signature copied from them is no secret of the caller's)
    List<String> serials =
        new ArrayList<>(
            List.of(
                genuine.header("Wechatpay-Serial"), genuineProvider.header("Wechatpay-Serial")));
    secrets.add(c.body());
    for (Map.Entry<String, String> h : c.headers().entrySet()) {
      String name = h.getKey() == null ? "" : h.getKey().toLowerCase(Locale.ROOT);
      if (name.equals("wechatpay-nonce") || name.equals("wechatpay-signature")) {
        secrets.add(h.getValue());
      } else if (name.equals("wechatpay-serial")) {
        serials.add(h.getValue());
      }
    }
    for (JsonNode line : lines) {
      String text = line.toString();
      if (text.length() > MAX_LOG_LINE) {
        return "a log line of " + text.length() + " characters: " + text.substring(0, 300);
      }
      String content = line.path("message").asText() + "\n" + line.path("error").asText();
      for (String secret : secrets) {
        String sample = sample(secret);
        if (sample != null
            && content.contains(sample)
            && serials.stream().noneMatch(v -> v != null && v.contains(sample))) {
          return "a log line quotes the body, nonce or signature: " + text;
        }
      }
    }
    return null;
  }

  /** 24 characters from the middle of a value long enough to be recognised, else null. */
  private static String sample(String value) {
    if (value == null || value.strip().length() < 32) {
      return null;
    }
    int from = value.length() / 2 - 12;
    return value.substring(from, from + 24);
  }

  /**
   * Every table's checksum and every Redis key of the stack with its type and size: about 12 ms, so
   * taken every {@link #FULL_CHECK_EVERY} tries.
   */
  private String fullState() {
    if (checksum == null) {
      List<String> tables =
          stack.dump(
              "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()"
                  + " AND table_type = 'BASE TABLE' ORDER BY table_name");
      checksum =
          "CHECKSUM TABLE "
              + String.join(
                  ", ", tables.stream().map(t -> "`" + t.replace("|", "") + "`").toList());
    }
    return String.join("\n", stack.dump(checksum)) + "\n" + quickState();
  }

  /** The orders (one UPDATE away from PAID) and every Redis key of the stack: about 2 ms. */
  private String quickState() {
    return String.join("\n", stack.dump("SELECT * FROM orders ORDER BY 1, 2"))
        + "\n"
        + String.join("\n", stack.redisState());
  }

  // ---- generation ------------------------------------------------------------------------

  private Case generate(SplittableRandom r, String route) {
    SignedNotification base = base(r, route.equals("provider"));
    Map<String, String> headers = new LinkedHashMap<>();
    if (r.nextInt(10) > 0) {
      headers.put(
          "content-type",
          pick(r, "application/json", "text/plain", "", "application/json; charset=gbk"));
    }
    for (String name : WECHATPAY) {
      int roll = r.nextInt(100);
      String value = roll < 55 ? base.header(name) : roll < 65 ? null : headerValue(r, name, base);
      if (value != null || r.nextInt(4) == 0) {
        headers.put(casing(r, name), value);
      }
      if (r.nextInt(12) == 0) { // the same header again in another casing
        headers.put(casing(r, name), r.nextBoolean() ? value : headerValue(r, name, base));
      }
    }
    for (int extra = r.nextInt(3); extra > 0; extra--) {
      headers.put(randomText(r, 1 + r.nextInt(40)), randomText(r, r.nextInt(200)));
    }
    String[] body = body(r, base);
    if (r.nextInt(50) == 0) {
      headers.put(null, "a header without a name");
    }
    String param =
        switch (route) {
          case "tenant", "refund" -> tenantId(r);
          case "provider" -> spMchid(r);
          default -> null;
        };
    return new Case(route, param, headers, body[0], body[1] != null);
  }

  /**
   * What the request starts from: a notification of the paid order signed with a key that is not
   * WeChat's, or the genuine one with its body, timestamp or nonce changed after signing.
   */
  private SignedNotification base(SplittableRandom r, boolean provider) {
    SignedNotification genuine = provider ? genuineProvider : this.genuine;
    switch (r.nextInt(provider ? 5 : 4)) {
      case 0:
        return genuine.withBody(genuine.body() + " ");
      case 1:
        return genuine.withHeader(
            "Wechatpay-Timestamp",
            String.valueOf(
                Long.parseLong(genuine.header("Wechatpay-Timestamp")) + 1 + r.nextInt(60)));
      case 2:
        return genuine.withHeader("Wechatpay-Nonce", genuine.header("Wechatpay-Nonce") + "x");
      case 3:
        return provider
            ? wechat
                .subMerchants()
                .notification(SUB_P, providerOrderId)
                .signedWith(foreignKey)
                .build()
            : wechat.notification(orderId).signedWith(foreignKey).build();
      default:
        // signed by a stranger, naming another sub-merchant of the provider: the routing field
        return wechat
            .subMerchants()
            .notificationOf(
                wechat
                    .subMerchants()
                    .transaction(SUB_P, providerOrderId)
                    .put("sub_mchid", pick(r, "1900000302", "", "1900000109", SUB_P + "0")))
            .signedWith(foreignKey)
            .build();
    }
  }

  private static String headerValue(SplittableRandom r, String name, SignedNotification base) {
    long now = Instant.now().getEpochSecond();
    switch (r.nextInt(name.equals("Wechatpay-Timestamp") ? 12 : 8)) {
      case 0:
        return pick(r, "", " ", "\t", "\u0000");
      case 1:
        return "x".repeat(1 + r.nextInt(r.nextBoolean() ? 2048 : 70_000));
      case 2:
        return randomText(r, 1 + r.nextInt(300));
      case 3:
        return Base64.getEncoder().encodeToString(randomBytes(r, r.nextInt(700)));
      case 4:
        return base.header(pick(r, WECHATPAY.toArray(new String[0])));
      case 5:
        return base.header(name) + randomText(r, 1 + r.nextInt(4));
      case 6:
        String v = base.header(name);
        return v == null || v.isEmpty() ? "" : v.substring(0, r.nextInt(v.length()));
      case 7:
        return String.valueOf(r.nextLong());
      case 8:
        return pick(
            r,
            "99999999999999999",
            "-99999999999999999",
            String.valueOf(Long.MAX_VALUE),
            String.valueOf(Long.MIN_VALUE),
            "-1",
            "0",
            "999999999999",
            "1000000000000",
            "00000000000" + now,
            "+" + now,
            now + ".5",
            "1e9",
            "0x" + Long.toHexString(now),
            now + "," + now);
      case 9:
        return digitsOf(now, pick(r, "\u0660", "\uff10", "\u0966", "\u09e6")); // other scripts
      case 10:
        return String.valueOf(now + r.nextInt(-1_000_000, 1_000_000));
      default:
        return String.valueOf(now - r.nextInt(0, 250)); // fresh: reaches the key checks
    }
  }

  /** The body and, when the request flags it base64, a non-null second element. */
  private static String[] body(SplittableRandom r, SignedNotification base) {
    String b = base.body();
    switch (r.nextInt(12)) {
      case 0:
        return new String[] {pick(r, null, "", " ", "\n\t"), null};
      case 1:
        return new String[] {
          Base64.getEncoder().encodeToString(randomBytes(r, r.nextInt(20_000))), "b64"
        };
      case 2:
        return new String[] {
          new String(randomBytes(r, r.nextInt(4096)), StandardCharsets.ISO_8859_1), null
        };
      case 3:
        return new String[] {randomText(r, r.nextInt(5000)), null};
      case 4:
        return new String[] {jsonish(r, 4), null};
      case 5:
        return new String[] {b.substring(0, r.nextInt(b.length())), null};
      case 6:
        int target = 16 * 1024 - 3 + r.nextInt(7); // around the cap
        return new String[] {pad(b, target), null};
      case 7:
        return new String[] {pad(b, 20_000 + r.nextInt(300_000)), null};
      case 8:
        return new String[] {pick(r, "%%% not base64 %%%", "YQ", "====", b), "b64"};
      case 9:
        return new String[] {
          Base64.getEncoder().encodeToString(b.getBytes(StandardCharsets.UTF_8)), "b64"
        };
      default:
        return new String[] {b, null}; // valid JSON, signature not WeChat's or not over it
    }
  }

  private static String pad(String body, int bytes) {
    int missing = bytes - body.getBytes(StandardCharsets.UTF_8).length - 10;
    return missing <= 0
        ? body
        : body.substring(0, body.length() - 1) + ",\"pad\":\"" + "p".repeat(missing) + "\"}";
  }

  private static String jsonish(SplittableRandom r, int depth) {
    switch (depth <= 0 ? r.nextInt(4) : r.nextInt(7)) {
      case 0:
        return Json.write(Json.MAPPER.getNodeFactory().textNode(randomText(r, r.nextInt(30))));
      case 1:
        return String.valueOf(r.nextBoolean() ? r.nextLong() : r.nextDouble() * 1e300);
      case 2:
        return pick(r, "null", "true", "false", "{", "[", "\"", "}", "1e99999");
      case 3:
        return "\""
            + pick(r, "TRANSACTION.SUCCESS", "AEAD_AES_256_GCM", "transaction", "\\ud800")
            + "\"";
      case 4:
        StringBuilder a = new StringBuilder("[");
        for (int i = r.nextInt(4); i > 0; i--) {
          a.append(jsonish(r, depth - 1)).append(i > 1 ? "," : "");
        }
        return a.append(r.nextInt(10) == 0 ? "" : "]").toString();
      default:
        StringBuilder o = new StringBuilder("{");
        String[] keys = {
          "id",
          "event_type",
          "resource",
          "algorithm",
          "ciphertext",
          "nonce",
          "associated_data",
          "create_time"
        };
        for (int i = r.nextInt(5); i > 0; i--) {
          o.append('"').append(pick(r, keys)).append("\":").append(jsonish(r, depth - 1));
          o.append(i > 1 ? "," : "");
        }
        return o.append(r.nextInt(10) == 0 ? "" : "}").toString();
    }
  }

  private static String tenantId(SplittableRandom r) {
    switch (r.nextInt(6)) {
      case 0:
      case 1:
        return TenantIds.DEFAULT;
      case 2:
        return "shop-" + Integer.toString(r.nextInt(1 << 20), 36); // well-formed, no keys here
      case 3:
        return pick(r, "", "..", "../admin", "SHOP-A", "a".repeat(33), "商店", "a b", null);
      default:
        return randomText(r, 1 + r.nextInt(40));
    }
  }

  private static String spMchid(SplittableRandom r) {
    switch (r.nextInt(6)) {
      case 0:
      case 1:
      case 2:
        return simulatorOf(HostileWebhookPropertyTest.class)
            .mchid(); // the provider: reaches its keys
      case 3:
        return String.valueOf(1_900_000_000L + r.nextInt(1_000_000)); // digits, no provider here
      case 4:
        return pick(r, "", "..", "1".repeat(33), "\uff11\uff19", "19 00", "-1", "0x19", null);
      default:
        return randomText(r, 1 + r.nextInt(40));
    }
  }

  private static String casing(SplittableRandom r, String name) {
    switch (r.nextInt(4)) {
      case 0:
        return name;
      case 1:
        return name.toUpperCase(Locale.ROOT);
      case 2:
        StringBuilder mixed = new StringBuilder(name.length());
        for (char c : name.toCharArray()) {
          mixed.append(r.nextBoolean() ? Character.toUpperCase(c) : Character.toLowerCase(c));
        }
        return mixed.toString();
      default:
        return name.toLowerCase(Locale.ROOT); // as API Gateway sends them
    }
  }

  private static String digitsOf(long value, String zero) {
    StringBuilder out = new StringBuilder();
    for (char c : Long.toString(value).toCharArray()) {
      out.append((char) (zero.charAt(0) + (c - '0')));
    }
    return out.toString();
  }

  /** Code points from every plane: ASCII, controls, CJK, RTL marks, emoji, lone surrogates. */
  private static String randomText(SplittableRandom r, int length) {
    StringBuilder out = new StringBuilder(length);
    while (out.length() < length) {
      switch (r.nextInt(6)) {
        case 0:
          out.append((char) r.nextInt(0, 0x20));
          break;
        case 1:
          out.append((char) r.nextInt(0x4e00, 0x9fff));
          break;
        case 2:
          out.appendCodePoint(r.nextInt(0x1f300, 0x1faff));
          break;
        case 3:
          out.append(
              pick(r, "\u202e", "\ufeff", "\ud800", "\udfff", "'", "\"", "\\", "%00", "${jndi:x}"));
          break;
        default:
          out.append((char) r.nextInt(0x20, 0x7f));
      }
    }
    return out.substring(0, length);
  }

  private static byte[] randomBytes(SplittableRandom r, int n) {
    byte[] bytes = new byte[n];
    for (int i = 0; i < n; i++) {
      bytes[i] = (byte) r.nextInt(256);
    }
    return bytes;
  }

  @SafeVarargs
  private static <T> T pick(SplittableRandom r, T... options) {
    return options[r.nextInt(options.length)];
  }

  /**
   * Whether some reading of the request carries WeChat's signature: a timestamp, a nonce and a
   * signature among its headers (in any casing) with its body (decoded when flagged base64) that
   * verify against the platform key. The generator spoils a genuine notification and then draws
   * header values and bodies at random, and a draw can put the spoiled part back (a fresh timestamp
   * equal to the signed one, a nonce cut back to its genuine length, the genuine body): such a
   * request is authentic, and accepting it is right.
   */
  private static boolean signedByWeChat(Case c) {
    List<String> timestamps = values(c, "wechatpay-timestamp");
    List<String> nonces = values(c, "wechatpay-nonce");
    List<String> signatures = values(c, "wechatpay-signature");
    byte[] body = bodyBytes(c);
    if (body == null) {
      return false;
    }
    PublicKey key = simulatorOf(HostileWebhookPropertyTest.class).platformPublicKey();
    for (String signature : signatures) {
      byte[] sig;
      try {
        sig = Base64.getDecoder().decode(signature.strip());
      } catch (IllegalArgumentException e) {
        continue;
      }
      for (String timestamp : timestamps) {
        for (String nonce : nonces) {
          if (verifies(key, timestamp, nonce, body, sig)) {
            return true;
          }
        }
      }
    }
    return false;
  }

  private static List<String> values(Case c, String lowerName) {
    List<String> out = new ArrayList<>();
    c.headers()
        .forEach(
            (k, v) -> {
              if (k != null && v != null && k.toLowerCase(Locale.ROOT).equals(lowerName)) {
                out.add(v);
              }
            });
    return out;
  }

  private static byte[] bodyBytes(Case c) {
    if (c.body() == null) {
      return null;
    }
    if (!c.base64()) {
      return c.body().getBytes(StandardCharsets.UTF_8);
    }
    try {
      return Base64.getDecoder().decode(c.body());
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  private static boolean verifies(
      PublicKey key, String timestamp, String nonce, byte[] body, byte[] signature) {
    try {
      Signature verifier = Signature.getInstance("SHA256withRSA");
      verifier.initVerify(key);
      verifier.update((timestamp + "\n" + nonce + "\n").getBytes(StandardCharsets.UTF_8));
      verifier.update(body);
      verifier.update((byte) '\n');
      return verifier.verify(signature);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  // ---- shrinking -------------------------------------------------------------------------

  /**
   * Smaller requests that still fail, taken while there are: a header dropped, a header's value or
   * the body halved. Each try runs the request again; 200 tries at most.
   */
  private Case shrink(Case failing) {
    Case current = failing;
    int budget = 200;
    boolean smaller = true;
    while (smaller && budget > 0) {
      smaller = false;
      for (Case candidate : candidates(current)) {
        if (--budget < 0) {
          break;
        }
        if (!signedByWeChat(candidate) && check(candidate, this::fullState) != null) {
          current = candidate;
          smaller = true;
          break;
        }
      }
    }
    return current;
  }

  private static List<Case> candidates(Case c) {
    List<Case> out = new ArrayList<>();
    for (String name : c.headers().keySet()) {
      Map<String, String> fewer = new LinkedHashMap<>(c.headers());
      fewer.remove(name);
      out.add(new Case(c.route(), c.tenantId(), fewer, c.body(), c.base64()));
    }
    if (c.body() != null && c.body().length() > 1) {
      out.add(
          new Case(
              c.route(),
              c.tenantId(),
              c.headers(),
              c.body().substring(0, c.body().length() / 2),
              c.base64()));
    }
    for (Map.Entry<String, String> h : c.headers().entrySet()) {
      String v = h.getValue();
      if (v != null && v.length() > 1) {
        Map<String, String> halved = new LinkedHashMap<>(c.headers());
        halved.put(h.getKey(), v.substring(0, v.length() / 2));
        out.add(new Case(c.route(), c.tenantId(), halved, c.body(), c.base64()));
      }
    }
    return out;
  }

  // ---- the request -----------------------------------------------------------------------

  private APIGatewayV2HTTPEvent event(Case c) {
    APIGatewayV2HTTPEvent event =
        APIGatewayV2HTTPEvent.builder()
            .withVersion(SAMPLE.getVersion())
            .withRouteKey(SAMPLE.getRouteKey())
            .withRawPath(SAMPLE.getRawPath())
            .withRawQueryString(SAMPLE.getRawQueryString())
            .withRequestContext(SAMPLE.getRequestContext())
            .build();
    Map<String, String> headers = new HashMap<>(SAMPLE.getHeaders());
    headers.keySet().removeIf(k -> k.startsWith("wechatpay-") || k.equals("content-type"));
    headers.putAll(c.headers());
    event.setHeaders(headers);
    event.setBody(c.body());
    event.setIsBase64Encoded(c.base64());
    if (c.route().equals("provider")) {
      event.setRouteKey(PaymentNotifyHandler.PROVIDER_ROUTE_KEY);
      event.setRawPath("/wechatpay/notify/provider/" + c.tenantId());
      Map<String, String> params = new HashMap<>();
      params.put("spMchid", c.tenantId());
      event.setPathParameters(params);
    }
    if (c.route().equals("tenant") || c.route().equals("refund")) {
      boolean refund = c.route().equals("refund");
      event.setRouteKey(
          refund ? PaymentNotifyHandler.REFUND_ROUTE_KEY : PaymentNotifyHandler.TENANT_ROUTE_KEY);
      event.setRawPath(
          (refund ? "/wechatpay/refund-notify/" : "/wechatpay/notify/") + c.tenantId());
      Map<String, String> params = new HashMap<>();
      params.put("tenantId", c.tenantId());
      event.setPathParameters(params);
    }
    return event;
  }

  private static JsonNode json(String body) {
    try {
      return Json.MAPPER.readTree(body == null ? "null" : body);
    } catch (java.io.IOException e) {
      return Json.MAPPER.getNodeFactory().missingNode();
    }
  }
}
