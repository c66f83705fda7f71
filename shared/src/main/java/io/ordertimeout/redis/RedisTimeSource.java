package io.ordertimeout.redis;

import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.util.List;

/** Redis TIME in epoch milliseconds: one round trip of a few tens of microseconds. */
public final class RedisTimeSource implements TimeSource {
  private final RedisClusterCommands<String, String> redis;

  public RedisTimeSource(RedisClusterCommands<String, String> redis) {
    this.redis = redis;
  }

  @Override
  public long nowMillis() {
    List<String> time = redis.time();
    return Long.parseLong(time.get(0)) * 1_000 + Long.parseLong(time.get(1)) / 1_000;
  }
}
