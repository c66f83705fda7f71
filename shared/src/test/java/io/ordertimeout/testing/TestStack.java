package io.ordertimeout.testing;

import io.ordertimeout.config.OtcConfig;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.PlaceOrderCommand;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.BulkSeeder;
import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.embedded.InvariantChecker;
import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import io.ordertimeout.place.PlaceOrderService.Placed;
import io.ordertimeout.redis.TimeSource;
import io.ordertimeout.wechat.GatewaySettings;
import io.ordertimeout.wechat.MerchantCredentials;
import io.ordertimeout.wechat.PaymentGateway;
import io.ordertimeout.wechat.StaticMerchantDirectory;
import io.ordertimeout.wechat.WeChatPayGateway;
import io.ordertimeout.wiring.Components;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;
import java.util.function.UnaryOperator;

/**
 * One test's own slice of the real servers: a fresh MySQL schema with the migrations applied, a
 * Redis key prefix, and the system wired on them. Tests therefore pass in any order and against
 * shared external servers.
 */
public final class TestStack implements AutoCloseable {
  private final EmbeddedServers servers;
  private final String schema;
  private final Components app;

  private TestStack(EmbeddedServers servers, String schema, Components app) {
    this.servers = servers;
    this.schema = schema;
    this.app = app;
  }

  public static TestStack create(String hint) {
    return create(hint, c -> c, null);
  }

  /** {@code tweak} adjusts the configuration; {@code time} replaces Redis TIME (null keeps it). */
  public static TestStack create(String hint, UnaryOperator<OtcConfig> tweak, TimeSource time) {
    EmbeddedServers servers = EmbeddedServers.get();
    String schema = MigratedSchema.create(servers, hint);
    OtcConfig config = tweak.apply(testConfig(servers, schema, servers.newKeyPrefix(hint)));
    return new TestStack(servers, schema, new Components(config, time));
  }

  /**
   * A stack whose payment gateway talks to {@code wechat} through the real SDK, as the default
   * tenant's merchant. {@code readTimeout} bounds each WeChat call (tests of hanging calls keep it
   * short).
   */
  public static TestStack withWeChat(String hint, WeChatPaySimulator wechat, Duration readTimeout) {
    EmbeddedServers servers = EmbeddedServers.get();
    String schema = MigratedSchema.create(servers, hint);
    OtcConfig config = testConfig(servers, schema, servers.newKeyPrefix(hint));
    return new TestStack(
        servers, schema, new Components(config, null, gatewayFor(wechat, readTimeout)));
  }

  public static TestStack withWeChat(String hint, WeChatPaySimulator wechat) {
    return withWeChat(hint, wechat, Duration.ofSeconds(2));
  }

  /**
   * A stack whose configuration is {@link #testConfig} with {@code overrides} (OTC_* names) on top,
   * e.g. another OTC_REDIS_URI for a test that restarts its own Redis, or a shorter
   * OTC_CLAIM_LEASE_MS. {@code gateway} may be null (payments off).
   */
  public static TestStack withOverrides(
      String hint, Map<String, String> overrides, PaymentGateway gateway) {
    return withEnvironment(
        hint,
        env -> {
          env.putAll(overrides);
          return env;
        },
        gateway);
  }

  /**
   * A stack whose test environment (OTC_* names, OTC_MYSQL_URL already naming the new schema) is
   * rewritten by {@code tweak}: e.g. the fault tests point OTC_MYSQL_URL at a TCP proxy in front of
   * MariaDB. {@code gateway} may be null (payments off).
   */
  public static TestStack withEnvironment(
      String hint, UnaryOperator<Map<String, String>> tweak, PaymentGateway gateway) {
    return withEnvironment(hint, tweak, null, gateway);
  }

  /** Like the above with {@code time} replacing Redis TIME (null keeps it). */
  public static TestStack withEnvironment(
      String hint,
      UnaryOperator<Map<String, String>> tweak,
      TimeSource time,
      PaymentGateway gateway) {
    EmbeddedServers servers = EmbeddedServers.get();
    String schema = MigratedSchema.create(servers, hint);
    Map<String, String> env =
        tweak.apply(testEnvironment(servers, schema, servers.newKeyPrefix(hint)));
    return new TestStack(
        servers, schema, new Components(OtcConfig.fromEnvironment(env), time, gateway));
  }

  /**
   * Like {@link #withWeChat(String, WeChatPaySimulator)}, with {@code urlOptions} (e.g. {@code
   * useAffectedRows=true}) appended to the JDBC URL, as an operator's URL may carry them.
   */
  public static TestStack withWeChatAndUrlOptions(
      String hint, WeChatPaySimulator wechat, String urlOptions) {
    return withUrlOptions(hint, urlOptions, gatewayFor(wechat, Duration.ofSeconds(2)));
  }

  /** A stack with {@code urlOptions} appended to its JDBC URL; {@code gateway} may be null. */
  public static TestStack withUrlOptions(String hint, String urlOptions, PaymentGateway gateway) {
    EmbeddedServers servers = EmbeddedServers.get();
    String schema = MigratedSchema.create(servers, hint);
    Map<String, String> env = testEnvironment(servers, schema, servers.newKeyPrefix(hint));
    String url = env.get("OTC_MYSQL_URL");
    env.put("OTC_MYSQL_URL", url + (url.contains("?") ? "&" : "?") + urlOptions);
    return new TestStack(
        servers, schema, new Components(OtcConfig.fromEnvironment(env), null, gateway));
  }

  /** The schema name of this stack, e.g. to find its connections in the process list. */
  public String schema() {
    return schema;
  }

  /** A gateway for the "default" tenant with the simulator's merchant account and keys. */
  public static PaymentGateway gatewayFor(WeChatPaySimulator wechat, Duration readTimeout) {
    return new WeChatPayGateway(
        new StaticMerchantDirectory(Map.of("default", credentialsFor(wechat))),
        Clock.systemUTC(),
        GatewaySettings.production().withReadTimeout(readTimeout).withBaseUrl(wechat.baseUrl()));
  }

  public static MerchantCredentials credentialsFor(WeChatPaySimulator wechat) {
    return new MerchantCredentials(
        wechat.mchid(),
        wechat.appid(),
        wechat.merchantSerialNumber(),
        wechat.merchantPrivateKeyPem(),
        wechat.apiV3Key(),
        wechat.platformPublicKeyId(),
        wechat.platformPublicKeyPem(),
        "https://mall.example.com/wechatpay/notify");
  }

  /**
   * Like {@link #create(String, UnaryOperator, TimeSource)}, with Redis in cluster mode: {@code
   * OTC_REDIS_URI} = {@code clusterUri} (one seed node; Lettuce discovers the rest) and {@code
   * OTC_REDIS_CLUSTER} = true. MySQL stays the JVM's shared server.
   */
  public static TestStack createOnCluster(
      String hint, String clusterUri, UnaryOperator<OtcConfig> tweak, TimeSource time) {
    return create(hint, c -> tweak.apply(onClusterRedis(c, clusterUri)), time);
  }

  private static OtcConfig onClusterRedis(OtcConfig c, String clusterUri) {
    return c.toBuilder().redisUri(clusterUri).redisCluster(true).build();
  }

  /**
   * A second wiring over the same schema and keys (another "worker"), whose clock is Redis TIME
   * shifted by {@code skewMillis}. Closing it closes its clients only.
   */
  public static TestStack sharing(TestStack other, long skewMillis) {
    return sharing(other, redisTime -> redisTime.skewed(skewMillis));
  }

  /**
   * A second wiring over the same schema and keys whose clock is {@code clock} applied to Redis
   * TIME (a skew, a counter of reads). Closing it closes its clients only.
   */
  public static TestStack sharing(TestStack other, UnaryOperator<TimeSource> clock) {
    Components base = other.app;
    TimeSource time = clock.apply(new io.ordertimeout.redis.RedisTimeSource(base.redis().sync()));
    return new TestStack(
        other.servers, other.schema, new Components(base.config(), time, base.gateway()));
  }

  /**
   * Defaults for tests: a bigger pool, 4 shards, quick polls, short blocking reads and no
   * invocation margin.
   */
  public static OtcConfig testConfig(EmbeddedServers servers, String schema, String keyPrefix) {
    return OtcConfig.fromEnvironment(testEnvironment(servers, schema, keyPrefix));
  }

  private static Map<String, String> testEnvironment(
      EmbeddedServers servers, String schema, String keyPrefix) {
    Map<String, String> env = new HashMap<>();
    env.put("OTC_MYSQL_URL", servers.jdbcUrl(schema));
    env.put("OTC_MYSQL_USER", servers.mysqlUser());
    env.put("OTC_MYSQL_PASSWORD", servers.mysqlPassword());
    env.put("OTC_DB_POOL_SIZE", "8");
    env.put("OTC_REDIS_URI", servers.redisUri());
    env.put("OTC_KEY_PREFIX", keyPrefix);
    env.put("OTC_TIMER_SHARDS", "4");
    env.put("OTC_SWEEP_POLL_MS", "20");
    // a consumer's blocking read waits 100 ms for new entries, not the production 1 s: a redelivery
    // (idle past the visibility, XAUTOCLAIMed at the next pass) and terminate() wait on it
    env.put("OTC_STREAM_BLOCK_MS", "100");
    env.put("OTC_INVOCATION_MARGIN_MS", "0");
    // the schema is a migrated copy (MigratedSchema); five of the six functions start this way in
    // production too. MigrateOnStartTest covers the admin function's start, which migrates.
    env.put("OTC_MIGRATE_ON_START", "false");
    return env;
  }

  /** Closes the connection pool: every later query fails as an unreachable database's would. */
  public void closeDataSource() {
    app().dataSource().close();
  }

  public Components app() {
    return app;
  }

  public EmbeddedServers servers() {
    return servers;
  }

  public void seedSku(String skuId, long quantity) {
    update(
        "INSERT INTO stock (tenant_id, sku_id, available, total) VALUES ('default', ?, ?, ?)",
        skuId,
        quantity,
        quantity);
  }

  public void seedCoupon(String couponId, String owner) {
    update(
        "INSERT INTO coupons (tenant_id, coupon_id, owner_user_id) VALUES ('default', ?, ?)",
        couponId,
        owner);
  }

  /** Places an order through the real use case. */
  public Placed place(
      String orderId, String userId, int timeoutSeconds, String couponId, OrderItem... items) {
    return app.placeOrders()
        .place(
            new PlaceOrderCommand(
                orderId, "default", userId, List.of(items), couponId, 100, timeoutSeconds));
  }

  /**
   * Writes {@code count} UNPAID orders the way placing them would (order, items, RESERVE ledger,
   * snapshot, reserved stock) in a few multi-row statements, and schedules their timers: seeding
   * 10,000 orders one placement at a time would dominate a test's run time. Deadlines are {@code
   * expireIn} from the DB's now.
   */
  public List<String> bulkPlace(
      String idPrefix, int count, Duration expireIn, IntFunction<OrderItem> item) {
    Map<String, BulkSeeder.Line> orders = new LinkedHashMap<>();
    for (int i = 0; i < count; i++) {
      OrderItem line = item.apply(i);
      orders.put(
          idPrefix + String.format("%08d", i), new BulkSeeder.Line(line.skuId(), line.quantity()));
    }
    app.timers()
        .scheduleAll(
            TenantIds.DEFAULT,
            DeadlineKind.PAYMENT_TIMEOUT,
            BulkSeeder.seedUnpaid(app.dataSource(), orders, expireIn));
    return new ArrayList<>(orders.keySet());
  }

  /**
   * One relay pass of the outbox to the Redis stream (no EventBridge bus): events are MySQL rows
   * first, and tests that read them off the stream relay them there. Here rather than in each test,
   * so the function modules' tests need no EventBridge type.
   */
  public int relayOutboxToStream() {
    return app().newRelay(io.ordertimeout.outbox.RelaySettings.defaults(), null).relayOnce();
  }

  /**
   * Checks the invariants 1-5 of docs/concepts/design.md on this test's schema; throws
   * AssertionError on any violation.
   */
  public void assertInvariants() {
    new InvariantChecker(app.dataSource()).assertHolds();
  }

  public long count(String sql, Object... args) {
    return sql(
        c -> {
          try (PreparedStatement ps = prepare(c, sql, args);
              ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
          }
        });
  }

  public int update(String sql, Object... args) {
    return sql(
        c -> {
          try (PreparedStatement ps = prepare(c, sql, args)) {
            return ps.executeUpdate();
          }
        });
  }

  /**
   * Runs one statement outside the system's code: the snapshot tests use it to compare before and
   * after.
   */
  public List<String> dump(String sql) {
    return sql(
        c -> {
          List<String> rows = new ArrayList<>();
          try (Statement st = c.createStatement();
              ResultSet rs = st.executeQuery(sql)) {
            int columns = rs.getMetaData().getColumnCount();
            while (rs.next()) {
              StringBuilder row = new StringBuilder();
              for (int i = 1; i <= columns; i++) {
                row.append(rs.getString(i)).append('|');
              }
              rows.add(row.toString());
            }
          }
          return rows;
        });
  }

  /** Every table's rows, for tests that assert a refused request changed nothing. */
  public List<String> databaseState() {
    List<String> state = new ArrayList<>();
    for (String table :
        List.of(
            "orders",
            "order_items",
            "stock",
            "coupons",
            "stock_movements",
            "order_snapshots",
            "paid_after_close")) {
      state.add("## " + table);
      state.addAll(dump("SELECT * FROM " + table + " ORDER BY 1, 2"));
    }
    return state;
  }

  /** Every Redis key of this test with its type and size. */
  public List<String> redisState() {
    var redis = app.redis().sync();
    List<String> keys = new ArrayList<>(redis.keys(app.config().keyPrefix() + ":*"));
    keys.sort(null);
    List<String> state = new ArrayList<>();
    for (String key : keys) {
      String type = redis.type(key);
      long size =
          "zset".equals(type) ? redis.zcard(key) : "stream".equals(type) ? redis.xlen(key) : 1;
      state.add(key + " " + type + " " + size);
    }
    return state;
  }

  @FunctionalInterface
  public interface SqlWork<T> {
    T run(Connection c) throws SQLException;
  }

  public <T> T sql(SqlWork<T> work) {
    try (Connection c = app.dataSource().getConnection()) {
      return work.run(c);
    } catch (SQLException e) {
      throw new IllegalStateException("test SQL failed: " + e.getMessage(), e);
    }
  }

  private static PreparedStatement prepare(Connection c, String sql, Object... args)
      throws SQLException {
    PreparedStatement ps = c.prepareStatement(sql);
    for (int i = 0; i < args.length; i++) {
      ps.setObject(i + 1, args[i]);
    }
    return ps;
  }

  @Override
  public void close() {
    try {
      var redis = app.redis().sync();
      List<String> keys = redis.keys(app.config().keyPrefix() + ":*");
      if (!keys.isEmpty()) {
        redis.del(keys.toArray(String[]::new));
      }
    } catch (RuntimeException e) {
      // Redis may be down on purpose in a fault test; the key prefix is unique anyway.
    } finally {
      app.close();
      servers.dropSchema(schema);
    }
  }
}
