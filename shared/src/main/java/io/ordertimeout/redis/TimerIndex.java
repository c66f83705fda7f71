package io.ordertimeout.redis;

import io.lettuce.core.ScoredValue;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.zip.CRC32;

/**
 * The timer index: one sorted set per shard, score = deadline epoch ms, member = order id.
 *
 * <p>Keys are {@code <prefix>:{t<shard>}:timers}; the hash tag puts each shard (and its sweeper
 * lease) in one cluster slot, so every script touches one slot, and different shards spread over
 * the cluster's nodes.
 */
public final class TimerIndex {
  private static final LuaScript CLAIM = LuaScript.load("claimDue-1");

  private final RedisClusterCommands<String, String> redis;
  private final String prefix;
  private final int shards;

  public TimerIndex(RedisClusterCommands<String, String> redis, String prefix, int shards) {
    this.redis = redis;
    this.prefix = prefix;
    this.shards = shards;
  }

  public int shards() {
    return shards;
  }

  public int shardOf(String orderId) {
    CRC32 crc = new CRC32();
    crc.update(orderId.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    return (int) (crc.getValue() % shards);
  }

  public String timersKey(int shard) {
    return prefix + ":{t" + shard + "}:timers";
  }

  public String leaseKey(int shard) {
    return prefix + ":{t" + shard + "}:sweeper";
  }

  /** Records how many shards this prefix's timers are written to (set by the first start). */
  public String shardCountKey() {
    return prefix + ":timer-shards";
  }

  /**
   * Records this index's shard count at the first start under this prefix, and refuses any other
   * count afterwards. An order's shard is its CRC modulo the count: with another count most orders
   * map to another shard, so closes would remove timers from the wrong shard (the old ones come
   * back after every claim lease until compensation removes them), and shards at or above a lower
   * count would never be swept nor audited again. Refusing keeps the hot path (one ZREM per shard)
   * free of a second mapping; resharding is an operator's step, spelled out in the error.
   *
   * @throws IllegalArgumentException when Redis records another count
   */
  public void requireShardCountUnchanged() {
    String key = shardCountKey();
    String mine = Integer.toString(shards);
    redis.setnx(key, mine);
    String recorded = redis.get(key);
    if (recorded == null || recorded.equals(mine)) {
      // null: deleted between the two commands (an operator resharding); the next start records.
      return;
    }
    throw new IllegalArgumentException(
        "invalid configuration: OTC_TIMER_SHARDS is "
            + shards
            + " but the timers under key prefix '"
            + prefix
            + "' are written to "
            + recorded
            + " shards (Redis key "
            + key
            + "); with "
            + shards
            + " orders would map to other shards and their timers be orphaned. Set"
            + " OTC_TIMER_SHARDS="
            + recorded
            + ", or reshard: stop the timeout-sweep and stream-consumer schedules, delete the keys "
            + prefix
            + ":{t*}:timers, "
            + prefix
            + ":{t*}:sweeper and "
            + key
            + ", start with OTC_TIMER_SHARDS="
            + shards
            + ", then run compensation until its report shows rescheduled=0 (it re-adds the timer of"
            + " every UNPAID order from MySQL and closes the overdue ones) and restart the"
            + " schedules");
  }

  /** Schedules (or moves) an order's timer. */
  public void schedule(String orderId, long deadlineMillis) {
    redis.zadd(timersKey(shardOf(orderId)), deadlineMillis, orderId);
  }

  /** Schedules many timers, one ZADD per shard. */
  public void scheduleAll(Map<String, Long> deadlines) {
    Map<Integer, List<ScoredValue<String>>> byShard = new TreeMap<>();
    deadlines.forEach(
        (id, at) ->
            byShard
                .computeIfAbsent(shardOf(id), s -> new ArrayList<>())
                .add(ScoredValue.just(at, id)));
    byShard.forEach(
        (shard, values) -> {
          for (int from = 0; from < values.size(); from += 1_000) {
            List<ScoredValue<String>> chunk =
                values.subList(from, Math.min(values.size(), from + 1_000));
            redis.zadd(timersKey(shard), chunk.toArray(ScoredValue[]::new));
          }
        });
  }

  /**
   * Claims up to {@code limit} due timers of a shard, hiding them from other claimers for {@code
   * leaseMillis}.
   */
  public List<String> claimDue(int shard, long nowMillis, long leaseMillis, int limit) {
    return CLAIM.run(
        redis,
        ScriptOutputType.MULTI,
        new String[] {timersKey(shard)},
        Long.toString(nowMillis),
        Long.toString(leaseMillis),
        Integer.toString(limit));
  }

  /** Removes timers whose orders are final (closed, paid) or handed elsewhere. */
  public void remove(Collection<String> orderIds) {
    Map<Integer, List<String>> byShard = new TreeMap<>();
    orderIds.forEach(id -> byShard.computeIfAbsent(shardOf(id), s -> new ArrayList<>()).add(id));
    byShard.forEach((shard, ids) -> redis.zrem(timersKey(shard), ids.toArray(String[]::new)));
  }

  public OptionalLong deadlineOf(String orderId) {
    Double score = redis.zscore(timersKey(shardOf(orderId)), orderId);
    return score == null ? OptionalLong.empty() : OptionalLong.of(score.longValue());
  }

  /** The earliest score of a shard: its next deadline or lease expiry. */
  public OptionalLong nextDeadline(int shard) {
    List<ScoredValue<String>> first = redis.zrangeWithScores(timersKey(shard), 0, 0);
    return first.isEmpty() ? OptionalLong.empty() : OptionalLong.of((long) first.get(0).getScore());
  }

  /** Timers across all shards: the backlog metric. */
  public long size() {
    long total = 0;
    for (int shard = 0; shard < shards; shard++) {
      total += redis.zcard(timersKey(shard));
    }
    return total;
  }
}
