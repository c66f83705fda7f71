package io.ordertimeout.compensation;

import io.lettuce.core.Consumer;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScoredValue;
import io.lettuce.core.ScoredValueScanCursor;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.XAutoClaimArgs;
import io.lettuce.core.ZAddArgs;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.models.stream.ClaimedMessages;
import io.ordertimeout.close.CloseResult;
import io.ordertimeout.close.OrderCloser;
import io.ordertimeout.compensation.CompensationReport.Finding;
import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderStatus;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.mysql.DbTime;
import io.ordertimeout.mysql.Tx;
import io.ordertimeout.redis.ShardLeases;
import io.ordertimeout.redis.TimeSource;
import io.ordertimeout.redis.TimerIndex;
import io.ordertimeout.stream.EventStream;
import io.ordertimeout.stream.EventType;
import io.ordertimeout.stream.OrderEvent;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The Redis side of a pass: poison orders and their dead letters, stale timers, stream entries
 * stuck in the pending list, and leases that can never expire.
 *
 * <p>Over 300 lines: four audits of Redis state (dead letters and poison orders, stale timers of
 * every tenant, stuck stream entries, leases without a TTL), each a few short methods.
 */
final class RedisAudit {
  /**
   * The consumer name stuck entries are claimed to; one fixed name keeps the group's list small.
   */
  static final String CONSUMER = "compensation";

  private final Tx tx;
  private final TimerIndex timers;
  private final RedisClusterCommands<String, String> redis;
  private final EventStream stream;
  private final ShardLeases leases;
  private final int consumerSlots;
  private final TimeSource time;
  private final OrderCloser closer;
  private final java.util.function.Supplier<List<String>> tenants;
  private final Flags flags;
  private final CompensationSettings settings;

  RedisAudit(
      Compensator.Parts parts, OrderCloser closer, Flags flags, CompensationSettings settings) {
    this.tx = parts.tx();
    this.timers = parts.timers();
    this.redis = parts.redis();
    this.stream = parts.stream();
    this.leases = parts.leases();
    this.consumerSlots = parts.consumerSlots();
    this.time = parts.time();
    this.closer = closer;
    this.tenants = parts.tenants();
    this.flags = flags;
    this.settings = settings;
  }

  // ---- dead letters and poison orders

  private record Letter(
      long id, String tenantId, String orderId, long deliveries, String errors, LocalDateTime at) {}

  void deadLetters(Tally tally) {
    LocalDateTime afterAt = LocalDateTime.of(1000, 1, 1, 0, 0);
    long afterId = 0;
    while (tally.page("dead_letters")) {
      LocalDateTime at = afterAt;
      long id = afterId;
      List<Letter> page = tx.read("open dead letters", c -> openLetters(c, at, id));
      if (page.isEmpty()) {
        return;
      }
      handleLetters(tally, page);
      afterAt = page.get(page.size() - 1).at();
      afterId = page.get(page.size() - 1).id();
      if (page.size() < settings.pageSize()) {
        return;
      }
    }
  }

  private List<Letter> openLetters(java.sql.Connection c, LocalDateTime afterAt, long afterId)
      throws java.sql.SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT dead_letter_id, tenant_id, order_id, deliveries, errors, created_at"
                + " FROM dead_letters"
                + " WHERE resolved_at IS NULL AND order_id IS NOT NULL"
                + " AND (created_at > ? OR (created_at = ? AND dead_letter_id > ?))"
                + " ORDER BY created_at, dead_letter_id LIMIT ?")) {
      DbTime.bind(ps, 1, afterAt);
      DbTime.bind(ps, 2, afterAt);
      ps.setLong(3, afterId);
      ps.setInt(4, settings.pageSize());
      List<Letter> page = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          page.add(
              new Letter(
                  rs.getLong("dead_letter_id"),
                  rs.getString("tenant_id"),
                  rs.getString("order_id"),
                  rs.getLong("deliveries"),
                  rs.getString("errors"),
                  DbTime.utc(rs, "created_at")));
        }
      }
      return page;
    }
  }

  private void handleLetters(Tally tally, List<Letter> page) {
    Map<String, List<Letter>> byTenant = new java.util.TreeMap<>();
    page.forEach(
        l ->
            byTenant
                .computeIfAbsent(
                    l.tenantId() == null ? TenantIds.DEFAULT : l.tenantId(), t -> new ArrayList<>())
                .add(l));
    byTenant.forEach((tenant, letters) -> handleLetters(tally, tenant, letters));
  }

  private void handleLetters(Tally tally, String tenantId, List<Letter> page) {
    Map<String, String> status =
        Compensator.statuses(tx, tenantId, page.stream().map(Letter::orderId).distinct().toList());
    List<Long> resolvable = new ArrayList<>();
    Map<String, List<Letter>> poison = new LinkedHashMap<>();
    for (Letter letter : page) {
      if (OrderStatus.UNPAID.name().equals(status.get(letter.orderId()))) {
        poison.computeIfAbsent(letter.orderId(), k -> new ArrayList<>()).add(letter);
      } else {
        resolvable.add(letter.id());
      }
    }
    tally.add("dead_letters_resolved", resolve(resolvable));
    long parkUntil = time.nowMillis() + settings.parkFor().toMillis();
    poison.forEach(
        (orderId, letters) -> {
          // GT: a later score (a deferral, a claim lease) is kept; a missing timer is added.
          redis.zadd(
              timers.timersKey(tenantId, timers.shardOf(orderId), DeadlineKind.PAYMENT_TIMEOUT),
              ZAddArgs.Builder.gt(),
              ScoredValue.just(parkUntil, orderId));
          Letter last = letters.get(letters.size() - 1);
          Map<String, Object> evidence = new LinkedHashMap<>();
          evidence.put("deadLetters", letters.stream().map(Letter::id).toList());
          evidence.put("deliveries", last.deliveries());
          evidence.put("errors", last.errors());
          evidence.put("timerParkedUntil", parkUntil);
          flags.raise(tally, "POISON_ORDER", tenantId, orderId, evidence);
        });
    tally.add("poison_orders_parked", poison.size());
  }

  private int resolve(List<Long> ids) {
    if (ids.isEmpty()) {
      return 0;
    }
    return tx.inTransaction(
        "resolve " + ids.size() + " dead letters of final orders",
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement(
                  "UPDATE dead_letters SET resolved_at = NOW(3), resolution = 'ORDER_FINAL',"
                      + " resolved_by = 'compensation' WHERE resolved_at IS NULL"
                      + " AND dead_letter_id IN ("
                      + Sql.placeholders(ids.size())
                      + ")")) {
            for (int i = 0; i < ids.size(); i++) {
              ps.setLong(i + 1, ids.get(i));
            }
            return ps.executeUpdate();
          }
        });
  }

  // ---- c: timers of orders no longer UNPAID

  void staleTimers(Tally tally) {
    for (String tenantId : tenants.get()) {
      for (int shard = 0; shard < timers.shards(); shard++) {
        if (!staleTimers(tally, tenantId, shard)) {
          return;
        }
      }
    }
  }

  /** One tenant's shard; false when the run's pages ran out. */
  private boolean staleTimers(Tally tally, String tenantId, int shard) {
    {
      String key = timers.timersKey(tenantId, shard, DeadlineKind.PAYMENT_TIMEOUT);
      ScanCursor cursor = ScanCursor.INITIAL;
      do {
        if (!tally.page("timers")) {
          return false;
        }
        ScoredValueScanCursor<String> scan =
            redis.zscan(key, cursor, ScanArgs.Builder.limit(settings.pageSize()));
        List<String> ids = scan.getValues().stream().map(ScoredValue::getValue).toList();
        tally.add("timers_scanned", ids.size());
        removeStale(tally, tenantId, key, ids);
        cursor = scan;
      } while (!cursor.isFinished());
    }
    return true;
  }

  private void removeStale(Tally tally, String tenantId, String key, List<String> ids) {
    Map<String, String> status = Compensator.statuses(tx, tenantId, ids);
    List<String> stale =
        ids.stream().filter(id -> !OrderStatus.UNPAID.name().equals(status.get(id))).toList();
    if (!stale.isEmpty()) {
      redis.zrem(key, stale.toArray(String[]::new));
      tally.add("stale_timers_removed", stale.size());
    }
  }

  // ---- c/f: stream entries stuck in the pending list

  void stuckEntries(Tally tally) {
    String cursor = "0-0";
    do {
      if (!tally.page("stream")) {
        return;
      }
      ClaimedMessages<String, String> claimed;
      try {
        claimed =
            redis.xautoclaim(
                stream.key(),
                XAutoClaimArgs.Builder.xautoclaim(
                        Consumer.from(EventStream.GROUP, CONSUMER), settings.stuckAfter(), cursor)
                    .count(settings.pageSize()));
      } catch (RuntimeException e) {
        if (EventStream.isNoGroup(e)) {
          return; // no stream or group yet (fresh or flushed Redis): nothing can be pending
        }
        throw e;
      }
      tally.add("stuck_entries_claimed", claimed.getMessages().size());
      claimed.getMessages().forEach(entry -> settle(tally, entry));
      cursor = claimed.getId();
    } while (!"0-0".equals(cursor));
  }

  /**
   * Processes one claimed entry the way a consumer would: informational events and events of final
   * or unknown orders are acknowledged; a close event of an UNPAID order is closed and acknowledged
   * once the close had a definite outcome. An entry without one stays pending for a consumer to
   * retry and, at its delivery limit, dead-letter with its history.
   */
  private void settle(Tally tally, StreamMessage<String, String> entry) {
    if (!tally.timeLeft("stream")) {
      return; // stays pending under CONSUMER; a later run claims it once idle stuckAfter
    }
    OrderEvent event;
    try {
      event = OrderEvent.parse(entry.getBody().get(EventStream.FIELD));
    } catch (RuntimeException e) {
      tally.add("stuck_entries_unparseable", 1);
      return;
    }
    if (!event.type().closes()) {
      ack(tally, entry);
      return;
    }
    CloseReason reason =
        event.type() == EventType.CANCEL_REQUESTED ? CloseReason.USER_CANCEL : CloseReason.TIMEOUT;
    try {
      CloseResult result = closer.close(event.tenantOrDefault(), List.of(event.orderId()), reason);
      if (result.deferred().isEmpty() && result.failed().isEmpty()) {
        tally.add("stuck_entries_closed", result.closed().size());
        ack(tally, entry);
      }
    } catch (RuntimeException e) {
      tally.add("stuck_entries_failed", 1);
    }
  }

  private void ack(Tally tally, StreamMessage<String, String> entry) {
    redis.xack(stream.key(), EventStream.GROUP, entry.getId());
    tally.add("stuck_entries_acked", 1);
  }

  // ---- f: leases that can never expire

  /**
   * Sweeper leases and consumer-name leases are always set with a TTL and renewed with PEXPIRE; one
   * without a TTL (PTTL -1) was written by something else and would block its shard or name for
   * ever. It is removed by compare-and-delete, so a holder that renewed meanwhile keeps its lease.
   */
  void staleLeases(Tally tally) {
    List<String> keys = new ArrayList<>();
    for (int shard = 0; shard < timers.shards(); shard++) {
      keys.add(timers.leaseKey(shard));
    }
    for (int slot = 0; slot < consumerSlots; slot++) {
      keys.add(stream.consumerSlotKey(slot));
    }
    for (int i = 0; i < keys.size() && tally.timeLeft("leases"); i++) {
      String key = keys.get(i);
      Long ttl = redis.pttl(key);
      tally.add("leases_checked", 1);
      if (ttl != null && ttl == -1L) {
        String holder = redis.get(key);
        if (holder != null && leases.release(key, holder)) {
          tally.add("stale_leases_removed", 1);
          tally.repaired(new Finding("STALE_LEASE_REMOVED", key, Map.of("holder", holder)));
        }
      }
    }
  }
}
