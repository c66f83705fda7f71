package io.ordertimeout.local;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import io.ordertimeout.embedded.wechat.SignedNotification;
import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.wechat.GatewaySettings;
import io.ordertimeout.wechat.MerchantCredentials;
import io.ordertimeout.wechat.MiniProgramPayment;
import io.ordertimeout.wechat.PaymentGateway;
import io.ordertimeout.wechat.PaymentNotification;
import io.ordertimeout.wechat.PrepayCommand;
import io.ordertimeout.wechat.ProviderNotification;
import io.ordertimeout.wechat.RefundResult;
import io.ordertimeout.wechat.StaticMerchantDirectory;
import io.ordertimeout.wechat.SubMerchant;
import io.ordertimeout.wechat.TradeStatus;
import io.ordertimeout.wechat.WeChatCloseOutcome;
import io.ordertimeout.wechat.WeChatPayGateway;
import io.ordertimeout.wechat.WeChatTrade;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.IntStream;

/**
 * Twelve tenants t01..t12 on one system, every function of template.yaml loaded as the local stack
 * loads it (LocalFunction, by the template's Handler string) and every HTTP request routed by the
 * template's routes into a payload 2.0 event (RouteTable, PayloadV2), as ./local serves them; the
 * caller API Gateway's AWS_IAM authorizer verified is set per request. Each tenant is its own
 * WeChat Pay merchant: its own simulator with its own merchant, platform and APIv3 keys, so two
 * tenants may both have trade wx20261201000001 and a notification signed for one fails the other's
 * keys.
 *
 * <p>The simulators live as long as the test class (12 of them, two RSA key pairs each); the stack
 * (schema, key prefix) is one per test.
 */
final class IsolationStack implements AutoCloseable {
  static final int TENANT_COUNT = 12;
  static final List<String> TENANTS =
      IntStream.rangeClosed(1, TENANT_COUNT).mapToObj(i -> String.format("t%02d", i)).toList();
  static final String ACCOUNT = "123456789012";
  static final String OPEN_ID = "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o";

  /** A caller whose role maps to {@code tenant} only. */
  static String caller(String tenant) {
    return "arn:aws:sts::" + ACCOUNT + ":assumed-role/mall-" + tenant + "/order-sync";
  }

  /** OTC_TENANT_PRINCIPALS: role mall-tNN may act for tenant tNN, and nothing else. */
  static String principals() {
    StringBuilder json = new StringBuilder("{");
    for (String t : TENANTS) {
      json.append(json.length() > 1 ? "," : "")
          .append("\"arn:aws:iam::")
          .append(ACCOUNT)
          .append(":role/mall-")
          .append(t)
          .append("\":[\"")
          .append(t)
          .append("\"]");
    }
    return json.append('}').toString();
  }

  /**
   * The tenants' merchants, in TENANTS order: by default each tenant its own simulator and merchant
   * (its own mchid); {@link #shared()} one merchant and one credential for every tenant, what
   * {@code ./local tenant add} gives each local tenant and what a single-merchant secret gives on
   * AWS.
   */
  static final class Merchants implements AutoCloseable {
    final Map<String, WeChatPaySimulator> byTenant = new LinkedHashMap<>();

    /** The sub_mchid of each tenant that is a sub-merchant of its simulator (the provider). */
    final Map<String, String> subMchidByTenant = new LinkedHashMap<>();

    Merchants() {
      for (int i = 0; i < TENANTS.size(); i++) {
        String mchid = String.format("19%08d", i + 1);
        byTenant.put(TENANTS.get(i), WeChatPaySimulator.start(Clock.systemUTC(), mchid));
      }
    }

    private Merchants(WeChatPaySimulator one) {
      if (one != null) {
        TENANTS.forEach(t -> byTenant.put(t, one));
      }
    }

    /** Every tenant on one merchant, with the same keys. */
    static Merchants shared() {
      return new Merchants(WeChatPaySimulator.start(Clock.systemUTC(), "1900000001"));
    }

    /**
     * Service provider mode beside direct merchants: t01 is a direct merchant with its own
     * simulator, t02..t12 are sub-merchants (sub_mchid 19100000NN) of one provider, another
     * simulator, whose keys they all use.
     */
    static Merchants partner() {
      Merchants m = new Merchants(null);
      m.byTenant.put(TENANTS.get(0), WeChatPaySimulator.start(Clock.systemUTC(), "1900000001"));
      WeChatPaySimulator provider = WeChatPaySimulator.start(Clock.systemUTC(), "1900000100");
      for (String t : TENANTS.subList(1, TENANTS.size())) {
        String sub = "19100000" + t.substring(1);
        provider.subMerchants().register(sub, null);
        m.byTenant.put(t, provider);
        m.subMchidByTenant.put(t, sub);
      }
      return m;
    }

    /** The tenant's sub_mchid; null for a direct merchant. */
    String subMchid(String tenant) {
      return subMchidByTenant.get(tenant);
    }

    WeChatPaySimulator of(String tenant) {
      return byTenant.get(tenant);
    }

    @Override
    public void close() {
      byTenant.values().stream().distinct().forEach(WeChatPaySimulator::close);
    }
  }

  final TestStack stack;
  final Merchants merchants;
  private final Map<String, LocalFunction> functions = new LinkedHashMap<>();
  private final RouteTable routes;

  /** Every request sent and its answer, for the contract check (ContractTest#check). */
  private final List<ContractTest.Exchange> exchanges =
      java.util.Collections.synchronizedList(new ArrayList<>());

  IsolationStack(String hint, Merchants merchants) {
    this.merchants = merchants;
    this.stack =
        TestStack.withOverrides(
            hint,
            Map.of(
                "OTC_TENANT_PRINCIPALS",
                principals(),
                // the on-call engineer administers every tenant
                "OTC_ADMIN_PRINCIPALS",
                "{\"arn:aws:iam::" + ACCOUNT + ":user/oncall\":[\"*\"]}",
                // a sweep pass starts only with a WeChat step's time left (10 s by default): 2 s
                // keeps each scheduled invocation here at a few seconds
                "OTC_WECHAT_STEP_TIMEOUT_MS",
                "2000"),
            new TenantGateways(merchants));
    List<RouteTable.Entry> entries = new ArrayList<>();
    for (SamTemplate.Function f : SamTemplate.read(Main.templatePath()).functions()) {
      LocalFunction fn =
          LocalFunction.load(f, stack.app())
              .orElseThrow(() -> new IllegalStateException(f.logicalId() + " not on classpath"));
      functions.put(f.logicalId(), fn);
      f.routes().forEach(r -> entries.add(RouteTable.entry(r, fn)));
    }
    this.routes = new RouteTable(entries);
  }

  /**
   * Each tenant's SDK calls go to its own simulator; notifications are verified with the keys of
   * the tenant the URL names, from one directory of every tenant's merchant.
   */
  private static final class TenantGateways implements PaymentGateway {
    private final Map<String, WeChatPayGateway> byTenant = new LinkedHashMap<>();

    TenantGateways(Merchants merchants) {
      Map<String, MerchantCredentials> all = new LinkedHashMap<>();
      merchants.byTenant.forEach(
          (t, sim) -> all.put(t, credentials(t, sim, merchants.subMchid(t))));
      StaticMerchantDirectory directory = new StaticMerchantDirectory(all);
      merchants.byTenant.forEach(
          (t, sim) ->
              byTenant.put(
                  t,
                  new WeChatPayGateway(
                      directory,
                      Clock.systemUTC(),
                      GatewaySettings.production()
                          .withReadTimeout(Duration.ofSeconds(2))
                          .withBaseUrl(sim.baseUrl()))));
    }

    private static MerchantCredentials credentials(
        String tenant, WeChatPaySimulator sim, String subMchid) {
      MerchantCredentials c = TestStack.credentialsFor(sim);
      if (subMchid != null) {
        // the provider's keys; the prepay gives WeChat .../wechatpay/notify/provider/<spMchid>
        return new MerchantCredentials(
            c.mchid(),
            c.appid(),
            c.merchantSerialNumber(),
            c.privateKeyPem(),
            c.apiV3Key(),
            c.wechatPayPublicKeyId(),
            c.wechatPayPublicKeyPem(),
            "https://mall.example.com/wechatpay/notify",
            new SubMerchant(subMchid, null));
      }
      return new MerchantCredentials(
          c.mchid(),
          c.appid(),
          c.merchantSerialNumber(),
          c.privateKeyPem(),
          c.apiV3Key(),
          c.wechatPayPublicKeyId(),
          c.wechatPayPublicKeyPem(),
          "https://mall.example.com/wechatpay/notify/" + tenant);
    }

    private PaymentGateway of(String tenantId) {
      PaymentGateway g = byTenant.get(tenantId);
      if (g == null) {
        throw new IllegalArgumentException("no merchant for tenant " + tenantId);
      }
      return g;
    }

    @Override
    public String merchantId(String tenantId) {
      return of(tenantId).merchantId(tenantId);
    }

    @Override
    public MiniProgramPayment prepay(String tenantId, PrepayCommand command) {
      return of(tenantId).prepay(tenantId, command);
    }

    @Override
    public TradeStatus query(String tenantId, WeChatTrade trade) {
      return of(tenantId).query(tenantId, trade);
    }

    @Override
    public WeChatCloseOutcome close(String tenantId, WeChatTrade trade) {
      return of(tenantId).close(tenantId, trade);
    }

    @Override
    public RefundResult refund(
        String tenantId, WeChatTrade trade, String outRefundNo, long amountFen, String reason) {
      return of(tenantId).refund(tenantId, trade, outRefundNo, amountFen, reason);
    }

    @Override
    public RefundResult queryRefund(String tenantId, String outRefundNo) {
      return of(tenantId).queryRefund(tenantId, outRefundNo);
    }

    @Override
    public PaymentNotification parseNotification(
        String tenantId, Map<String, String> headers, String body) {
      // any one: they share the directory, which picks the keys of tenantId
      return byTenant.values().iterator().next().parseNotification(tenantId, headers, body);
    }

    @Override
    public ProviderNotification parseProviderNotification(
        String spMchid, Map<String, String> headers, String body) {
      // any one, as above: the directory knows every provider's sub-merchant tenants
      return byTenant.values().iterator().next().parseProviderNotification(spMchid, headers, body);
    }
  }

  /**
   * {@code method path[?query]} as API Gateway hands it to the route's function: routed by the
   * template, as {@code caller} (AWS_IAM routes; null: no authorizer), with {@code X-Tenant-Id:
   * tenant} unless null.
   */
  APIGatewayV2HTTPResponse http(
      String caller, String tenant, String method, String path, String body) {
    Map<String, List<String>> headers = new LinkedHashMap<>();
    headers.put("content-type", List.of("application/json"));
    if (tenant != null) {
      headers.put("x-tenant-id", List.of(tenant));
    }
    return send(method, path, headers, body, caller);
  }

  /** {@code POST /wechatpay/notify/{tenant}} with {@code n}'s headers and body. */
  APIGatewayV2HTTPResponse notify(String tenant, SignedNotification n) {
    return send("POST", "/wechatpay/notify/" + tenant, headersOf(n), n.body(), null);
  }

  /** {@code POST /wechatpay/notify/provider/{spMchid}}, a service provider's one URL. */
  APIGatewayV2HTTPResponse notifyProvider(String spMchid, SignedNotification n) {
    return send("POST", "/wechatpay/notify/provider/" + spMchid, headersOf(n), n.body(), null);
  }

  /** {@code POST /wechatpay/notify}, the default tenant's URL from before tenants had their own. */
  APIGatewayV2HTTPResponse notifyOldUrl(SignedNotification n) {
    return send("POST", "/wechatpay/notify", headersOf(n), n.body(), null);
  }

  private static Map<String, List<String>> headersOf(SignedNotification n) {
    Map<String, List<String>> headers = new LinkedHashMap<>();
    headers.put("content-type", List.of("application/json"));
    n.headers().forEach((k, v) -> headers.put(k.toLowerCase(Locale.ROOT), List.of(v)));
    return headers;
  }

  private APIGatewayV2HTTPResponse send(
      String method, String path, Map<String, List<String>> headers, String body, String caller) {
    int q = path.indexOf('?');
    String rawPath = q < 0 ? path : path.substring(0, q);
    String rawQuery = q < 0 ? null : path.substring(q + 1);
    RouteTable.Match match =
        routes
            .match(method, rawPath)
            .orElseThrow(() -> new AssertionError("no template route for " + method + " " + path));
    byte[] bytes = body == null ? null : body.getBytes(StandardCharsets.UTF_8);
    APIGatewayV2HTTPEvent event =
        PayloadV2.event(
            new PayloadV2.Request(method, rawPath, rawQuery, headers, bytes, "127.0.0.1"), match);
    APIGatewayV2HTTPEvent.RequestContext.Authorizer authorizer =
        event.getRequestContext().getAuthorizer();
    if (authorizer != null) {
      if (caller == null) {
        event.getRequestContext().setAuthorizer(null);
      } else {
        authorizer.getIam().setUserArn(caller);
        authorizer.getIam().setAccountId(ACCOUNT);
      }
    }
    LocalFunction fn = match.entry().function();
    APIGatewayV2HTTPResponse response =
        (APIGatewayV2HTTPResponse)
            fn.invoke(event, new LocalContext(fn.name(), fn.timeoutMillis(), () -> false));
    Map<String, String> sent = new LinkedHashMap<>();
    headers.forEach((k, v) -> sent.put(k.toLowerCase(Locale.ROOT), v.get(0)));
    String answer = response.getBody();
    if (answer != null && response.getIsBase64Encoded()) {
      answer = new String(java.util.Base64.getDecoder().decode(answer), StandardCharsets.UTF_8);
    }
    exchanges.add(
        ContractTest.exchange(method, path, sent, body, null, response.getStatusCode(), answer));
    return response;
  }

  /**
   * What docs/reference/openapi.yaml says is wrong with the exchanges so far, by exchange; empty:
   * every request and answer is as documented.
   */
  Map<String, List<String>> conformance() {
    Map<String, List<String>> problems = new java.util.TreeMap<>();
    synchronized (exchanges) {
      for (ContractTest.Exchange e : exchanges) {
        List<String> found = ContractTest.check(e);
        if (!found.isEmpty()) {
          problems.put(e.method() + " " + e.path() + " -> " + e.status(), found);
        }
      }
    }
    return problems;
  }

  int exchanged() {
    return exchanges.size();
  }

  /**
   * Invokes a scheduled function with its sample event, its invocation bounded to {@code
   * timeoutMillis} (the sweep and the consumer run passes until their time is nearly up).
   */
  String schedule(String logicalId, long timeoutMillis) {
    LocalFunction fn = functions.get(logicalId);
    Map<String, Object> event = new LinkedHashMap<>();
    event.put("source", "order-timeout.scheduler");
    return String.valueOf(
        fn.invoke(event, new LocalContext(logicalId, timeoutMillis, () -> false)));
  }

  /**
   * One relay pass of the outbox to the stream, its lease given back at once: the relay {@link
   * TestStack#relayOutboxToStream} builds per call keeps the lease (30 s), which would keep the
   * next pass and the stream consumer's own relay from publishing. The UPDATE is the one
   * OutboxStore#releaseLease runs, for whichever relay holds it (no relay runs beside the test's).
   */
  int relay() {
    try {
      return stack.relayOutboxToStream();
    } finally {
      stack.update(
          "UPDATE outbox_leases SET holder = NULL, expires_at = NOW(3) WHERE destination = 'stream'");
    }
  }

  /** One sweep invocation with 1.5 s of passes beyond the 2 s WeChat step it keeps in hand. */
  String sweep() {
    return schedule("TimeoutSweepFunction", 3_500);
  }

  String consume() {
    return schedule("StreamConsumerFunction", 1_500);
  }

  String compensate() {
    return schedule("CompensationFunction", 60_000);
  }

  @Override
  public void close() {
    stack.close();
  }
}
