package io.ordertimeout.wiring;

import com.zaxxer.hikari.HikariDataSource;
import io.ordertimeout.admin.AdminActions;
import io.ordertimeout.admin.AdminOps;
import io.ordertimeout.admin.DeadLetterAdmin;
import io.ordertimeout.admin.ForceClose;
import io.ordertimeout.admin.OrderStory;
import io.ordertimeout.admin.Pauses;
import io.ordertimeout.admin.TradeDisowning;
import io.ordertimeout.aws.ConfigLoader;
import io.ordertimeout.aws.SecretsMerchantDirectory;
import io.ordertimeout.aws.SnapStartHooks;
import io.ordertimeout.cancel.CancelOrderService;
import io.ordertimeout.close.OrderCloser;
import io.ordertimeout.close.WeChatCloseStep;
import io.ordertimeout.compensation.CompensationJob;
import io.ordertimeout.compensation.CompensationSettings;
import io.ordertimeout.compensation.Compensator;
import io.ordertimeout.config.DeadlineSettings;
import io.ordertimeout.config.OtcConfig;
import io.ordertimeout.config.Waits;
import io.ordertimeout.consume.ConsumerJob;
import io.ordertimeout.consume.ConsumerNames;
import io.ordertimeout.consume.StreamConsumer;
import io.ordertimeout.http.AdminAccess;
import io.ordertimeout.http.AdminRoutes;
import io.ordertimeout.http.CallerTenants;
import io.ordertimeout.http.LifecycleRoutes;
import io.ordertimeout.http.OrderApi;
import io.ordertimeout.http.OrderTimeline;
import io.ordertimeout.http.PaymentWebhook;
import io.ordertimeout.http.PlaceOrderRequests;
import io.ordertimeout.lifecycle.Coupons;
import io.ordertimeout.lifecycle.DueHandlers;
import io.ordertimeout.lifecycle.LifecycleSettings;
import io.ordertimeout.lifecycle.Transitions;
import io.ordertimeout.metrics.MetricNames;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.mysql.Database;
import io.ordertimeout.mysql.DbLogin;
import io.ordertimeout.mysql.LoginSource;
import io.ordertimeout.mysql.OrderStore;
import io.ordertimeout.mysql.ServerCheck;
import io.ordertimeout.mysql.TenantStore;
import io.ordertimeout.mysql.Tx;
import io.ordertimeout.outbox.Destination;
import io.ordertimeout.outbox.EventBridgeClients;
import io.ordertimeout.outbox.EventBridgePublisher;
import io.ordertimeout.outbox.OutboxRelay;
import io.ordertimeout.outbox.OutboxRetention;
import io.ordertimeout.outbox.OutboxStore;
import io.ordertimeout.outbox.Publisher;
import io.ordertimeout.outbox.RelayJob;
import io.ordertimeout.outbox.RelaySettings;
import io.ordertimeout.outbox.StreamPublisher;
import io.ordertimeout.payment.NonceGuard;
import io.ordertimeout.payment.NotificationService;
import io.ordertimeout.payment.PaymentService;
import io.ordertimeout.payment.PrepayService;
import io.ordertimeout.payment.RefundNotificationService;
import io.ordertimeout.place.PlaceOrderService;
import io.ordertimeout.redis.RedisConnector;
import io.ordertimeout.redis.RedisSecurity;
import io.ordertimeout.redis.RedisTimeSource;
import io.ordertimeout.redis.ShardLeases;
import io.ordertimeout.redis.TimeSource;
import io.ordertimeout.redis.TimerIndex;
import io.ordertimeout.stream.DeadLetters;
import io.ordertimeout.stream.EventStream;
import io.ordertimeout.stream.OrderEvents;
import io.ordertimeout.stream.StreamLag;
import io.ordertimeout.sweep.SweepJob;
import io.ordertimeout.sweep.TimeoutSweeper;
import io.ordertimeout.wechat.EnvironmentMerchantDirectory;
import io.ordertimeout.wechat.GatewaySettings;
import io.ordertimeout.wechat.MerchantDirectory;
import io.ordertimeout.wechat.PaymentGateway;
import io.ordertimeout.wechat.WeChatPayGateway;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.services.eventbridge.EventBridgeClient;

/**
 * The wiring of one execution environment: clients built once (Lambda init), use cases sharing
 * them. Each handler holds its narrow entry point (orderApi(), sweepJob()...) in a static field;
 * tests build one Components per test with their own schema and key prefix.
 *
 * <p>Over 300 lines: every client and use case of an execution environment is built here, on
 * purpose in one file, plus the test accessors; the entry-point factories are one-liners.
 */
public final class Components implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Components.class);

  /**
   * Concurrent WeChat calls of one environment's close path. At WeChat's typical 100-300 ms per
   * call, 16 in flight close ~50-150 prepaid orders a second per environment, well under the
   * merchant API's per-merchant rate limits even with dozens of sweepers.
   */
  static final int WECHAT_CONCURRENCY = 16;

  /**
   * A consumer renews its name every second; 30 s lets a stalled one (a GC pause, a slow batch)
   * keep it, and frees the name of a killed one half a minute later.
   */
  static final Duration CONSUMER_NAME_LEASE = Duration.ofSeconds(30);

  private final OtcConfig config;
  private final HikariDataSource dataSource;
  private final RedisConnector redis;
  private final Metrics metrics = new Metrics();
  private final Tx tx;
  private final TimerIndex timers;
  private final TimeSource time;
  private final OrderStore orders;
  private final TenantStore tenants;
  private final PlaceOrderService placeOrders;
  private final PlaceOrderRequests placeOrderRequests;
  private final OrderCloser closer;
  private final PaymentGateway gateway;
  private final ExecutorService wechatCalls;
  private final PaymentService payments;
  private final PrepayService prepays;
  private final NotificationService notifications;
  private final RefundNotificationService refundNotifications;
  private final EventStream stream;
  private final OrderEvents events;
  private final CancelOrderService cancels;
  private final DeadLetters deadLetters;
  private final OutboxStore outbox;
  private final Pauses pauses;
  private final Transitions transitions;
  private final Coupons coupons;

  public Components(OtcConfig config) {
    this(config, null);
  }

  public Components(OtcConfig config, TimeSource timeOverride) {
    this(config, timeOverride, null);
  }

  /**
   * {@code timeOverride} replaces Redis TIME (tests inject clock skew through it); null for
   * production. {@code gateway} is WeChat Pay (null: payments off; prepay answers 503 and prepaid
   * orders are never closed without WeChat's word).
   */
  public Components(OtcConfig config, TimeSource timeOverride, PaymentGateway gateway) {
    this(config, timeOverride, gateway, null);
  }

  /**
   * As above; {@code logins} is where the pool re-reads its login when MySQL refuses it (a rotated
   * secret), null: the configured login never changes.
   */
  public Components(
      OtcConfig config, TimeSource timeOverride, PaymentGateway gateway, LoginSource logins) {
    this(config, timeOverride, gateway, logins, RedisSecurity.DEFAULT);
  }

  /**
   * As above; {@code redisSecurity} authenticates to Redis (the Redis secret's credentials provider
   * on AWS) and names the CAs its TLS trusts.
   */
  public Components(
      OtcConfig config,
      TimeSource timeOverride,
      PaymentGateway gateway,
      LoginSource logins,
      RedisSecurity redisSecurity) {
    // every property once, secrets masked (HikariCP logs its pool config the same way at start)
    log.info("configuration: {}", config);
    this.config = config;
    DbLogin login = new DbLogin(config.mysqlUser(), config.mysqlPassword());
    this.dataSource =
        Database.pool(
            config.mysqlUrl(),
            login,
            logins == null ? LoginSource.fixed(login) : logins,
            config.dbPoolSize(),
            "otc-" + config.keyPrefix(),
            config.waits().lockWaitSeconds(),
            config.waits().setLockWait());
    try {
      // Before any migration or write: an unsupported server or a non-UTC session is refused here.
      ServerCheck.verify(dataSource);
      if (config.migrateOnStart()) {
        Database.migrate(dataSource);
      }
      this.redis = RedisConnector.connect(config.redisUri(), config.redisCluster(), redisSecurity);
    } catch (RuntimeException e) {
      dataSource.close();
      throw e;
    }
    this.tx = new Tx(dataSource, config.waits().socketTimeout());
    // a single-node Redis takes the claims of several shards in one call; a cluster one each
    this.timers =
        new TimerIndex(
            redis.sync(), config.keyPrefix(), config.timerShards(), !config.redisCluster());
    try {
      timers.requireShardCountUnchanged();
    } catch (RuntimeException e) {
      try {
        redis.close();
      } finally {
        dataSource.close();
      }
      throw e;
    }
    this.time = timeOverride != null ? timeOverride : new RedisTimeSource(redis.sync());
    this.orders = new OrderStore(tx);
    this.tenants = new TenantStore(tx);
    this.stream = new EventStream(redis.sync(), config.keyPrefix(), config.stream().maxLen());
    this.events = new OrderEvents(stream, metrics);
    this.deadLetters = new DeadLetters(tx, redis.sync(), stream);
    this.pauses = new Pauses(tx);
    this.cancels = new CancelOrderService(tx);
    this.placeOrders = new PlaceOrderService(tx, timers, metrics);
    this.outbox = new OutboxStore(tx);
    DeadlineSettings d = config.deadlines();
    this.transitions =
        new Transitions(
            tx,
            timers,
            time,
            metrics,
            new LifecycleSettings(d.receiptPeriod(), d.receiptExtension(), d.afterSaleWindow()));
    this.coupons = new Coupons(tx, timers, time, metrics);
    this.placeOrderRequests =
        new PlaceOrderRequests(
            (int) config.defaultOrderTimeout().toSeconds(),
            (int) config.maxOrderTimeout().toSeconds());
    this.gateway = gateway;
    this.wechatCalls = Executors.newFixedThreadPool(WECHAT_CONCURRENCY, daemonThreads());
    this.payments = new PaymentService(tx, timers, metrics, gateway);
    this.prepays = new PrepayService(tx, gateway, metrics);
    NonceGuard nonces = new NonceGuard(redis.sync(), config.keyPrefix());
    this.notifications =
        gateway == null ? null : new NotificationService(gateway, payments, nonces, metrics);
    this.refundNotifications =
        gateway == null
            ? null
            : new RefundNotificationService(
                gateway, payments.bindings(), payments.refunds(), nonces, metrics);
    this.closer =
        new OrderCloser(
            tx,
            timers,
            time,
            metrics,
            new WeChatCloseStep(
                gateway, payments.bindings(), wechatCalls, config.waits().weChatStep(), metrics),
            payments,
            config.userPayingLimit());
  }

  public static Components fromEnvironment() {
    Map<String, String> env = System.getenv();
    OtcConfig config = ConfigLoader.fromEnvironment(env);
    Components app =
        new Components(
            config,
            null,
            gatewayFromEnvironment(env, config.waits()),
            ConfigLoader.dbLogins(env),
            new RedisSecurity(ConfigLoader.redisCredentials(env), null));
    SnapStartHooks.register(app.dataSource(), app.redis(), () -> Priming.prime(app));
    return app;
  }

  /**
   * WeChat Pay from the merchant secret named by OTC_WECHAT_SECRET_ARN (AWS), else from
   * OTC_WECHAT_* (local runs); null when neither is configured, and then prepay answers 503.
   */
  public static PaymentGateway gatewayFromEnvironment(Map<String, String> env) {
    return gatewayFromEnvironment(env, EnvironmentMerchantDirectory.settings(env));
  }

  /** As above, with the WeChat connect and read timeouts of {@code waits}. */
  static PaymentGateway gatewayFromEnvironment(Map<String, String> env, Waits waits) {
    GatewaySettings base = EnvironmentMerchantDirectory.settings(env);
    return gatewayFromEnvironment(
        env,
        new GatewaySettings(
            waits.weChatConnectTimeout(), waits.weChatReadTimeout(), base.baseUrlOverride()));
  }

  private static PaymentGateway gatewayFromEnvironment(
      Map<String, String> env, GatewaySettings settings) {
    // plain merchant keys are for local runs: on Lambda they fail init here too
    ConfigLoader.refusePlainSecretsOnLambda(env);
    Optional<MerchantDirectory> directory =
        env.get(ConfigLoader.WECHAT_SECRET_ARN) != null
            ? Optional.of(SecretsMerchantDirectory.fromEnvironment(env))
            : EnvironmentMerchantDirectory.fromEnvironment(env);
    return directory.map(d -> new WeChatPayGateway(d, Clock.systemUTC(), settings)).orElse(null);
  }

  private static java.util.concurrent.ThreadFactory daemonThreads() {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, "wechat-close-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  /** A new sweep loop for one invocation (its own lease token). */
  public TimeoutSweeper newSweeper() {
    return new TimeoutSweeper(
        timers,
        new ShardLeases(redis.sync()),
        closer,
        events,
        time,
        metrics,
        new TimeoutSweeper.Settings(
            config.sweepBatch(),
            config.claimLease(),
            config.sweepPoll(),
            config.invocationMargin(),
            // one closing transaction per pooled connection
            config.dbPoolSize(),
            // without a gateway prepaid orders fail the step at once, without a call
            gateway == null ? Duration.ZERO : config.waits().weChatStep(),
            config.deadlines().kindBatch(),
            config.sweep().runs(),
            config.sweep().gather()),
        tenants::all,
        DueHandlers.of(transitions, coupons));
  }

  /**
   * A new stream consumer for one invocation, with its own Redis connection for blocking reads
   * (closed by the consumer's close()).
   */
  public StreamConsumer newStreamConsumer() {
    return new StreamConsumer(
        stream,
        redis.sync(),
        redis.openDedicated(),
        new ConsumerNames(
            new ShardLeases(redis.sync()),
            stream,
            config.stream().consumerSlots(),
            CONSUMER_NAME_LEASE.toMillis()),
        deadLetters,
        closer,
        metrics,
        new StreamConsumer.Settings(config.stream(), config.invocationMargin()));
  }

  /** A compensation pass over this environment's stores, with {@code settings}. */
  public Compensator newCompensator(CompensationSettings settings) {
    return new Compensator(
        new Compensator.Parts(
            tx,
            timers,
            redis.sync(),
            closer,
            payments,
            gateway,
            stream,
            new ShardLeases(redis.sync()),
            config.stream().consumerSlots(),
            time,
            metrics,
            compensationMargin(),
            transitions(),
            coupons(),
            tenants::all),
        settings);
  }

  /**
   * How much of its invocation a compensation pass leaves unused: the largest unit of work it
   * starts after a check is one page's close (the WeChat step, then both close transactions at
   * their worst), and the sweep's margin already is those transactions plus 1 s for the report and
   * the metrics flush. 29 s with the defaults (10 s + 19 s), 19 s without WeChat Pay.
   */
  public Duration compensationMargin() {
    return config
        .invocationMargin()
        .plus(gateway == null ? Duration.ZERO : config.waits().weChatStep());
  }

  /** The order HTTP API's entry point. */
  public OrderApi orderApi() {
    return new OrderApi(
        placeOrderRequests(),
        placeOrders(),
        cancels(),
        prepays(),
        orders(),
        metrics,
        new OrderTimeline(outbox, orders),
        new LifecycleRoutes(transitions, coupons, tx, time),
        new CallerTenants(config.tenants()));
  }

  /** WeChat Pay's notification webhook's entry point. */
  public PaymentWebhook paymentWebhook() {
    return new PaymentWebhook(notifications(), metrics, refundNotifications);
  }

  /** The scheduled sweep's entry point: a new sweeper per run. */
  public SweepJob sweepJob() {
    return new SweepJob(
        this::newSweeper,
        redis.sync(),
        timers,
        tenants::all,
        time,
        metrics,
        () -> pauses.holds(Pauses.SWEEP, metrics));
  }

  /** The outbox's SQL (relay, timeline, retention). */
  public OutboxStore outbox() {
    return outbox;
  }

  /**
   * A relay to the stream and, when {@code bridge} is given, to its EventBridge bus ({@code
   * settings.busName()}).
   */
  public OutboxRelay newRelay(RelaySettings settings, EventBridgeClient bridge) {
    List<Publisher> publishers = new ArrayList<>();
    publishers.add(new StreamPublisher(stream));
    if (bridge != null && settings.busName() != null) {
      publishers.add(
          new EventBridgePublisher(bridge, settings.busName(), settings.source(), metrics));
    }
    return new OutboxRelay(outbox, publishers, settings, metrics);
  }

  /**
   * The relay loop that runs beside the stream consumer: a new relay per run, retention over the
   * destinations it delivers to, and the stream's lag sampled with it.
   */
  public RelayJob relayJob(RelaySettings settings, EventBridgeClient bridge) {
    List<Destination> destinations = newRelay(settings, bridge).destinations();
    return new RelayJob(
        () -> newRelay(settings, bridge),
        new OutboxRetention(outbox, destinations, settings, metrics),
        this::sampleStreamLag,
        settings,
        config.invocationMargin(),
        metrics);
  }

  /**
   * The stream-consumer function's entry point: the consumer loop with the outbox relay beside it,
   * configured from OTC_OUTBOX_* and OTC_EVENT_BUS_NAME (no bus: the stream only).
   */
  public RelayingConsumer relayingConsumer() {
    Map<String, String> env = System.getenv();
    return new RelayingConsumer(
        consumerJob(), relayJob(relaySettings(env), EventBridgeClients.fromEnvironment(env)));
  }

  /**
   * The relay's settings from {@code env}; unless OTC_OUTBOX_CANCEL_REDELIVER_MS says otherwise, a
   * stale cancel is re-delivered after two stream visibilities (2 x 30 s by default): the
   * consumers' own reclaims of a live entry come first.
   */
  public RelaySettings relaySettings(Map<String, String> env) {
    RelaySettings settings = RelaySettings.fromEnvironment(env);
    return env.containsKey("OTC_OUTBOX_CANCEL_REDELIVER_MS")
        ? settings
        : settings.withCancelRedeliverAfter(config.stream().visibility().multipliedBy(2));
  }

  private void sampleStreamLag() {
    StreamLag.Lag lag = StreamLag.of(redis.sync(), stream, time.nowMillis());
    metrics.recordMillis(MetricNames.STREAM_LAG_MS, lag.oldestAgeMillis());
    metrics.gauge(MetricNames.STREAM_PENDING, lag.pending());
  }

  /** The scheduled stream consumer's entry point: a new consumer per run. */
  public ConsumerJob consumerJob() {
    return new ConsumerJob(
        this::newStreamConsumer, metrics, () -> pauses.holds(Pauses.CONSUMER, metrics));
  }

  /**
   * The admin API's entry point, open to the operators of OTC_ADMIN_PRINCIPALS only; its
   * compensation runs with {@code settings}.
   */
  public AdminRoutes adminRoutes(CompensationSettings settings) {
    return new AdminRoutes(adminOps(settings), new AdminAccess(config.admins()));
  }

  /** The operator's use cases (admin API, ./ops admin), compensation with {@code settings}. */
  public AdminOps adminOps(CompensationSettings settings) {
    AdminActions actions = new AdminActions(tx);
    DeadLetterAdmin letters = new DeadLetterAdmin(tx, stream);
    return new AdminOps(
        letters,
        new OrderStory(tx, redis.sync(), timers, stream, letters, gateway),
        new ForceClose(
            orders, closer, actions, metrics, new TradeDisowning(tx, payments.bindings(), gateway)),
        pauses,
        compensationJob(settings),
        actions,
        metrics,
        new io.ordertimeout.admin.ReconciliationAdmin(
            reconciler(),
            actions,
            () ->
                java.time.Instant.ofEpochMilli(time.nowMillis())
                    .atZone(io.ordertimeout.reconcile.Reconciler.SHANGHAI)
                    .toLocalDate()));
  }

  public Pauses pauses() {
    return pauses;
  }

  /** The scheduled compensation pass's entry point, with {@code settings}. */
  public CompensationJob compensationJob(CompensationSettings settings) {
    return compensationJob(settings, io.ordertimeout.reconcile.ReconciliationSettings.defaults());
  }

  /**
   * The scheduled compensation pass, ending with the daily reconciliation against the trade bill
   * (when payments are configured) on {@code reconciliation}'s schedule.
   */
  public CompensationJob compensationJob(
      CompensationSettings settings,
      io.ordertimeout.reconcile.ReconciliationSettings reconciliation) {
    return new CompensationJob(
        () -> newCompensator(settings),
        metrics,
        gateway == null
            ? null
            : new io.ordertimeout.reconcile.ReconciliationJob(
                reconciler(), tenants::all, reconciliation, time, metrics));
  }

  public OtcConfig config() {
    return config;
  }

  public HikariDataSource dataSource() {
    return dataSource;
  }

  public RedisConnector redis() {
    return redis;
  }

  public Metrics metrics() {
    return metrics;
  }

  public TimerIndex timers() {
    return timers;
  }

  public TimeSource time() {
    return time;
  }

  public OrderStore orders() {
    return orders;
  }

  /** The tenants this deployment serves (the {@code tenants} table). */
  public TenantStore tenants() {
    return tenants;
  }

  public PlaceOrderService placeOrders() {
    return placeOrders;
  }

  public PlaceOrderRequests placeOrderRequests() {
    return placeOrderRequests;
  }

  /** The generic executor of the order's transitions after payment. */
  public Transitions transitions() {
    return transitions;
  }

  public Coupons coupons() {
    return coupons;
  }

  public OrderCloser closer() {
    return closer;
  }

  /** WeChat Pay; null when payments are not configured. */
  public PaymentGateway gateway() {
    return gateway;
  }

  public PaymentService payments() {
    return payments;
  }

  /** The daily reconciliation against the trade bill; null when payments are not configured. */
  public io.ordertimeout.reconcile.Reconciler reconciler() {
    return gateway == null
        ? null
        : new io.ordertimeout.reconcile.Reconciler(tx, gateway, payments, metrics);
  }

  public PrepayService prepays() {
    return prepays;
  }

  /**
   * The payment-notify use case.
   *
   * @throws IllegalStateException when no payment gateway is configured
   */
  public NotificationService notifications() {
    if (notifications == null) {
      throw new IllegalStateException("payment notifications need OTC_WECHAT_* configuration");
    }
    return notifications;
  }

  public EventStream stream() {
    return stream;
  }

  public OrderEvents events() {
    return events;
  }

  public CancelOrderService cancels() {
    return cancels;
  }

  public DeadLetters deadLetters() {
    return deadLetters;
  }

  @Override
  public void close() {
    wechatCalls.shutdownNow();
    try {
      redis.close();
    } finally {
      dataSource.close();
    }
  }
}
