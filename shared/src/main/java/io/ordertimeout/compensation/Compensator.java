package io.ordertimeout.compensation;

import io.lettuce.core.ZAddArgs;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.ordertimeout.close.CloseResult;
import io.ordertimeout.close.OrderCloser;
import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.lifecycle.Coupons;
import io.ordertimeout.lifecycle.Transitions;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.mysql.DbTime;
import io.ordertimeout.mysql.Tx;
import io.ordertimeout.payment.PaymentService;
import io.ordertimeout.redis.ShardLeases;
import io.ordertimeout.redis.TimeSource;
import io.ordertimeout.redis.TimerIndex;
import io.ordertimeout.stream.EventStream;
import io.ordertimeout.wechat.PaymentGateway;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The compensation use case: one reconciliation pass of MySQL (the source of truth) against Redis
 * and WeChat, in bounded keyset pages, repairing what is certain and flagging the rest.
 *
 * <p>Categories, in the order a pass runs them (each one's failure is reported, the others run):
 *
 * <ol>
 *   <li>{@code overdue}: UNPAID orders past their deadline plus the grace are closed through the
 *       close use case ({@code missed_by_redis}); a page whose close fails is retried order by
 *       order and what still fails is flagged CLOSE_FAILED. This asks WeChat again about orders
 *       whose payer stayed USERPAYING past OTC_USERPAYING_LIMIT_MS (flag USERPAYING_STUCK, raised
 *       by the closer): NOTPAY or CLOSED closes them, SUCCESS takes the paid path, still USERPAYING
 *       keeps the flag; flags of orders no longer UNPAID are then resolved ({@code
 *       userpaying_stuck_resolved}).
 *   <li>{@code unpaid}: every UNPAID order without a timer is rescheduled at its deadline ({@code
 *       rescheduled}; ZMSCORE per shard per page); a prepaid one whose prepay is older than the
 *       notify grace is queried at WeChat and, if paid, takes the paid path ({@code
 *       lost_notifications_paid}).
 *   <li>{@code dead_letters}: open dead letters of orders now final (or unknown) are resolved; an
 *       UNPAID order with an open dead letter is a poison order: flagged POISON_ORDER once (the
 *       flag row counts re-sightings) and its timer parked {@code parkFor} ahead (ZADD GT, never
 *       earlier). Without the park, such an order loops sweep -> close_due -> dead letter every
 *       claim lease (~30 s) for ever, adding a dead letter each time; parked, the loop turns once
 *       per period while overdue still tries the close directly every run.
 *   <li>{@code timers}: ZSCAN of each shard; timers of orders no longer UNPAID or unknown are
 *       removed ({@code stale_timers_removed}).
 *   <li>The other deadline kinds (receipt, complete, coupon) run within {@code overdue} (applied,
 *       {@code <label>_applied}) and {@code timers} (missing re-added, {@code <label>_rescheduled};
 *       stale removed, {@code <label>_stale_timers_removed}): see {@link DeadlineAudit}.
 *   <li>{@code stream} and {@code leases}: see {@link RedisAudit}.
 *   <li>{@code closed_prepaid}, {@code refunds}: see {@link WeChatAudit}.
 *   <li>{@code ledger}: see {@link LedgerAudit}.
 * </ol>
 *
 * <p>A pass is bounded by its invocation's remaining time: before each category, each page and each
 * WeChat query or single close it checks that {@code margin} is still left, and otherwise stops
 * there, leaving the rest as it was (every change is a complete transaction or Redis command) and
 * naming the category in the report's {@code skipped}. The next run, five minutes later, does it.
 *
 * <p>Every change goes through the same conditional writes as the rest of the system (the closer,
 * the paid path, ZADD/ZREM, compare-and-delete), so a pass running beside sweeps, consumers and
 * another pass only repeats no-ops.
 *
 * <p>Over 300 lines: the pass driver and the parts the four audits share (statuses, shard leases,
 * the unpaid-order walk); the audits themselves are RedisAudit, LedgerAudit, WeChatAudit and
 * ReleaseRepair.
 */
public final class Compensator {
  private static final Logger log = LoggerFactory.getLogger(Compensator.class);

  /** The smallest DATETIME(3): the keyset cursor before the first row. */
  private static final LocalDateTime BEGINNING = LocalDateTime.of(1000, 1, 1, 0, 0);

  private final Tx tx;
  private final TimerIndex timers;
  private final RedisClusterCommands<String, String> redis;
  private final OrderCloser closer;
  private final Metrics metrics;
  private final CompensationSettings settings;
  private final Flags flags;
  private final RedisAudit redisAudit;
  private final WeChatAudit weChatAudit;
  private final RefundAudit refundAudit;
  private final LedgerAudit ledgerAudit;
  private final DeadlineAudit deadlineAudit;
  private final long marginMillis;

  /**
   * Collaborators of a pass; see Components.newCompensator. {@code margin}: no unit of work starts
   * with less of the invocation left (see Components.compensationMargin for its derivation).
   */
  public record Parts(
      Tx tx,
      TimerIndex timers,
      RedisClusterCommands<String, String> redis,
      OrderCloser closer,
      PaymentService payments,
      PaymentGateway gateway,
      EventStream stream,
      ShardLeases leases,
      int consumerSlots,
      TimeSource time,
      Metrics metrics,
      Duration margin,
      Transitions transitions,
      Coupons coupons,
      java.util.function.Supplier<List<String>> tenants) {}

  public Compensator(Parts parts, CompensationSettings settings) {
    this.tx = parts.tx();
    this.timers = parts.timers();
    this.redis = parts.redis();
    this.closer = parts.closer();
    this.metrics = parts.metrics();
    this.settings = settings;
    this.flags = new Flags(tx);
    this.weChatAudit = new WeChatAudit(tx, parts.payments(), parts.gateway(), flags, settings);
    this.refundAudit = new RefundAudit(tx, parts.payments().refunds(), parts.gateway(), settings);
    this.redisAudit = new RedisAudit(parts, closer, flags, settings);
    this.ledgerAudit = new LedgerAudit(tx, flags, settings);
    this.deadlineAudit = new DeadlineAudit(parts, flags, settings);
    this.marginMillis = parts.margin().toMillis();
  }

  /** One pass without a time bound (tests, tools, the bench). */
  public CompensationReport run() {
    return run(() -> Long.MAX_VALUE);
  }

  /**
   * One pass bounded by {@code remainingMillis} (Lambda's remaining time); never throws for a
   * failing category (it is in the report's failures).
   */
  public CompensationReport run(LongSupplier remainingMillis) {
    Instant startedAt = Instant.now();
    long started = System.nanoTime();
    Tally tally =
        new Tally(settings.pageBudget(), settings.wechatBudget(), remainingMillis, marginMillis);
    step(tally, "overdue", () -> closeOverdue(tally));
    step(tally, "overdue", () -> weChatAudit.settledUserPaying(tally));
    step(tally, "overdue", () -> deadlineAudit.overdue(tally));
    step(tally, "unpaid", () -> checkUnpaid(tally));
    step(tally, "dead_letters", () -> redisAudit.deadLetters(tally));
    step(tally, "timers", () -> redisAudit.staleTimers(tally));
    step(tally, "timers", () -> deadlineAudit.timers(tally));
    step(tally, "stream", () -> redisAudit.stuckEntries(tally));
    step(tally, "leases", () -> redisAudit.staleLeases(tally));
    step(tally, "closed_prepaid", () -> weChatAudit.closedPrepaid(tally));
    step(tally, "refunds", () -> weChatAudit.pendingRefunds(tally));
    step(tally, "refunds", () -> refundAudit.unsettled(tally));
    step(tally, "ledger", () -> ledgerAudit.run(tally));
    CompensationReport report = tally.report(startedAt, (System.nanoTime() - started) / 1_000_000);
    report.publish(metrics);
    log.info("compensation report {}", report.toJson());
    return report;
  }

  private static void step(Tally tally, String category, Runnable body) {
    if (!tally.timeLeft(category)) {
      return;
    }
    try {
      body.run();
    } catch (RuntimeException e) {
      tally.failed(category, e);
      log.error("compensation category {} failed; the others ran: {}", category, e.toString(), e);
    }
  }

  // ---- a: overdue

  /** An UNPAID order as the keyset pages read it. */
  record Unpaid(String orderId, String tenantId, LocalDateTime expireAt, boolean notifyDue) {
    long deadlineMillis() {
      return expireAt.toInstant(ZoneOffset.UTC).toEpochMilli();
    }
  }

  private void closeOverdue(Tally tally) {
    LocalDateTime before =
        tx.read("overdue bound", c -> Sql.dbNowMinus(c, settings.grace().toMillis()));
    pageUnpaid(tally, "overdue", before, page -> closePage(tally, page));
  }

  private void closePage(Tally tally, List<Unpaid> page) {
    byTenant(page).forEach((tenant, orders) -> closeTenantPage(tally, tenant, orders));
  }

  private void closeTenantPage(Tally tally, String tenantId, List<Unpaid> orders) {
    List<String> ids = orders.stream().map(Unpaid::orderId).toList();
    try {
      record(tally, closer.close(tenantId, ids, CloseReason.TIMEOUT));
    } catch (RuntimeException batchFailure) {
      // One poison order must not keep the page's others open: one at a time, flag what fails.
      for (String id : ids) {
        if (!tally.timeLeft("overdue")) {
          return;
        }
        try {
          record(tally, closer.close(tenantId, List.of(id), CloseReason.TIMEOUT));
        } catch (RuntimeException e) {
          tally.add("overdue_close_failed", 1);
          flags.raise(tally, "CLOSE_FAILED", tenantId, id, Map.of("error", String.valueOf(e)));
        }
      }
    }
  }

  /** A page's orders per tenant, in page order: every statement and key is one tenant's. */
  static Map<String, List<Unpaid>> byTenant(List<Unpaid> page) {
    Map<String, List<Unpaid>> out = new TreeMap<>();
    page.forEach(u -> out.computeIfAbsent(u.tenantId(), t -> new ArrayList<>()).add(u));
    return out;
  }

  private static void record(Tally tally, CloseResult result) {
    tally.add("missed_by_redis", result.closed().size());
    tally.add("overdue_paid_at_wechat", result.paid().size());
    tally.add("overdue_left_open", result.deferred().size() + result.failed().size());
  }

  // ---- b: unpaid without a timer, lost notifications

  private void checkUnpaid(Tally tally) {
    LocalDateTime notifyBefore =
        tx.read("notify bound", c -> Sql.dbNowMinus(c, settings.notifyGrace().toMillis()));
    pageUnpaid(
        tally,
        "unpaid",
        null,
        notifyBefore,
        page -> {
          tally.add("unpaid_checked", page.size());
          rescheduleMissing(tally, page);
          weChatAudit.lostNotifications(tally, page);
        });
  }

  private void rescheduleMissing(Tally tally, List<Unpaid> page) {
    byTenant(page).forEach((tenant, orders) -> rescheduleMissing(tally, tenant, orders));
  }

  private void rescheduleMissing(Tally tally, String tenantId, List<Unpaid> page) {
    Map<Integer, List<Unpaid>> byShard = new TreeMap<>();
    page.forEach(
        u -> byShard.computeIfAbsent(timers.shardOf(u.orderId()), s -> new ArrayList<>()).add(u));
    Map<String, Long> missing = new HashMap<>();
    byShard.forEach(
        (shard, orders) -> {
          List<Double> scores =
              redis.zmscore(
                  timers.timersKey(tenantId, shard, DeadlineKind.PAYMENT_TIMEOUT),
                  orders.stream().map(Unpaid::orderId).toArray(String[]::new));
          for (int i = 0; i < orders.size(); i++) {
            if (scores.get(i) == null) {
              missing.put(orders.get(i).orderId(), orders.get(i).deadlineMillis());
            }
          }
        });
    if (!missing.isEmpty()) {
      // ZADD NX: a timer scheduled (or claimed) since the ZMSCORE keeps its score.
      Map<Integer, List<Map.Entry<String, Long>>> shards = new TreeMap<>();
      missing
          .entrySet()
          .forEach(
              e ->
                  shards
                      .computeIfAbsent(timers.shardOf(e.getKey()), s -> new ArrayList<>())
                      .add(e));
      shards.forEach(
          (shard, entries) ->
              redis.zadd(
                  timers.timersKey(tenantId, shard, DeadlineKind.PAYMENT_TIMEOUT),
                  ZAddArgs.Builder.nx(),
                  entries.stream()
                      .map(e -> io.lettuce.core.ScoredValue.just(e.getValue(), e.getKey()))
                      .toArray(io.lettuce.core.ScoredValue[]::new)));
      tally.add("rescheduled", missing.size());
    }
  }

  // ---- keyset paging over UNPAID orders (index orders_status_expire)

  interface PageWork {
    void accept(List<Unpaid> page);
  }

  private void pageUnpaid(Tally tally, String category, LocalDateTime before, PageWork work) {
    pageUnpaid(tally, category, before, null, work);
  }

  /**
   * Pages through UNPAID orders by (expire_at, tenant_id, order_id); {@code before} bounds the
   * deadline (null: all), {@code notifyBefore} marks prepaid orders whose prepay is older (null:
   * none).
   */
  private void pageUnpaid(
      Tally tally,
      String category,
      LocalDateTime before,
      LocalDateTime notifyBefore,
      PageWork work) {
    LocalDateTime afterAt = BEGINNING;
    String afterTenant = "";
    String afterId = "";
    while (tally.page(category)) {
      LocalDateTime at = afterAt;
      String tenant = afterTenant;
      String id = afterId;
      List<Unpaid> page =
          tx.read(
              category + " page after " + tenant + "/" + id,
              c -> unpaidPage(c, at, tenant, id, before, notifyBefore));
      if (page.isEmpty()) {
        return;
      }
      work.accept(page);
      Unpaid last = page.get(page.size() - 1);
      afterAt = last.expireAt();
      afterTenant = last.tenantId();
      afterId = last.orderId();
      if (page.size() < settings.pageSize()) {
        return;
      }
    }
  }

  private List<Unpaid> unpaidPage(
      Connection c,
      LocalDateTime afterAt,
      String afterTenant,
      String afterId,
      LocalDateTime before,
      LocalDateTime notifyBefore)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT order_id, tenant_id, expire_at,"
                + " (prepaid_at IS NOT NULL AND prepaid_at < ?) AS notify_due FROM orders"
                + " WHERE status = 'UNPAID' AND expire_at < ?"
                + " AND (expire_at > ? OR (expire_at = ? AND (tenant_id > ?"
                + " OR (tenant_id = ? AND order_id > ?))))"
                + " ORDER BY expire_at, tenant_id, order_id LIMIT ?")) {
      DbTime.bind(ps, 1, notifyBefore == null ? BEGINNING : notifyBefore);
      DbTime.bind(ps, 2, before == null ? LocalDateTime.of(9999, 12, 31, 0, 0) : before);
      DbTime.bind(ps, 3, afterAt);
      DbTime.bind(ps, 4, afterAt);
      ps.setString(5, afterTenant);
      ps.setString(6, afterTenant);
      ps.setString(7, afterId);
      ps.setInt(8, settings.pageSize());
      List<Unpaid> page = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          page.add(
              new Unpaid(
                  rs.getString("order_id"),
                  rs.getString("tenant_id"),
                  DbTime.utc(rs, "expire_at"),
                  rs.getBoolean("notify_due")));
        }
      }
      return page;
    }
  }

  /** Statuses of a tenant's orders {@code ids} (absent: no such order). */
  static Map<String, String> statuses(Tx tx, String tenantId, List<String> ids) {
    if (ids.isEmpty()) {
      return Map.of();
    }
    return tx.read(
        "statuses of " + ids.size() + " orders of tenant " + tenantId,
        c -> {
          Map<String, String> out = new LinkedHashMap<>();
          Sql.selectIn(
              c,
              "SELECT order_id, status FROM orders WHERE tenant_id = ? AND order_id IN (%s)",
              tenantId,
              ids,
              rs -> out.put(rs.getString("order_id"), rs.getString("status")));
          return out;
        });
  }
}
