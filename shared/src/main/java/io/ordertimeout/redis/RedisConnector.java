package io.ordertimeout.redis;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * One Lettuce client and connection per execution environment, standalone or ElastiCache cluster
 * mode; the rest of the code sees only {@link RedisClusterCommands}, which both modes implement.
 */
public final class RedisConnector implements AutoCloseable {
  /**
   * Commands time out after 2 s: a Redis round trip is sub-millisecond, and a stuck one must fail
   * the pass (the loop retries) rather than hold a Lambda invocation for Lettuce's default 60 s.
   */
  static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(2);

  /**
   * Reconnects back off from 100 ms to at most 1 s. Lettuce's default doubles up to 30 s: after
   * Redis was unreachable for 10 s its next attempt came ~6 s after Redis was back, and closes
   * recovered 10 s after the outage (FaultInjectionTest); one attempt a second per environment
   * costs Redis nothing.
   */
  static final Delay RECONNECT_DELAY =
      Delay.exponential(Duration.ofMillis(100), Duration.ofSeconds(1), 2, TimeUnit.MILLISECONDS);

  private final AutoCloseable client;
  private final Supplier<Dedicated> opener;
  private final RedisClusterCommands<String, String> sharedCommands;

  /** The shared connection; null between {@link #disconnect} and the next command or reconnect. */
  private volatile Dedicated shared;

  @SuppressWarnings("unchecked")
  private RedisConnector(AutoCloseable client, Supplier<Dedicated> opener) {
    this.client = client;
    this.opener = opener;
    this.shared = opener.get();
    // One stable command interface for the environment's life, forwarding to whichever shared
    // connection is current: everything built at init holds it, and a SnapStart restore swaps the
    // connection under it (disconnect / reconnect) without rebuilding them.
    this.sharedCommands =
        (RedisClusterCommands<String, String>)
            Proxy.newProxyInstance(
                RedisClusterCommands.class.getClassLoader(),
                new Class<?>[] {RedisClusterCommands.class},
                this::forward);
  }

  private Object forward(Object proxy, Method method, Object[] args) throws Throwable {
    switch (method.getName()) {
      case "equals":
        if (method.getParameterCount() == 1) {
          return proxy == args[0];
        }
        break;
      case "hashCode":
        if (method.getParameterCount() == 0) {
          return System.identityHashCode(proxy);
        }
        break;
      case "toString":
        if (method.getParameterCount() == 0) {
          return "RedisConnector.shared";
        }
        break;
      default:
        break;
    }
    try {
      return method.invoke(current().sync(), args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  private Dedicated current() {
    Dedicated c = shared;
    if (c != null) {
      return c;
    }
    synchronized (this) {
      if (shared == null) {
        shared = opener.get();
      }
      return shared;
    }
  }

  /**
   * Closes the shared connection (SnapStart's beforeCheckpoint: no socket goes into the snapshot).
   * The next command, or {@link #reconnect}, opens a new one.
   */
  public synchronized void disconnect() {
    Dedicated c = shared;
    shared = null;
    if (c != null) {
      c.close();
    }
  }

  /** Opens a new shared connection unless one is open (SnapStart's afterRestore). */
  public void reconnect() {
    current();
  }

  /**
   * A connection of its own on the same client, for blocking commands (XREADGROUP BLOCK): Lettuce
   * pipelines every command of a connection, so a blocking read on the shared one would hold every
   * other command of the environment behind it for up to the block time.
   */
  public record Dedicated(
      StatefulConnection<String, String> connection, RedisClusterCommands<String, String> sync)
      implements AutoCloseable {
    @Override
    public void close() {
      connection.close();
    }
  }

  public static RedisConnector connect(String uri, boolean cluster) {
    return connect(uri, cluster, RedisSecurity.DEFAULT);
  }

  /**
   * As above, authenticating through {@code security}'s credentials provider when it has one (the
   * URI then carries no password) and, for a {@code rediss://} URI, verifying the server against
   * its trust (the JDK's trust store by default) and the URI's host name ({@link RedisSecurity}).
   */
  public static RedisConnector connect(String uri, boolean cluster, RedisSecurity security) {
    RedisURI redisUri = RedisURI.create(uri);
    redisUri.setTimeout(COMMAND_TIMEOUT);
    if (security.credentials() != null) {
      redisUri.setCredentialsProvider(security.credentials());
    }
    SocketOptions socket =
        SocketOptions.builder().connectTimeout(Duration.ofSeconds(2)).keepAlive(true).build();
    TimeoutOptions timeouts = TimeoutOptions.enabled(COMMAND_TIMEOUT);
    SslOptions ssl = security.sslOptions(redisUri.getHost());
    ClientResources resources = ClientResources.builder().reconnectDelay(RECONNECT_DELAY).build();
    if (cluster) {
      RedisClusterClient client = RedisClusterClient.create(resources, redisUri);
      client.setOptions(
          ClusterClientOptions.builder()
              .socketOptions(socket)
              .timeoutOptions(timeouts)
              .sslOptions(ssl)
              .topologyRefreshOptions(
                  ClusterTopologyRefreshOptions.builder()
                      .enableAllAdaptiveRefreshTriggers()
                      .build())
              .build());
      return new RedisConnector(
          () -> {
            client.shutdown();
            resources.shutdown(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
          },
          () -> {
            StatefulRedisClusterConnection<String, String> c = client.connect();
            return new Dedicated(c, c.sync());
          });
    }
    RedisClient client = RedisClient.create(resources, redisUri);
    client.setOptions(
        ClientOptions.builder()
            .socketOptions(socket)
            .timeoutOptions(timeouts)
            .sslOptions(ssl)
            .build());
    return new RedisConnector(
        () -> {
          client.shutdown();
          resources.shutdown(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
        },
        () -> {
          StatefulRedisConnection<String, String> c = client.connect();
          return new Dedicated(c, c.sync());
        });
  }

  /** The environment's shared connection's commands (stable across disconnect / reconnect). */
  public RedisClusterCommands<String, String> sync() {
    return sharedCommands;
  }

  /** Opens a new connection; the caller closes it. */
  public Dedicated openDedicated() {
    return opener.get();
  }

  @Override
  public void close() {
    disconnect();
    try {
      client.close();
    } catch (Exception e) {
      throw new IllegalStateException("cannot shut the Redis client down", e);
    }
  }
}
