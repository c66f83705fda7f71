package io.ordertimeout.compensation;

import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScoredValue;
import io.lettuce.core.ScoredValueScanCursor;
import io.lettuce.core.ZAddArgs;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.lifecycle.DueHandlers;
import io.ordertimeout.mysql.Tx;
import io.ordertimeout.redis.TimerIndex;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Compensation for every deadline kind but the payment timeout (which the Compensator and
 * RedisAudit audit with its WeChat and poison-order cases): the receipt, completion and coupon
 * deadlines, with MySQL as the truth and the timer index as its copy.
 *
 * <ul>
 *   <li>{@link #overdue} (category {@code overdue}): subjects in their kind's pending state past
 *       due by more than the grace are applied through the sweep's own handler
 *       (lifecycle.DueHandlers: Transitions.applyDue, Coupons.expireDue), so the conditional UPDATE
 *       that makes a transition happen once is the only writer; counts {@code <label>_applied}.
 *   <li>{@link #timers} (category {@code timers}): every pending subject without a timer gets one
 *       at its MySQL due time ({@code <label>_rescheduled}), and each kind's keys are scanned per
 *       shard; a member whose subject does not exist or is not pending is removed ({@code
 *       <label>_stale_timers_removed}).
 * </ul>
 *
 * <p>They run under the payment timeout's category names, so the report's {@code skipped} and
 * {@code failures} keep the categories operators know; the page budget is each kind's own ({@code
 * <label>_overdue}, {@code <label>_pending}, {@code <label>_timers} in {@code exhausted}): a
 * million coupons must not spend the payment scan's pages. The walks go in due order, so a cut by
 * budget or time leaves the latest deadlines, which later runs reach before they fall due.
 *
 * <p>Races with the routes and the sweep only cost a run: a timer re-added (ZADD NX) just after its
 * order moved on is removed when it fires (applyDue finds the order elsewhere) or by the next scan;
 * a timer removed just after a transition re-scheduled it (an after-sale resolved between the
 * status read and the ZREM) is re-added by the next run's walk, 5 min later, on a deadline days
 * away, and its transition is applied late by at most the grace if it falls due meanwhile.
 */
final class DeadlineAudit {
  private static final Logger log = LoggerFactory.getLogger(DeadlineAudit.class);

  /** Every kind but the payment timeout, in declaration order. */
  static final List<DeadlineKind> KINDS =
      Arrays.stream(DeadlineKind.values()).filter(k -> k != DeadlineKind.PAYMENT_TIMEOUT).toList();

  private final Tx tx;
  private final PendingSubjects subjects;
  private final TimerIndex timers;
  private final RedisClusterCommands<String, String> redis;
  private final Map<DeadlineKind, DueHandlers.Handler> handlers;
  private final java.util.function.Supplier<List<String>> tenants;
  private final Flags flags;
  private final CompensationSettings settings;

  DeadlineAudit(Compensator.Parts parts, Flags flags, CompensationSettings settings) {
    this.tx = parts.tx();
    this.subjects = new PendingSubjects(parts.tx(), settings.pageSize());
    this.timers = parts.timers();
    this.redis = parts.redis();
    this.handlers = DueHandlers.of(parts.transitions(), parts.coupons());
    this.tenants = parts.tenants();
    this.flags = flags;
    this.settings = settings;
  }

  // ---- overdue: applied through the sweep's handler

  void overdue(Tally tally) {
    LocalDateTime before =
        tx.read("deadlines overdue bound", c -> Sql.dbNowMinus(c, settings.grace().toMillis()));
    for (DeadlineKind kind : KINDS) {
      guarded(
          tally,
          kind,
          "overdue",
          () ->
              subjects.walk(
                  tally, "overdue", kind, "overdue", before, page -> apply(tally, kind, page)));
    }
  }

  private void apply(Tally tally, DeadlineKind kind, List<PendingSubjects.Pending> page) {
    byTenant(page).forEach((tenant, pending) -> apply(tally, kind, tenant, pending));
  }

  /** A page's subjects per tenant: every statement and key is one tenant's. */
  private static Map<String, List<PendingSubjects.Pending>> byTenant(
      List<PendingSubjects.Pending> page) {
    Map<String, List<PendingSubjects.Pending>> out = new TreeMap<>();
    page.forEach(p -> out.computeIfAbsent(p.tenantId(), t -> new ArrayList<>()).add(p));
    return out;
  }

  private void apply(
      Tally tally, DeadlineKind kind, String tenantId, List<PendingSubjects.Pending> page) {
    if (!tally.timeLeft("overdue")) {
      return;
    }
    DueHandlers.Handler handler = handlers.get(kind);
    List<String> ids = page.stream().map(PendingSubjects.Pending::id).toList();
    try {
      tally.add(kind.label() + "_applied", handler.apply(tenantId, ids));
    } catch (RuntimeException batchFailure) {
      // One subject that cannot move must not hold back the page's others: one at a time.
      for (String id : ids) {
        if (!tally.timeLeft("overdue")) {
          return;
        }
        try {
          tally.add(kind.label() + "_applied", handler.apply(tenantId, List.of(id)));
        } catch (RuntimeException e) {
          tally.add(kind.label() + "_apply_failed", 1);
          flags.raise(
              tally,
              "DEADLINE_FAILED",
              tenantId,
              id,
              Map.of("kind", kind.label(), "error", String.valueOf(e)));
        }
      }
    }
  }

  // ---- timers: missing ones re-added, stale ones removed

  void timers(Tally tally) {
    for (DeadlineKind kind : KINDS) {
      guarded(
          tally,
          kind,
          "pending",
          () ->
              subjects.walk(
                  tally,
                  "timers",
                  kind,
                  "pending",
                  null,
                  page -> {
                    tally.add(kind.label() + "_checked", page.size());
                    byTenant(page)
                        .forEach((tenant, mine) -> rescheduleMissing(tally, kind, tenant, mine));
                  }));
    }
    for (DeadlineKind kind : KINDS) {
      guarded(tally, kind, "timers", () -> staleTimers(tally, kind));
    }
  }

  private void rescheduleMissing(
      Tally tally, DeadlineKind kind, String tenantId, List<PendingSubjects.Pending> page) {
    Map<Integer, List<PendingSubjects.Pending>> byShard = new TreeMap<>();
    page.forEach(
        p -> byShard.computeIfAbsent(timers.shardOf(p.id()), s -> new ArrayList<>()).add(p));
    long added = 0;
    for (Map.Entry<Integer, List<PendingSubjects.Pending>> shard : byShard.entrySet()) {
      String key = timers.timersKey(tenantId, shard.getKey(), kind);
      List<PendingSubjects.Pending> inShard = shard.getValue();
      List<Double> scores =
          redis.zmscore(key, inShard.stream().map(p -> kind.member(p.id())).toArray(String[]::new));
      List<ScoredValue<String>> missing = new ArrayList<>();
      for (int i = 0; i < inShard.size(); i++) {
        if (scores.get(i) == null) {
          PendingSubjects.Pending p = inShard.get(i);
          missing.add(ScoredValue.just(p.dueMillis(), kind.member(p.id())));
        }
      }
      if (!missing.isEmpty()) {
        // NX: a timer scheduled (or claimed under its lease) since the ZMSCORE keeps its score.
        redis.zadd(key, ZAddArgs.Builder.nx(), missing.toArray(ScoredValue[]::new));
        added += missing.size();
      }
    }
    tally.add(kind.label() + "_rescheduled", added);
  }

  private void staleTimers(Tally tally, DeadlineKind kind) {
    for (String tenantId : tenants.get()) {
      for (int shard = 0; shard < timers.shards(); shard++) {
        if (!staleTimers(tally, kind, tenantId, shard)) {
          return;
        }
      }
    }
  }

  /** One tenant's shard of a kind; false when the run's pages ran out. */
  private boolean staleTimers(Tally tally, DeadlineKind kind, String tenantId, int shard) {
    {
      String key = timers.timersKey(tenantId, shard, kind);
      ScanCursor cursor = ScanCursor.INITIAL;
      do {
        if (!tally.page("timers", kind.label() + "_timers")) {
          return false;
        }
        ScoredValueScanCursor<String> scan =
            redis.zscan(key, cursor, ScanArgs.Builder.limit(settings.pageSize()));
        List<String> members = scan.getValues().stream().map(ScoredValue::getValue).toList();
        tally.add(kind.label() + "_timers_scanned", members.size());
        removeStale(tally, kind, tenantId, key, members);
        cursor = scan;
      } while (!cursor.isFinished());
    }
    return true;
  }

  private void removeStale(
      Tally tally, DeadlineKind kind, String tenantId, String key, List<String> members) {
    if (members.isEmpty()) {
      return;
    }
    List<String> ids = members.stream().map(DeadlineKind::subjectOf).toList();
    Set<String> kept = subjects.kept(kind, tenantId, ids);
    List<String> stale = new ArrayList<>();
    for (int i = 0; i < members.size(); i++) {
      if (!kept.contains(ids.get(i))) {
        stale.add(members.get(i));
      }
    }
    if (!stale.isEmpty()) {
      redis.zrem(key, stale.toArray(String[]::new));
      tally.add(kind.label() + "_stale_timers_removed", stale.size());
    }
  }

  /** One kind's part fails alone: the other kinds still run, the failure names the kind. */
  private static void guarded(Tally tally, DeadlineKind kind, String part, Runnable body) {
    try {
      body.run();
    } catch (RuntimeException e) {
      tally.failed(kind.label() + "_" + part, e);
      log.error(
          "compensation of {} deadlines ({}) failed; the other kinds ran: {}",
          kind.label(),
          part,
          e.toString(),
          e);
    }
  }
}
