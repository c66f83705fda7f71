package io.ordertimeout.redis;

import io.lettuce.core.ScoredValue;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.TenantIds;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
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
 * <p>Keys are {@code <prefix>:{t<shard>}:timers[@<tenant>][:<kind>]} (see {@link #timersKey(String,
 * int, DeadlineKind)}): one sorted set per tenant and kind, so a tenant's keys hold its own
 * subjects only (two tenants may both have order wx0001), and its backlog is claimed with its own
 * limit. The hash tag puts each shard (all its tenants and kinds, and its sweeper lease) in one
 * cluster slot, so one script claims a shard in one round trip, and different shards spread over
 * the cluster's nodes. A subject's shard is the CRC of its id: an order's deadlines of every kind
 * live in the same shard.
 *
 * <p>Over 300 lines: the one key layout and every operation on it (schedule, claim, acknowledge,
 * read); the claim's arguments mirror claimDue-4.lua's layout key by key and are built beside the
 * keys they name, which a second class would have to expose.
 */
public final class TimerIndex {
  private static final LuaScript CLAIM = LuaScript.load("claimDue-4");
  private static final LuaScript NEXT_DUE = LuaScript.load("nextDue-2");
  private static final LuaScript REMOVE = LuaScript.load("removeTimers-1");

  /** Members of one removal call at most (several shards' sets until past it). */
  private static final int REMOVE_CALL_MEMBERS = 2_000;

  private final RedisClusterCommands<String, String> redis;
  private final String prefix;
  private final int shards;

  /** Whether one claim call may carry several shards' keys: Redis is a single node, no cluster. */
  private final boolean crossShardCalls;

  /** One claim call per shard (what a cluster allows). */
  public TimerIndex(RedisClusterCommands<String, String> redis, String prefix, int shards) {
    this(redis, prefix, shards, false);
  }

  /**
   * @param crossShardCalls whether a claim call may carry several shards (a single-node Redis,
   *     where no script is refused for keys of several slots; never on a cluster)
   */
  public TimerIndex(
      RedisClusterCommands<String, String> redis,
      String prefix,
      int shards,
      boolean crossShardCalls) {
    this.redis = redis;
    this.prefix = prefix;
    this.shards = shards;
    this.crossShardCalls = crossShardCalls;
  }

  /** Whether {@link #claim(List, long, long)} may be given several shards at once. */
  public boolean crossShardCalls() {
    return crossShardCalls;
  }

  public int shards() {
    return shards;
  }

  public int shardOf(String orderId) {
    CRC32 crc = new CRC32();
    crc.update(orderId.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    return (int) (crc.getValue() % shards);
  }

  /**
   * The timers of one tenant and kind in a shard. Tenant {@code default} keeps the keys it had
   * before tenants were part of the keys ({@code :timers}, {@code :timers:<label>}), so an upgrade
   * moves no timer; any other tenant T has {@code :timers@T} and {@code :timers@T:<label>}. The
   * hash tag is the shard's either way: one script claims a shard's every tenant and kind.
   */
  public String timersKey(String tenantId, int shard, DeadlineKind kind) {
    String base = prefix + ":{t" + shard + "}:timers";
    if (!TenantIds.DEFAULT.equals(tenantId)) {
      base += "@" + tenantId;
    }
    return kind == DeadlineKind.PAYMENT_TIMEOUT ? base : base + ":" + kind.label();
  }

  public String leaseKey(int shard) {
    return prefix + ":{t" + shard + "}:sweeper";
  }

  /** The registry of live sweeper runs (ShardLeases#join): each takes an even share of shards. */
  public String sweepersKey() {
    return prefix + ":sweepers";
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
            + ":{t*}:timers* (every tenant and deadline kind), "
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

  /** Schedules (or moves) a deadline of {@code kind} for a tenant's subject (order or coupon). */
  public void schedule(String tenantId, DeadlineKind kind, String subjectId, long deadlineMillis) {
    redis.zadd(
        timersKey(tenantId, shardOf(subjectId), kind), deadlineMillis, kind.member(subjectId));
  }

  /**
   * Schedules many deadlines of one tenant and kind (subject id -> epoch ms), one ZADD per shard.
   */
  public void scheduleAll(String tenantId, DeadlineKind kind, Map<String, Long> deadlines) {
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
            redis.zadd(timersKey(tenantId, shard, kind), chunk.toArray(ScoredValue[]::new));
          }
        });
  }

  /**
   * Schedules deadlines by how long they are still away (subject id -> ms, as the database clock
   * counts it) from {@code nowMillis} on the timer clock, 1 ms late so a rounded-down remainder is
   * never claimed early. A claimed timer the database finds not due goes back this way, never at
   * its absolute due time: with Redis TIME ahead of MySQL's NOW(3) that time has passed already on
   * the timer clock, and the timer would be claimed again at every poll until MySQL caught up
   * (close.OrderCloser reschedules the payment timeout the same way).
   */
  public void scheduleAllIn(
      String tenantId, DeadlineKind kind, long nowMillis, Map<String, Long> dueInMillis) {
    Map<String, Long> at = new LinkedHashMap<>();
    dueInMillis.forEach((id, in) -> at.put(id, nowMillis + Math.max(0, in) + 1));
    scheduleAll(tenantId, kind, at);
  }

  /**
   * Claims the due deadlines of every (tenant, kind) set in {@code limits} in one shard, at most
   * its limit per set, in one script call; answers the claimed subject ids per set, oldest deadline
   * first. Each tenant has its own limit: a tenant's flash sale fills its own claims, never the
   * claims of another tenant whose deadlines are due in the same second.
   */
  public Map<TimerSet, List<String>> claimDue(
      int shard, long nowMillis, long leaseMillis, Map<TimerSet, Integer> limits) {
    return claim(shard, nowMillis, leaseMillis, limits).claimed();
  }

  /**
   * As {@link #claimDue(int, long, long, Map)}, and the shard's earliest score left after the claim
   * over the claimed sets' keys, read by the same script call.
   */
  public Claim claim(int shard, long nowMillis, long leaseMillis, Map<TimerSet, Integer> limits) {
    return claim(shard, nowMillis, leaseMillis, limits, Map.of());
  }

  /**
   * As {@link #claim(int, long, long, Map)}, removing first, in the same script call, the timers in
   * {@code acks} (subject ids per set, all of this shard): the acknowledgements of subjects that
   * are final since the last claim. A set only in {@code acks} is claimed from with limit 0 (its
   * earliest score counts in the answer's next deadline) and is not in the answer's claims.
   */
  public Claim claim(
      int shard,
      long nowMillis,
      long leaseMillis,
      Map<TimerSet, Integer> limits,
      Map<TimerSet, ? extends Collection<String>> acks) {
    return claim(List.of(new ShardClaim(shard, limits, acks)), nowMillis, leaseMillis).get(shard);
  }

  /**
   * One shard's part of a claim call: the limit per set and the acknowledgements to remove first
   * (subject ids per set, see {@link #claim(int, long, long, Map, Map)}).
   */
  public record ShardClaim(
      int shard, Map<TimerSet, Integer> limits, Map<TimerSet, ? extends Collection<String>> acks) {}

  /**
   * The claims of several shards in one script call (at most one shard unless {@link
   * #crossShardCalls}): each shard's answer as {@link #claim(int, long, long, Map, Map)} gives it.
   */
  public Map<Integer, Claim> claim(List<ShardClaim> parts, long nowMillis, long leaseMillis) {
    if (parts.size() > 1 && !crossShardCalls) {
      throw new IllegalArgumentException(
          "a claim call carries one shard on a Redis cluster; got " + parts.size());
    }
    List<List<TimerSet>> setsOf = new ArrayList<>();
    List<String> keys = new ArrayList<>();
    List<String> args = new ArrayList<>();
    args.add(Long.toString(nowMillis));
    args.add(Long.toString(leaseMillis));
    boolean anyAcks = false;
    for (ShardClaim part : parts) {
      List<TimerSet> sets = new ArrayList<>(part.limits().keySet());
      part.acks().keySet().stream()
          .filter(set -> !part.limits().containsKey(set))
          .forEach(sets::add);
      setsOf.add(sets);
      for (TimerSet set : sets) {
        keys.add(timersKey(set.tenantId(), part.shard(), set.kind()));
        args.add(Integer.toString(part.limits().getOrDefault(set, 0)));
      }
      anyAcks |= !part.acks().isEmpty();
    }
    if (anyAcks) {
      for (int p = 0; p < parts.size(); p++) {
        Map<TimerSet, ? extends Collection<String>> acks = parts.get(p).acks();
        for (TimerSet set : setsOf.get(p)) {
          Collection<String> ids = acks.containsKey(set) ? acks.get(set) : List.of();
          args.add(Integer.toString(ids.size()));
          ids.forEach(id -> args.add(set.kind().member(id)));
        }
      }
    }
    List<Object> perKey =
        CLAIM.run(
            redis,
            ScriptOutputType.MULTI,
            keys.toArray(String[]::new),
            args.toArray(String[]::new));
    Map<Integer, Claim> byShard = new LinkedHashMap<>();
    int k = 0;
    for (int p = 0; p < parts.size(); p++) {
      ShardClaim part = parts.get(p);
      Map<TimerSet, List<String>> claimed = new LinkedHashMap<>();
      Map<TimerSet, OptionalLong> nexts = new LinkedHashMap<>();
      for (TimerSet set : setsOf.get(p)) {
        if (part.limits().containsKey(set)) {
          List<String> subjects = new ArrayList<>();
          for (Object member : (List<?>) perKey.get(k)) {
            subjects.add(DeadlineKind.subjectOf((String) member));
          }
          claimed.put(set, subjects);
        }
        String earliest = (String) perKey.get(keys.size() + k);
        nexts.put(
            set,
            earliest.isEmpty() ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(earliest)));
        k++;
      }
      byShard.put(part.shard(), new Claim(claimed, nexts));
    }
    return byShard;
  }

  /**
   * One shard's claim: the claimed subject ids per set, and the earliest score left in each set of
   * the call (its next deadline or a lease expiry; empty when it holds nothing).
   */
  public record Claim(Map<TimerSet, List<String>> claimed, Map<TimerSet, OptionalLong> nexts) {
    /** The earliest score left over every set of the call; empty when they hold nothing. */
    public OptionalLong next() {
      return nexts.values().stream()
          .filter(OptionalLong::isPresent)
          .mapToLong(OptionalLong::getAsLong)
          .min();
    }
  }

  /**
   * Claims up to {@code limit} due payment timeouts of one tenant in a shard, hiding them from
   * other claimers for {@code leaseMillis} (tools and benches; the sweep claims every tenant and
   * kind at once).
   */
  public List<String> claimDue(
      String tenantId, int shard, long nowMillis, long leaseMillis, int limit) {
    TimerSet set = new TimerSet(tenantId, DeadlineKind.PAYMENT_TIMEOUT);
    return claimDue(shard, nowMillis, leaseMillis, Map.of(set, limit)).get(set);
  }

  /**
   * Removes deadlines of one tenant and kind: applied, moved elsewhere, or no longer pending. Where
   * Redis is a single node the shards' sets go in one script call (up to {@link
   * #REMOVE_CALL_MEMBERS} members a call), else a ZREM per shard.
   */
  public void remove(String tenantId, DeadlineKind kind, Collection<String> subjectIds) {
    Map<Integer, List<String>> byShard = new TreeMap<>();
    subjectIds.forEach(
        id -> byShard.computeIfAbsent(shardOf(id), s -> new ArrayList<>()).add(kind.member(id)));
    if (!crossShardCalls || byShard.size() < 2) {
      byShard.forEach(
          (shard, members) ->
              redis.zrem(timersKey(tenantId, shard, kind), members.toArray(String[]::new)));
      return;
    }
    List<String> keys = new ArrayList<>();
    List<String> counts = new ArrayList<>();
    List<String> members = new ArrayList<>();
    for (Map.Entry<Integer, List<String>> shard : byShard.entrySet()) {
      keys.add(timersKey(tenantId, shard.getKey(), kind));
      counts.add(Integer.toString(shard.getValue().size()));
      members.addAll(shard.getValue());
      if (members.size() >= REMOVE_CALL_MEMBERS) {
        removeCall(keys, counts, members);
      }
    }
    if (!keys.isEmpty()) {
      removeCall(keys, counts, members);
    }
  }

  private void removeCall(List<String> keys, List<String> counts, List<String> members) {
    List<String> args = new ArrayList<>(counts.size() + members.size());
    args.addAll(counts);
    args.addAll(members);
    REMOVE.<Long>run(
        redis, ScriptOutputType.INTEGER, keys.toArray(String[]::new), args.toArray(String[]::new));
    keys.clear();
    counts.clear();
    members.clear();
  }

  /** The payment timeout of a tenant's order, if scheduled (or claimed: then its lease expiry). */
  public OptionalLong deadlineOf(String tenantId, String orderId) {
    return deadlineOf(tenantId, DeadlineKind.PAYMENT_TIMEOUT, orderId);
  }

  public OptionalLong deadlineOf(String tenantId, DeadlineKind kind, String subjectId) {
    Double score =
        redis.zscore(timersKey(tenantId, shardOf(subjectId), kind), kind.member(subjectId));
    return score == null ? OptionalLong.empty() : OptionalLong.of(score.longValue());
  }

  /**
   * The earliest score of a shard over every tenant and kind: its next deadline or lease expiry.
   */
  public OptionalLong nextDeadline(int shard, Collection<String> tenantIds) {
    return nextDeadlines(List.of(shard), tenantIds).get(shard);
  }

  /**
   * The earliest score of each of {@code shardIds} over every tenant and kind, in one script call
   * (at most one shard unless {@link #crossShardCalls}): an idle sweep reads every held shard each
   * poll.
   */
  public Map<Integer, OptionalLong> nextDeadlines(
      List<Integer> shardIds, Collection<String> tenantIds) {
    if (shardIds.size() > 1 && !crossShardCalls) {
      throw new IllegalArgumentException(
          "a next-deadline call reads one shard on a Redis cluster; got " + shardIds.size());
    }
    Map<Integer, OptionalLong> next = new LinkedHashMap<>();
    if (shardIds.isEmpty() || tenantIds.isEmpty()) {
      shardIds.forEach(shard -> next.put(shard, OptionalLong.empty()));
      return next;
    }
    List<String> keys = new ArrayList<>();
    for (int shard : shardIds) {
      for (String tenantId : tenantIds) {
        for (DeadlineKind kind : DeadlineKind.values()) {
          keys.add(timersKey(tenantId, shard, kind));
        }
      }
    }
    List<Object> perShard =
        NEXT_DUE.run(
            redis,
            ScriptOutputType.MULTI,
            keys.toArray(String[]::new),
            Integer.toString(keys.size() / shardIds.size()));
    for (int i = 0; i < shardIds.size(); i++) {
      String earliest = (String) perShard.get(i);
      next.put(
          shardIds.get(i),
          earliest.isEmpty() ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(earliest)));
    }
    return next;
  }

  /** Timers of one tenant and kind across all shards: the backlog metric. */
  public long size(String tenantId, DeadlineKind kind) {
    long total = 0;
    for (int shard = 0; shard < shards; shard++) {
      total += redis.zcard(timersKey(tenantId, shard, kind));
    }
    return total;
  }

  /** One claim set: a tenant's timers of one kind. */
  public record TimerSet(String tenantId, DeadlineKind kind) {}
}
