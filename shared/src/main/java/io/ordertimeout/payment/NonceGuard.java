package io.ordertimeout.payment;

import io.lettuce.core.SetArgs;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.time.Duration;

/**
 * Remembers the Wechatpay-Nonce of notifications we acted on, so the same signed request cannot be
 * played twice. Keys are {@code <prefix>:wxnonce:<tenant>:<nonce>}, one per notification, set with
 * NX: tenants have their own merchants, and one tenant's nonce never refuses another's
 * notification.
 *
 * <p>Why 10 minutes: the gateway refuses a Wechatpay-Timestamp more than 5 minutes off our clock in
 * either direction, so a signed request is usable for at most a 10-minute window; a nonce
 * remembered that long outlives every request that could carry it.
 */
public final class NonceGuard {
  static final Duration TTL = Duration.ofMinutes(10);

  private final RedisClusterCommands<String, String> redis;
  private final String prefix;

  public NonceGuard(RedisClusterCommands<String, String> redis, String prefix) {
    this.redis = redis;
    this.prefix = prefix;
  }

  /** True the first time a nonce is presented within the TTL; false for a replay. */
  public boolean firstUse(String tenantId, String nonce) {
    return "OK"
        .equals(redis.set(key(tenantId, nonce), "1", SetArgs.Builder.nx().px(TTL.toMillis())));
  }

  /**
   * Forgets a nonce whose request failed before it changed anything, so a redelivery is judged
   * again.
   */
  public void forget(String tenantId, String nonce) {
    redis.del(key(tenantId, nonce));
  }

  private String key(String tenantId, String nonce) {
    return prefix + ":wxnonce:" + tenantId + ":" + nonce;
  }
}
