package io.ordertimeout.config;

import java.util.Objects;

/**
 * The Redis side: the URI (credentials masked by toString), cluster or standalone, the key prefix
 * every key of this deployment starts with, and how many timer shards the timers are spread over.
 */
public record RedisSettings(String uri, boolean cluster, String keyPrefix, int timerShards) {
  public RedisSettings {
    Objects.requireNonNull(uri, "OTC_REDIS_URI");
    Objects.requireNonNull(keyPrefix, "OTC_KEY_PREFIX");
    OtcConfig.require(
        keyPrefix.matches("[A-Za-z0-9_.-]{1,32}"),
        "OTC_KEY_PREFIX must be 1-32 of [A-Za-z0-9_.-] (no braces or colons), was '"
            + keyPrefix
            + "'");
    OtcConfig.require(
        timerShards >= 1 && timerShards <= 1024,
        "OTC_TIMER_SHARDS must be 1..1024, was " + timerShards);
  }

  @Override
  public String toString() {
    return "redisUri="
        + Masked.uri(uri)
        + ", redisCluster="
        + cluster
        + ", keyPrefix="
        + keyPrefix
        + ", timerShards="
        + timerShards;
  }
}
