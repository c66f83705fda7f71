package io.ordertimeout;

import com.zaxxer.hikari.HikariDataSource;
import io.ordertimeout.api.PlaceOrderRequests;
import io.ordertimeout.close.OrderCloser;
import io.ordertimeout.config.OtcConfig;
import io.ordertimeout.db.Database;
import io.ordertimeout.db.Tx;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.order.OrderStore;
import io.ordertimeout.order.PlaceOrderService;
import io.ordertimeout.redis.RedisConnector;
import io.ordertimeout.redis.RedisTimeSource;
import io.ordertimeout.redis.ShardLeases;
import io.ordertimeout.redis.TimeSource;
import io.ordertimeout.redis.TimerIndex;
import io.ordertimeout.sweep.TimeoutSweeper;

/**
 * The wiring of one execution environment: clients built once (Lambda init), use cases sharing
 * them. Handlers hold one of these in a static field; tests build one per test with their own
 * schema and key prefix.
 */
public final class OrderTimeout implements AutoCloseable {
  private final OtcConfig config;
  private final HikariDataSource dataSource;
  private final RedisConnector redis;
  private final Metrics metrics = new Metrics();
  private final Tx tx;
  private final TimerIndex timers;
  private final TimeSource time;
  private final OrderStore orders;
  private final PlaceOrderService placeOrders;
  private final PlaceOrderRequests placeOrderRequests;
  private final OrderCloser closer;

  public OrderTimeout(OtcConfig config) {
    this(config, null);
  }

  /**
   * {@code timeOverride} replaces Redis TIME (tests inject clock skew through it); null for
   * production.
   */
  public OrderTimeout(OtcConfig config, TimeSource timeOverride) {
    this.config = config;
    this.dataSource =
        Database.pool(
            config.mysqlUrl(),
            config.mysqlUser(),
            config.mysqlPassword(),
            config.dbPoolSize(),
            "otc-" + config.keyPrefix());
    try {
      if (config.migrateOnStart()) {
        Database.migrate(dataSource);
      }
      this.redis = RedisConnector.connect(config.redisUri(), config.redisCluster());
    } catch (RuntimeException e) {
      dataSource.close();
      throw e;
    }
    this.tx = new Tx(dataSource);
    this.timers = new TimerIndex(redis.sync(), config.keyPrefix(), config.timerShards());
    this.time = timeOverride != null ? timeOverride : new RedisTimeSource(redis.sync());
    this.orders = new OrderStore(tx);
    this.placeOrders = new PlaceOrderService(tx, timers, metrics);
    this.placeOrderRequests =
        new PlaceOrderRequests(
            (int) config.defaultOrderTimeout().toSeconds(),
            (int) config.maxOrderTimeout().toSeconds());
    this.closer = new OrderCloser(tx, timers, time, metrics);
  }

  public static OrderTimeout fromEnvironment() {
    return new OrderTimeout(OtcConfig.fromEnvironment(System.getenv()));
  }

  /** A new sweep loop for one invocation (its own lease token). */
  public TimeoutSweeper newSweeper() {
    return new TimeoutSweeper(
        timers,
        new ShardLeases(redis.sync()),
        closer,
        time,
        metrics,
        new TimeoutSweeper.Settings(
            config.sweepBatch(),
            config.claimLease(),
            config.sweepPoll(),
            config.invocationMargin(),
            // one closing transaction per pooled connection
            config.dbPoolSize()));
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

  public PlaceOrderService placeOrders() {
    return placeOrders;
  }

  public PlaceOrderRequests placeOrderRequests() {
    return placeOrderRequests;
  }

  public OrderCloser closer() {
    return closer;
  }

  @Override
  public void close() {
    try {
      redis.close();
    } finally {
      dataSource.close();
    }
  }
}
