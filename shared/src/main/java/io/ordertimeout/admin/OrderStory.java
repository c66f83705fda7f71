package io.ordertimeout.admin;

import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.models.stream.PendingMessage;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.mysql.Tx;
import io.ordertimeout.payment.TradeBinding;
import io.ordertimeout.payment.TradeBindings;
import io.ordertimeout.redis.TimerIndex;
import io.ordertimeout.stream.EventStream;
import io.ordertimeout.stream.OrderEvent;
import io.ordertimeout.wechat.PaymentGateway;
import io.ordertimeout.wechat.TradeStatus;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An order's whole story for an operator: its rows in MySQL (order, items, ledger, coupon,
 * snapshot, paid-after-close case, dead letters, compensation flags, admin actions), its timer in
 * Redis with score and claim lease, the stream entries pending for it, and on request WeChat's
 * trade state. Read-only.
 */
public final class OrderStory {
  /**
   * Pending stream entries examined for the order: 1,000 is far more than a healthy group holds
   * (entries are acked within seconds) and one XPENDING plus XRANGEs of a few ms; the answer says
   * when the list was longer.
   */
  static final int PENDING_SCAN = 1_000;

  private final Tx tx;
  private final RedisClusterCommands<String, String> redis;
  private final TimerIndex timers;
  private final EventStream stream;
  private final DeadLetterAdmin deadLetters;
  private final PaymentGateway gateway;

  public OrderStory(
      Tx tx,
      RedisClusterCommands<String, String> redis,
      TimerIndex timers,
      EventStream stream,
      DeadLetterAdmin deadLetters,
      PaymentGateway gateway) {
    this.tx = tx;
    this.redis = redis;
    this.timers = timers;
    this.stream = stream;
    this.deadLetters = deadLetters;
    this.gateway = gateway;
  }

  /** The story of a tenant's order; 404 when MySQL has no such order. */
  public Map<String, Object> of(String tenantId, String orderId, boolean askWeChat) {
    OrderIds.require(orderId);
    Map<String, Object> story =
        tx.read(
            "read the story of order " + tenantId + "/" + orderId, c -> rows(c, tenantId, orderId));
    @SuppressWarnings("unchecked")
    Map<String, Object> order = (Map<String, Object>) story.get("order");
    story.put("timer", timer(tenantId, orderId, (String) order.get("expire_at")));
    story.put("pendingStreamEntries", pending(tenantId, orderId));
    if (askWeChat) {
      story.put("wechat", weChat(tenantId, orderId));
    }
    return story;
  }

  private Map<String, Object> rows(Connection c, String tenantId, String orderId)
      throws SQLException {
    String t = tenantId;
    List<Map<String, Object>> order =
        Rows.all(c, "SELECT * FROM orders WHERE tenant_id = ? AND order_id = ?", t, orderId);
    if (order.isEmpty()) {
      throw AdminRefusal.notFound("tenant " + tenantId + " has no order " + orderId);
    }
    Map<String, Object> story = new LinkedHashMap<>();
    story.put("order", order.get(0));
    story.put(
        "items",
        Rows.all(
            c,
            "SELECT * FROM order_items WHERE tenant_id = ? AND order_id = ? ORDER BY sku_id",
            t,
            orderId));
    story.put(
        "ledger",
        Rows.all(
            c,
            "SELECT * FROM stock_movements WHERE tenant_id = ? AND order_id = ?"
                + " ORDER BY movement_id",
            t,
            orderId));
    story.put(
        "coupon",
        Rows.all(
            c,
            "SELECT c.* FROM coupons c JOIN orders o"
                + " ON o.tenant_id = c.tenant_id AND o.coupon_id = c.coupon_id"
                + " WHERE o.tenant_id = ? AND o.order_id = ?",
            t,
            orderId));
    story.put(
        "snapshot",
        Rows.all(
            c, "SELECT * FROM order_snapshots WHERE tenant_id = ? AND order_id = ?", t, orderId));
    story.put(
        "paidAfterClose",
        Rows.all(
            c, "SELECT * FROM paid_after_close WHERE tenant_id = ? AND order_id = ?", t, orderId));
    // every refund asked of WeChat for the order, with WeChat's last word on it
    story.put(
        "refunds",
        Rows.all(
            c,
            "SELECT * FROM refunds WHERE tenant_id = ? AND order_id = ? ORDER BY created_at",
            t,
            orderId));
    story.put("deadLetters", deadLetters.ofOrder(c, tenantId, orderId));
    story.put(
        "compensationFlags",
        Rows.all(
            c,
            "SELECT * FROM compensation_flags WHERE tenant_id = ? AND subject = ? ORDER BY flag_id",
            t,
            orderId));
    story.put("adminActions", AdminActions.about(c, tenantId, orderId));
    // Its events as the outbox holds them, with where each has been delivered (NULL: not yet).
    story.put(
        "events",
        Rows.all(
            c,
            "SELECT seq, event_id, event_type, payload, trace_id, committed_at, streamed_at,"
                + " bridged_at FROM outbox WHERE tenant_id = ? AND order_id = ? ORDER BY seq",
            t,
            orderId));
    return story;
  }

  /**
   * The timer: its score is the deadline while scheduled; a claim moves it to now + lease, so a
   * score past the deadline is a claimed timer whose lease ends at that score.
   */
  private Map<String, Object> timer(String tenantId, String orderId, String expireAt) {
    int shard = timers.shardOf(orderId);
    Map<String, Object> timer = new LinkedHashMap<>();
    timer.put("shard", shard);
    timer.put("key", timers.timersKey(tenantId, shard, DeadlineKind.PAYMENT_TIMEOUT));
    var score = timers.deadlineOf(tenantId, orderId);
    if (score.isEmpty()) {
      timer.put("state", "ABSENT");
    } else {
      long at = score.getAsLong();
      long deadline = Instant.parse(expireAt).toEpochMilli();
      timer.put("score", at);
      timer.put("scoreAt", Rows.iso(at));
      timer.put("state", at > deadline ? "CLAIMED" : "SCHEDULED");
      timer.put("leaseUntil", at > deadline ? Rows.iso(at) : null);
    }
    String leaseKey = timers.leaseKey(shard);
    timer.put("sweeperLeaseKey", leaseKey);
    timer.put("sweeperLeaseHolder", redis.get(leaseKey));
    timer.put("sweeperLeaseTtlMs", redis.pttl(leaseKey));
    return timer;
  }

  /** Entries of the closers group still pending (delivered, not acked) that name the order. */
  private Map<String, Object> pending(String tenantId, String orderId) {
    Map<String, Object> out = new LinkedHashMap<>();
    List<Map<String, Object>> entries = new ArrayList<>();
    List<PendingMessage> pending;
    try {
      pending =
          redis.xpending(
              stream.key(), EventStream.GROUP, Range.unbounded(), Limit.from(PENDING_SCAN));
    } catch (RuntimeException e) {
      if (!EventStream.isNoGroup(e)) {
        throw e;
      }
      pending = List.of();
    }
    for (PendingMessage p : pending) {
      for (StreamMessage<String, String> m :
          redis.xrange(stream.key(), Range.create(p.getId(), p.getId()))) {
        String json = m.getBody().get(EventStream.FIELD);
        if (json != null && json.contains('"' + orderId + '"') && names(json, tenantId, orderId)) {
          Map<String, Object> entry = new LinkedHashMap<>();
          entry.put("entryId", p.getId());
          entry.put("consumer", p.getConsumer());
          entry.put("deliveries", p.getRedeliveryCount());
          entry.put("idleMs", p.getMsSinceLastDelivery());
          entry.put("event", json);
          entries.add(entry);
        }
      }
    }
    out.put("scanned", pending.size());
    out.put("truncated", pending.size() >= PENDING_SCAN);
    out.put("entries", entries);
    return out;
  }

  private static boolean names(String json, String tenantId, String orderId) {
    try {
      OrderEvent event = OrderEvent.parse(json);
      return event.orderId().equals(orderId) && event.tenantOrDefault().equals(tenantId);
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  private Map<String, Object> weChat(String tenantId, String orderId) {
    Map<String, Object> out = new LinkedHashMap<>();
    if (gateway == null) {
      out.put("error", "payments are not configured (no WeChat gateway)");
      return out;
    }
    try {
      // the trade the order's binding names: another tenant's order of the same id has its own
      TradeBinding binding = new TradeBindings(tx, gateway).resolve(tenantId, orderId);
      out.put("outTradeNo", binding.outTradeNo());
      if (!binding.reachable()) {
        out.put("error", "the WeChat trade is unreachable: " + binding.problem());
        return out;
      }
      TradeStatus status = gateway.query(tenantId, binding.trade());
      out.put("tradeState", status.state().name());
      out.put("transactionId", status.transactionId());
      out.put("amountFen", status.amountFen());
      out.put("successTime", status.successTime() == null ? null : status.successTime().toString());
    } catch (RuntimeException e) {
      // the story is still worth reading when WeChat is down: say what it answered
      out.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
    }
    return out;
  }
}
