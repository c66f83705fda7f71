package io.ordertimeout;

import com.zaxxer.hikari.HikariDataSource;
import io.ordertimeout.api.PlaceOrderRequests;
import io.ordertimeout.close.OrderCloser;
import io.ordertimeout.config.OtcConfig;
import io.ordertimeout.db.Database;
import io.ordertimeout.db.Tx;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.order.CancelOrderService;
import io.ordertimeout.order.OrderStore;
import io.ordertimeout.order.PlaceOrderService;
import io.ordertimeout.redis.RedisConnector;
import io.ordertimeout.redis.RedisTimeSource;
import io.ordertimeout.redis.ShardLeases;
import io.ordertimeout.redis.TimeSource;
import io.ordertimeout.redis.TimerIndex;
import io.ordertimeout.stream.ConsumerNames;
import io.ordertimeout.stream.DeadLetters;
import io.ordertimeout.stream.EventStream;
import io.ordertimeout.stream.OrderEvents;
import io.ordertimeout.stream.StreamConsumer;
import io.ordertimeout.sweep.TimeoutSweeper;
import java.time.Duration;

/**
 * The wiring of one execution environment: clients built once (Lambda init), use cases sharing
 * them. Handlers hold one of these in a static field; tests build one per test with their own
 * schema and key prefix.
 */
public final class OrderTimeout implements AutoCloseable {
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
  private final PlaceOrderService placeOrders;
  private final PlaceOrderRequests placeOrderRequests;
  private final OrderCloser closer;
  private final EventStream stream;
  private final OrderEvents events;
  private final CancelOrderService cancels;
  private final DeadLetters deadLetters;

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
    this.stream = new EventStream(redis.sync(), config.keyPrefix(), config.stream().maxLen());
    this.events = new OrderEvents(stream, metrics);
    this.deadLetters = new DeadLetters(tx, redis.sync(), stream);
    this.cancels = new CancelOrderService(orders, events);
    this.placeOrders = new PlaceOrderService(tx, timers, metrics, events);
    this.placeOrderRequests =
        new PlaceOrderRequests(
            (int) config.defaultOrderTimeout().toSeconds(),
            (int) config.maxOrderTimeout().toSeconds());
    this.closer = new OrderCloser(tx, timers, time, metrics, events);
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
        events,
        time,
        metrics,
        new TimeoutSweeper.Settings(
            config.sweepBatch(),
            config.claimLease(),
            config.sweepPoll(),
            config.invocationMargin()));
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
    try {
      redis.close();
    } finally {
      dataSource.close();
    }
  }
}
