package io.ordertimeout.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.embedded.EmbeddedServers;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ShardLeasesTest {
  private final EmbeddedServers servers = EmbeddedServers.get();
  private final RedisConnector redis = RedisConnector.connect(servers.redisUri(), false);
  private final ShardLeases leases = new ShardLeases(redis.sync());
  private final String key = servers.newKeyPrefix("leases") + ":lease:{0}";

  @AfterEach
  void tearDown() {
    redis.sync().del(key);
    redis.close();
  }

  @Test
  void oneHolderAtATimeWhoRenewsAndReleases() {
    assertThat(leases.acquire(key, "sweeper-a", 10_000)).isTrue();
    assertThat(leases.acquire(key, "sweeper-b", 10_000)).isFalse();
    assertThat(leases.acquire(key, "sweeper-a", 60_000)).isTrue();
    assertThat(redis.sync().pttl(key)).isGreaterThan(10_000);

    assertThat(leases.release(key, "sweeper-b")).isFalse();
    assertThat(redis.sync().get(key)).isEqualTo("sweeper-a");
    assertThat(leases.release(key, "sweeper-a")).isTrue();

    assertThat(redis.sync().exists(key)).isZero();
    assertThat(leases.acquire(key, "sweeper-b", 10_000)).isTrue();
    assertThat(redis.sync().get(key)).isEqualTo("sweeper-b");
  }

  @Test
  void anExpiredLeaseGoesToTheNextCaller() {
    assertThat(leases.acquire(key, "sweeper-a", 10_000)).isTrue();
    // Expire it the way time would, without waiting for it.
    redis.sync().pexpire(key, 1);
    while (redis.sync().exists(key) > 0) {
      Thread.onSpinWait();
    }

    assertThat(leases.acquire(key, "sweeper-b", 10_000)).isTrue();
    assertThat(leases.release(key, "sweeper-a")).isFalse();
    assertThat(redis.sync().get(key)).isEqualTo("sweeper-b");
  }
}
