package io.ordertimeout.local;

import io.ordertimeout.config.OtcConfig;
import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import io.ordertimeout.ops.LocalEndpoints;
import io.ordertimeout.wechat.GatewaySettings;
import io.ordertimeout.wechat.PaymentGateway;
import io.ordertimeout.wechat.WeChatPayGateway;
import io.ordertimeout.wiring.Components;
import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The whole system on one machine: Redis and MariaDB from infra/embedded (or the external servers
 * the OTC_* variables name), the WeChat Pay simulator, one {@link Components} shared by every
 * handler behind an HTTP route of template.yaml, and one of its own for each function that only
 * runs on a schedule (the sweep, the stream consumer, compensation).
 *
 * <p>As on AWS, where each function runs in its own environment: a scheduled function's Redis round
 * trips and transactions do not queue behind the API's on one Lettuce connection and one pool. With
 * one shared wiring they did: in a JFR profile of the busy-API scenario (wrk at 64 clients) the
 * sweep thread waited 13.6 s in the claim script and 6.4 s in nextDeadline out of ~41 s, behind the
 * placements' timer writes, and the API threads 95 s for a pool connection.
 */
public final class LocalStack implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(LocalStack.class);

  /**
   * 16 connections per wiring: up to 32 API threads share the API's pool here, where each Lambda
   * environment would have its own 2; transactions last milliseconds, so 16 keep up. Each scheduled
   * function's wiring has 16 too (the sweep closes as many batches in parallel as it has).
   */
  private static final String LOCAL_POOL_SIZE = "16";

  /** OTC_ADMIN_PRINCIPALS of a local stack unless the caller's environment sets it. */
  static final String LOCAL_ADMINS = "{\"" + PayloadV2.LOCAL_CALLER + "\":[\"*\"]}";

  /**
   * How long Ctrl-C waits for a running invocation: one sweep pass (a 500-order batch is 10-50 ms)
   * plus releasing its leases fits well inside 10 s.
   */
  private static final Duration STOP_WAIT = Duration.ofSeconds(10);

  /**
   * Where to listen, how fast the schedules run and how their firings are jittered within each
   * period (ScheduleRunner).
   */
  public record Options(
      Path template, String host, int port, double scheduleScale, ScheduleRunner.Jitter jitter) {
    public Options {
      if (!(scheduleScale > 0 && scheduleScale <= 1)) {
        throw new IllegalArgumentException(
            "--schedule-scale must be in (0, 1], was " + scheduleScale);
      }
      java.util.Objects.requireNonNull(jitter, "jitter");
    }

    /** Schedules jittered with a random seed, as {@code ./local up} runs them by default. */
    public Options(Path template, String host, int port, double scheduleScale) {
      this(template, host, port, scheduleScale, ScheduleRunner.Jitter.random());
    }
  }

  private final AtomicBoolean stopping = new AtomicBoolean();
  private final EmbeddedServers servers;
  private final String schema;
  private final OtcConfig config;
  private final WeChatPaySimulator simulator;
  private final LocalMerchants merchants;
  private final LocalTenants tenants;
  private final Components app;
  private final Map<String, String> functionEnvironment;

  /** The own wirings of the functions that only run on a schedule, by logical id. */
  private final Map<String, Components> scheduledWirings = new LinkedHashMap<>();

  private final SamTemplate template;
  private final List<LocalFunction> functions = new ArrayList<>();
  private final List<String> skipped = new ArrayList<>();
  private final ApiGatewayServer api;
  private final List<ScheduleRunner> schedules;
  private final ScheduleRunner.Jitter jitter;

  private LocalStack(Options options, Map<String, String> environment) {
    this.template = SamTemplate.read(options.template());
    this.servers = EmbeddedServers.get();
    this.schema = servers.createSchema("local");
    this.functionEnvironment = localEnvironment(environment);
    this.config = OtcConfig.fromEnvironment(functionEnvironment);
    this.simulator = WeChatPaySimulator.start();
    this.merchants = new LocalMerchants(simulator);
    this.app = new Components(config, null, gatewayFor(simulator, merchants));
    DemoCatalog.seed(app.dataSource());
    RouteTable routes = loadFunctions();
    List<io.ordertimeout.metrics.Metrics> registries = new ArrayList<>();
    registries.add(app.metrics());
    scheduledWirings.values().forEach(w -> registries.add(w.metrics()));
    this.api =
        new ApiGatewayServer(routes, registries, stopping::get, options.host(), options.port());
    simulator.setWebhookUrl(URI.create(api.baseUrl() + "/wechatpay/notify"));
    merchants.notifyAt(api.baseUrl());
    // as WeChat: a trade's notifications go to the notify_url its prepay sent, which names the
    // order's tenant; the webhook URL above serves trades prepaid without one
    simulator.setFollowNotifyUrl(true);
    this.tenants = new LocalTenants(app.dataSource(), merchants, config.tenants());
    api.control(LocalTenants.PATH, tenants::serve);
    // WeChat retries over 24h4m; at 1/100 a lost notification is retried within 15 minutes
    simulator.setRetryScale(0.01);
    this.schedules = ScheduleRunner.forAll(functions, options.scheduleScale(), options.jitter());
    this.jitter = options.jitter();
    schedules.forEach(ScheduleRunner::start);
  }

  /**
   * The real WeChat Pay SDK pointed at the in-process simulator, with the merchant accounts of
   * {@code merchants}: the same gateway production builds from the merchant secret.
   */
  static PaymentGateway gatewayFor(WeChatPaySimulator wechat, LocalMerchants merchants) {
    return new WeChatPayGateway(
        merchants, Clock.systemUTC(), GatewaySettings.production().withBaseUrl(wechat.baseUrl()));
  }

  /** Starts the servers, the handlers, the HTTP API and the schedules. */
  public static LocalStack start(Options options, Map<String, String> environment) {
    return new LocalStack(options, environment);
  }

  /**
   * The function configuration: the caller's OTC_* variables, with the database, Redis and key
   * prefix of this stack, migrations on, and a pool sized for the shared local environment.
   */
  private Map<String, String> localEnvironment(Map<String, String> environment) {
    Map<String, String> env = new LinkedHashMap<>();
    environment.forEach(
        (k, v) -> {
          if (k.startsWith("OTC_")) {
            env.put(k, v);
          }
        });
    env.put("OTC_MYSQL_URL", servers.jdbcUrl(schema));
    env.put("OTC_MYSQL_USER", servers.mysqlUser());
    env.put("OTC_MYSQL_PASSWORD", servers.mysqlPassword());
    env.put("OTC_REDIS_URI", servers.redisUri());
    env.put("OTC_KEY_PREFIX", servers.newKeyPrefix("local"));
    env.put("OTC_MIGRATE_ON_START", "true");
    env.putIfAbsent("OTC_DB_POOL_SIZE", LOCAL_POOL_SIZE);
    // The local gateway's one caller is the operator too (./ops admin, the smoke test, the demo);
    // on AWS nobody is, until AdminPrincipals names them.
    env.putIfAbsent("OTC_ADMIN_PRINCIPALS", LOCAL_ADMINS);
    return env;
  }

  private RouteTable loadFunctions() {
    List<RouteTable.Entry> entries = new ArrayList<>();
    for (SamTemplate.Function f : template.functions()) {
      Components wiring = scheduledOnly(f) ? ownWiring() : app;
      Optional<LocalFunction> loaded = LocalFunction.load(f, wiring);
      if (wiring != app) {
        if (loaded.isPresent()) {
          scheduledWirings.put(f.logicalId(), wiring);
        } else {
          wiring.close();
        }
      }
      loaded.ifPresentOrElse(functions::add, () -> skipped.add(f.logicalId()));
      for (SamTemplate.HttpRoute route : f.routes()) {
        entries.add(RouteTable.entry(route, loaded.orElse(null)));
      }
    }
    return new RouteTable(entries);
  }

  /** A function with schedules and no HTTP route gets a wiring of its own, as on AWS. */
  private static boolean scheduledOnly(SamTemplate.Function f) {
    return !f.schedules().isEmpty() && f.routes().isEmpty();
  }

  /**
   * A wiring from the same configuration (the API's wiring already migrated the schema): its own DB
   * pool, Redis connection, WeChat Pay client and metrics registry.
   */
  private Components ownWiring() {
    Map<String, String> env = new LinkedHashMap<>(functionEnvironment);
    env.put("OTC_MIGRATE_ON_START", "false");
    return new Components(OtcConfig.fromEnvironment(env), null, gatewayFor(simulator, merchants));
  }

  /** The wiring {@code logicalId} runs on: its own when it only runs on a schedule. */
  Components wiringOf(String logicalId) {
    return scheduledWirings.getOrDefault(logicalId, app);
  }

  public URI apiUrl() {
    return api.baseUrl();
  }

  /** Where this stack listens, as {@code ./local up} records it for the commands that call it. */
  public LocalEndpoints endpoints() {
    return new LocalEndpoints(
        apiUrl(), simulator.baseUrl(), ProcessHandle.current().pid(), Instant.now());
  }

  /** The schedules' runners, one per ScheduleV2 event of a loaded function. */
  List<ScheduleRunner> schedules() {
    return List.copyOf(schedules);
  }

  public Components app() {
    return app;
  }

  public WeChatPaySimulator simulator() {
    return simulator;
  }

  public SamTemplate template() {
    return template;
  }

  /** Logical ids of the template's functions whose handler class is not on the classpath. */
  public List<String> skippedFunctions() {
    return List.copyOf(skipped);
  }

  /** Where everything listens and what runs. */
  public void describe(PrintStream out) {
    out.println("order-timeout local stack");
    out.println("  HTTP API      " + api.baseUrl());
    for (SamTemplate.HttpRoute r : template.routes()) {
      out.printf("    %-28s auth %s%n", r.routeKey(), r.auth());
    }
    out.println("  metrics       " + api.baseUrl() + "/metrics (Prometheus text)");
    out.println(
        "  callers       " + PayloadV2.LOCAL_CALLER + " (every request), " + config.admins());
    out.println("  JDBC URL      " + config.mysqlUrl() + " (user " + config.mysqlUser() + ")");
    out.println(
        "  Redis URI     " + servers.redisUri() + " (key prefix " + config.keyPrefix() + ")");
    out.println(
        "  WeChat Pay    " + simulator.baseUrl() + " (simulator, mchid " + simulator.mchid() + ")");
    out.println(
        "  WeChat ctl    " + simulator.baseUrl() + "/_sim (./local wechat; GET lists routes)");
    out.println(
        "  webhook       "
            + api.baseUrl()
            + "/wechatpay/notify (tenant default), /wechatpay/notify/<tenantId>");
    out.println(
        "  tenants       "
            + api.baseUrl()
            + LocalTenants.PATH
            + " (./local tenant add|list; merchant accounts: "
            + merchants.all().keySet()
            + ")");
    out.println(
        jitter.on()
            ? "  schedules     fire at a random offset within each period, as EventBridge Scheduler"
                + " may (seed "
                + jitter.seed()
                + "; --schedule-seed "
                + jitter.seed()
                + " repeats it, --schedule-jitter off fires at each period's start)"
            : "  schedules     fire at the start of each period (--schedule-jitter off)");
    for (ScheduleRunner s : schedules) {
      out.printf(
          "  schedule      %-24s %s -> every %d ms%s%n",
          s.functionName(),
          s.schedule().expression(),
          s.interval().toMillis(),
          scheduledWirings.containsKey(s.functionName())
              ? " (own DB pool and Redis connection)"
              : "");
    }
    for (String name : skipped) {
      out.println("  not built     " + name + " (its routes answer 501, its schedules do not run)");
    }
    out.println(
        "  seeded        "
            + DemoCatalog.SKUS
            + " SKUs ("
            + DemoCatalog.STOCK_PER_SKU
            + " each), "
            + DemoCatalog.HOT_SKU
            + " ("
            + DemoCatalog.HOT_SKU_STOCK
            + "), "
            + DemoCatalog.USERS
            + " coupons cpn-user-0000..");
  }

  @Override
  public void close() {
    if (!stopping.compareAndSet(false, true)) {
      return;
    }
    schedules.forEach(s -> s.terminate(STOP_WAIT));
    api.close();
    simulator.close();
    scheduledWirings.values().forEach(Components::close);
    app.close();
    log.info("local stack stopped (schema {} left on the server until it stops)", schema);
  }
}
