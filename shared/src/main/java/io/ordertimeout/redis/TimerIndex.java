package io.ordertimeout.redis;

import io.lettuce.core.ScoredValue;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.ordertimeout.domain.DeadlineKind;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.zip.CRC32;

/**
 * The timer index: per shard, one sorted set per {@link DeadlineKind}, score = deadline epoch ms,
 * member = the kind's member of its subject ({@code <code>:<id>}; the bare order id for the payment
 * timeout).
 *
 * <p>Keys are {@code <prefix>:{t<shard>}:timers} for the payment timeout (its key since the first
 * version) and {@code <prefix>:{t<shard>}:timers:<kind>} for the others; the hash tag puts each
 * shard (all its kinds, and its sweeper lease) in one cluster slot, so one script claims every kind
 * of a shard in one round trip, and different shards spread over the cluster's nodes. A subject's
 * shard is the CRC of its id: an order's deadlines of every kind live in the same shard.
 */
public final class TimerIndex {
  private static final LuaScript CLAIM = LuaScript.load("claimDue-2");
  private static final LuaScript NEXT_DUE = LuaScript.load("nextDue-1");

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

  /** The payment timeouts of a shard. */
  public String timersKey(int shard) {
    return prefix + ":{t" + shard + "}:timers";
  }

  /** The timers of one kind in a shard. */
  public String timersKey(int shard, DeadlineKind kind) {
    return kind == DeadlineKind.PAYMENT_TIMEOUT
        ? timersKey(shard)
        : timersKey(shard) + ":" + kind.label();
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
            + ":{t*}:timers and "
            + prefix
            + ":{t*}:timers:* (every deadline kind), "
            + prefix
            + ":{t*}:sweeper and "
            + key
            + ", start with OTC_TIMER_SHARDS="
            + shards
            + ", then run compensation until its report shows rescheduled=0, receipt_rescheduled=0,"
            + " complete_rescheduled=0 and coupon_rescheduled=0 (it re-adds the timer of"
            + " every pending deadline from MySQL and applies the overdue ones) and restart the"
            + " schedules");
  }

  /** Schedules (or moves) an order's payment timeout. */
  public void schedule(String orderId, long deadlineMillis) {
    schedule(DeadlineKind.PAYMENT_TIMEOUT, orderId, deadlineMillis);
  }

  /** Schedules (or moves) a deadline of {@code kind} for its subject (order or coupon id). */
  public void schedule(DeadlineKind kind, String subjectId, long deadlineMillis) {
    redis.zadd(timersKey(shardOf(subjectId), kind), deadlineMillis, kind.member(subjectId));
  }

  /** Schedules many payment timeouts, one ZADD per shard. */
  public void scheduleAll(Map<String, Long> deadlines) {
    scheduleAll(DeadlineKind.PAYMENT_TIMEOUT, deadlines);
  }

  /** Schedules many deadlines of one kind (subject id -> epoch ms), one ZADD per shard. */
  public void scheduleAll(DeadlineKind kind, Map<String, Long> deadlines) {
    Map<Integer, List<ScoredValue<String>>> byShard = new TreeMap<>();
    deadlines.forEach(
        (id, at) ->
            byShard
                .computeIfAbsent(shardOf(id), s -> new ArrayList<>())
                .add(ScoredValue.just(at, kind.member(id))));
    byShard.forEach(
        (shard, values) -> {
          for (int from = 0; from < values.size(); from += 1_000) {
            List<ScoredValue<String>> chunk =
                values.subList(from, Math.min(values.size(), from + 1_000));
            redis.zadd(timersKey(shard, kind), chunk.toArray(ScoredValue[]::new));
          }
        });
  }

  /**
   * Claims up to {@code limit} due payment timeouts of a shard, hiding them from other claimers for
   * {@code leaseMillis}.
   */
  public List<String> claimDue(int shard, long nowMillis, long leaseMillis, int limit) {
    return claimDue(shard, nowMillis, leaseMillis, Map.of(DeadlineKind.PAYMENT_TIMEOUT, limit))
        .get(DeadlineKind.PAYMENT_TIMEOUT);
  }

  /**
   * Claims the due deadlines of every kind in {@code limits} in one shard, at most its limit per
   * kind, in one script call; answers the claimed subject ids per kind, oldest deadline first.
   */
  public Map<DeadlineKind, List<String>> claimDue(
      int shard, long nowMillis, long leaseMillis, Map<DeadlineKind, Integer> limits) {
    List<DeadlineKind> kinds = new ArrayList<>(limits.keySet());
    String[] keys = new String[kinds.size()];
    String[] args = new String[kinds.size() + 2];
    args[0] = Long.toString(nowMillis);
    args[1] = Long.toString(leaseMillis);
    for (int i = 0; i < kinds.size(); i++) {
      keys[i] = timersKey(shard, kinds.get(i));
      args[i + 2] = Integer.toString(limits.get(kinds.get(i)));
    }
    List<Object> perKey = CLAIM.run(redis, ScriptOutputType.MULTI, keys, args);
    Map<DeadlineKind, List<String>> claimed = new EnumMap<>(DeadlineKind.class);
    for (int i = 0; i < kinds.size(); i++) {
      List<String> subjects = new ArrayList<>();
      for (Object member : (List<?>) perKey.get(i)) {
        subjects.add(DeadlineKind.subjectOf((String) member));
      }
      claimed.put(kinds.get(i), subjects);
    }
    return claimed;
  }

  /** Removes payment timeouts whose orders are final (closed, paid) or handed elsewhere. */
  public void remove(Collection<String> orderIds) {
    remove(DeadlineKind.PAYMENT_TIMEOUT, orderIds);
  }

  /** Removes deadlines of one kind: applied, moved elsewhere, or no longer pending. */
  public void remove(DeadlineKind kind, Collection<String> subjectIds) {
    Map<Integer, List<String>> byShard = new TreeMap<>();
    subjectIds.forEach(
        id -> byShard.computeIfAbsent(shardOf(id), s -> new ArrayList<>()).add(kind.member(id)));
    byShard.forEach(
        (shard, members) -> redis.zrem(timersKey(shard, kind), members.toArray(String[]::new)));
  }

  public OptionalLong deadlineOf(String orderId) {
    return deadlineOf(DeadlineKind.PAYMENT_TIMEOUT, orderId);
  }

  public OptionalLong deadlineOf(DeadlineKind kind, String subjectId) {
    Double score = redis.zscore(timersKey(shardOf(subjectId), kind), kind.member(subjectId));
    return score == null ? OptionalLong.empty() : OptionalLong.of(score.longValue());
  }

  /**
   * The earliest score of a shard over every kind: its next deadline or lease expiry. One script
   * call per shard (an idle sweep reads every held shard each poll).
   */
  public OptionalLong nextDeadline(int shard) {
    DeadlineKind[] kinds = DeadlineKind.values();
    String[] keys = new String[kinds.length];
    for (int i = 0; i < kinds.length; i++) {
      keys[i] = timersKey(shard, kinds[i]);
    }
    String next = NEXT_DUE.run(redis, ScriptOutputType.VALUE, keys);
    return next == null ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(next));
  }

  /** Payment timeouts across all shards: the backlog metric. */
  public long size() {
    return size(DeadlineKind.PAYMENT_TIMEOUT);
  }

  /** Timers of one kind across all shards. */
  public long size(DeadlineKind kind) {
    long total = 0;
    for (int shard = 0; shard < shards; shard++) {
      total += redis.zcard(timersKey(shard, kind));
    }
    return total;
  }
}
