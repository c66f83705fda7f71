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
import java.time.Duration;

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

  private final AutoCloseable client;
  private final StatefulConnection<String, String> connection;
  private final RedisClusterCommands<String, String> sync;

  private RedisConnector(
      AutoCloseable client,
      StatefulConnection<String, String> connection,
      RedisClusterCommands<String, String> sync) {
    this.client = client;
    this.connection = connection;
    this.sync = sync;
  }

  public static RedisConnector connect(String uri, boolean cluster) {
    RedisURI redisUri = RedisURI.create(uri);
    redisUri.setTimeout(COMMAND_TIMEOUT);
    SocketOptions socket =
        SocketOptions.builder().connectTimeout(Duration.ofSeconds(2)).keepAlive(true).build();
    TimeoutOptions timeouts = TimeoutOptions.enabled(COMMAND_TIMEOUT);
    if (cluster) {
      RedisClusterClient client = RedisClusterClient.create(redisUri);
      client.setOptions(
          ClusterClientOptions.builder()
              .socketOptions(socket)
              .timeoutOptions(timeouts)
              .topologyRefreshOptions(
                  ClusterTopologyRefreshOptions.builder()
                      .enableAllAdaptiveRefreshTriggers()
                      .build())
              .build());
      StatefulRedisClusterConnection<String, String> c = client.connect();
      return new RedisConnector(client::shutdown, c, c.sync());
    }
    RedisClient client = RedisClient.create(redisUri);
    client.setOptions(
        ClientOptions.builder().socketOptions(socket).timeoutOptions(timeouts).build());
    StatefulRedisConnection<String, String> c = client.connect();
    return new RedisConnector(client::shutdown, c, c.sync());
  }

  public RedisClusterCommands<String, String> sync() {
    return sync;
  }

  @Override
  public void close() {
    connection.close();
    try {
      client.close();
    } catch (Exception e) {
      throw new IllegalStateException("cannot shut the Redis client down", e);
    }
  }
}
