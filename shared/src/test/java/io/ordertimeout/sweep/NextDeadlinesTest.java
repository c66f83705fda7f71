package io.ordertimeout.sweep;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.redis.RedisConnector;
import io.ordertimeout.redis.TimerIndex;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * As on a cluster, one next-deadline call per shard; {@link NextDeadlinesOneCallTest} runs the same
 * cases where one call reads every shard (a single-node Redis).
 */
class NextDeadlinesTest {
  private static final long NOW = 1_800_000_000_000L;
  private static final long POLL = 1_000;

  private final EmbeddedServers servers = EmbeddedServers.get();
  private final RedisConnector redis = RedisConnector.connect(servers.redisUri(), false);
  private final TimerIndex timers =
      new TimerIndex(redis.sync(), servers.newKeyPrefix("next-deadlines"), 4, crossShardCalls());

  /** Whether the timer index reads several shards in one call. */
  boolean crossShardCalls() {
    return false;
  }

  /** A hand-driven nanoTime: the one-poll trust is tested without waiting for it. */
  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);

  private final NextDeadlines deadlines =
      new NextDeadlines(timers, Duration.ofMillis(POLL), nanos::get);
  private final List<Integer> held = List.of(0, 1, 2, 3);

  @AfterEach
  void tearDown() {
    for (int shard = 0; shard < timers.shards(); shard++) {
      redis.sync().del(timers.timersKey(TenantIds.DEFAULT, shard, DeadlineKind.PAYMENT_TIMEOUT));
    }
    redis.close();
  }

  /** An order id that falls into {@code shard}. */
  private String orderIn(int shard, String hint) {
    return IntStream.range(0, 1_000)
        .mapToObj(i -> hint + "-" + i)
        .filter(id -> timers.shardOf(id) == shard)
        .findFirst()
        .orElseThrow();
  }

  private void advanceMillis(long millis) {
    nanos.addAndGet(millis * 1_000_000);
  }

  @Test
  void theWaitEndsAtTheEarliestScoreOfTheHeldShardsAndEmptyShardsDoNotShortenIt() {
    timers.schedule(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, orderIn(1, "late"), NOW + 700);
    timers.schedule(
        TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, orderIn(2, "early"), NOW + 300);

    assertThat(deadlines.trusted()).isFalse();
    assertThat(deadlines.waitMillis(held, java.util.List.of(TenantIds.DEFAULT), NOW))
        .isEqualTo(300);

    assertThat(deadlines.trusted()).isTrue();
    assertThat(deadlines.laterThan(2, NOW + 299)).isTrue();
    assertThat(deadlines.laterThan(2, NOW + 300)).isFalse();
    assertThat(deadlines.laterThan(0, Long.MAX_VALUE - 1)).as("empty shard 0").isTrue();
    // nothing held: one poll
    assertThat(deadlines.waitMillis(List.of(), List.of(TenantIds.DEFAULT), NOW)).isEqualTo(POLL);
  }

  @Test
  void withinOnePollOnlyForgottenShardsAreReadAgain() {
    timers.schedule(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, orderIn(1, "a"), NOW + 700);
    assertThat(deadlines.waitMillis(held, java.util.List.of(TenantIds.DEFAULT), NOW))
        .isEqualTo(700);

    // two earlier timers arrive in Redis; 100 ms later the cache is still trusted
    timers.schedule(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, orderIn(1, "b"), NOW + 400);
    timers.schedule(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, orderIn(3, "c"), NOW + 200);
    advanceMillis(100);
    assertThat(deadlines.waitMillis(held, java.util.List.of(TenantIds.DEFAULT), NOW + 100))
        .as("cached: 700 - 100")
        .isEqualTo(600);

    // shard 1 was claimed meanwhile: it alone is read again, shard 3 stays cached as empty
    deadlines.forget(1);
    assertThat(deadlines.laterThan(1, NOW)).isFalse();
    assertThat(deadlines.waitMillis(held, java.util.List.of(TenantIds.DEFAULT), NOW + 100))
        .isEqualTo(300);
    assertThat(deadlines.laterThan(3, NOW + 500)).as("shard 3 not read").isTrue();
  }

  @Test
  void afterOnePollTheCacheIsNoLongerTrustedAndEveryShardIsReadAgain() {
    timers.schedule(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, orderIn(0, "a"), NOW + 5_000);
    assertThat(deadlines.waitMillis(held, java.util.List.of(TenantIds.DEFAULT), NOW))
        .isEqualTo(POLL);
    timers.schedule(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, orderIn(3, "b"), NOW + 1_050);

    // 900 ms after the full read: trusted, and the wait is cut to the 100 ms left of the poll
    advanceMillis(900);
    assertThat(deadlines.trusted()).isTrue();
    assertThat(deadlines.waitMillis(held, java.util.List.of(TenantIds.DEFAULT), NOW + 900))
        .isEqualTo(100);

    advanceMillis(100);
    assertThat(deadlines.trusted()).isFalse();
    assertThat(deadlines.waitMillis(held, java.util.List.of(TenantIds.DEFAULT), NOW + 1_000))
        .isEqualTo(50);
    assertThat(deadlines.trusted()).isTrue();
  }
}
