package io.ordertimeout.redis;

import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.util.List;

/**
 * Exclusive, expiring leases: one active sweeper per timer shard. A lease only avoids wasted work
 * (two sweepers claiming and querying WeChat for the same shard); correctness rests on the claim
 * script and the database's conditional updates, because a lease can expire while its holder still
 * works.
 */
public final class ShardLeases {
  private static final LuaScript ACQUIRE = LuaScript.load("acquireLease-1");
  private static final LuaScript RELEASE = LuaScript.load("releaseLease-1");
  private static final LuaScript SWEEPERS = LuaScript.load("sweepers-1");

  private final RedisClusterCommands<String, String> redis;

  public ShardLeases(RedisClusterCommands<String, String> redis) {
    this.redis = redis;
  }

  /** Takes or renews the lease; true when {@code token} holds it for the next {@code ttlMillis}. */
  public boolean acquire(String key, String token, long ttlMillis) {
    Long held =
        ACQUIRE.run(
            redis, ScriptOutputType.INTEGER, new String[] {key}, token, Long.toString(ttlMillis));
    return held != null && held == 1L;
  }

  /** The token holding the lease, or null when it is free. */
  public String holder(String key) {
    return redis.get(key);
  }

  /** Releases the lease if {@code token} still holds it. */
  public boolean release(String key, String token) {
    Long released = RELEASE.run(redis, ScriptOutputType.INTEGER, new String[] {key}, token);
    return released != null && released == 1L;
  }

  /**
   * Joins (or renews {@code token} in) the registry of live sweeper runs for {@code ttlMillis};
   * answers the live runs' tokens, sorted (so every run ranks them alike; RunTokens#BY_START for
   * start order).
   */
  public List<String> join(String registryKey, String token, long ttlMillis) {
    List<Object> live =
        SWEEPERS.run(
            redis,
            ScriptOutputType.MULTI,
            new String[] {registryKey},
            token,
            Long.toString(ttlMillis),
            "1");
    return live.stream().map(String.class::cast).sorted().toList();
  }

  /** Leaves the registry of live sweeper runs. */
  public void leave(String registryKey, String token) {
    SWEEPERS.run(redis, ScriptOutputType.MULTI, new String[] {registryKey}, token, "0", "0");
  }
}
