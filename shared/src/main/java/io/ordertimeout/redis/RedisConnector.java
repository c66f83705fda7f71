package io.ordertimeout.redis;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
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
   * recovered 10 s after the outage (FaultInjectionTest, issue 21); one attempt a second per
   * environment costs Redis nothing.
   */
  static final Delay RECONNECT_DELAY =
      Delay.exponential(Duration.ofMillis(100), Duration.ofSeconds(1), 2, TimeUnit.MILLISECONDS);

  private final AutoCloseable client;
  private final Supplier<Dedicated> opener;
  private final Dedicated shared;

  private RedisConnector(AutoCloseable client, Supplier<Dedicated> opener) {
    this.client = client;
    this.opener = opener;
    this.shared = opener.get();
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
    RedisURI redisUri = RedisURI.create(uri);
    redisUri.setTimeout(COMMAND_TIMEOUT);
    SocketOptions socket =
        SocketOptions.builder().connectTimeout(Duration.ofSeconds(2)).keepAlive(true).build();
    TimeoutOptions timeouts = TimeoutOptions.enabled(COMMAND_TIMEOUT);
    ClientResources resources = ClientResources.builder().reconnectDelay(RECONNECT_DELAY).build();
    if (cluster) {
      RedisClusterClient client = RedisClusterClient.create(resources, redisUri);
      client.setOptions(
          ClusterClientOptions.builder()
              .socketOptions(socket)
              .timeoutOptions(timeouts)
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
        ClientOptions.builder().socketOptions(socket).timeoutOptions(timeouts).build());
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

  public RedisClusterCommands<String, String> sync() {
    return shared.sync();
  }

  /** Opens a new connection; the caller closes it. */
  public Dedicated openDedicated() {
    return opener.get();
  }

  @Override
  public void close() {
    shared.close();
    try {
      client.close();
    } catch (Exception e) {
      throw new IllegalStateException("cannot shut the Redis client down", e);
    }
  }
}
