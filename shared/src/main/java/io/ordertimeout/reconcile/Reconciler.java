package io.ordertimeout.reconcile;

import io.ordertimeout.domain.OrderStatus;
import io.ordertimeout.metrics.MetricNames;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.mysql.DbTime;
import io.ordertimeout.mysql.Tx;
import io.ordertimeout.payment.PaidTrade;
import io.ordertimeout.payment.PaymentMismatchException;
import io.ordertimeout.payment.PaymentOutcome;
import io.ordertimeout.payment.PaymentService;
import io.ordertimeout.reconcile.ReconciliationStore.Recorded;
import io.ordertimeout.reconcile.TradeOwners.Owner;
import io.ordertimeout.wechat.BillLine;
import io.ordertimeout.wechat.PaymentGateway;
import io.ordertimeout.wechat.PaymentTransientException;
import io.ordertimeout.wechat.TradeBill;
import io.ordertimeout.wechat.TradeBillReader;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reconciles one tenant's orders against its merchant's trade bill of one day (Asia/Shanghai): the
 * bill is downloaded and its digest verified by the gateway, then read line by line in batches of
 * {@link #BATCH} (one query for the batch's trade bindings, one for lines already recorded, one for
 * recorded refunds), and every order paid here that day is checked for a line.
 *
 * <p>A line acts only on the order its trade is bound to (wechat_trades), and only when that order
 * is this tenant's: a SUCCESS for an UNPAID order goes through the paid path, for a CLOSED order
 * through the paid-after-close path (refunded once), both idempotent. A line bound to another
 * tenant is that tenant's to reconcile. A line bound to nobody on a merchant several tenants share
 * is recorded once per merchant and day (the UNIQUE key of reconciliation_lines): the first run
 * flags it, later runs of the other tenants find it recorded. Once recorded, a line's category
 * stands, so a re-run of the day changes nothing and reports the same counts.
 *
 * <p>Over 300 lines: one run's state and its three steps (the lines, the paid orders without a
 * line, the report) read together, since each category is decided in one place and counted in
 * another; the SQL of the tables lives in ReconciliationStore, TradeOwners and RecordedRefunds.
 */
public final class Reconciler {
  private static final Logger log = LoggerFactory.getLogger(Reconciler.class);

  /** WeChat's business day. */
  public static final ZoneId SHANGHAI = ZoneId.of("Asia/Shanghai");

  /** Lines per lookup: 500 out_trade_nos of 32 characters stay far below the IN-list limit. */
  static final int BATCH = 500;

  private static final int ORDER_PAGE = 1_000;

  private final Tx tx;
  private final PaymentGateway gateway;
  private final PaymentService payments;
  private final Metrics metrics;

  public Reconciler(Tx tx, PaymentGateway gateway, PaymentService payments, Metrics metrics) {
    this.tx = tx;
    this.gateway = gateway;
    this.payments = payments;
    this.metrics = metrics;
  }

  /** One run of the day for the tenant; stores and answers the day's report. */
  public ReconciliationReport reconcile(String tenantId, LocalDate day) {
    Run run = new Run(tenantId, day, gateway.merchantId(tenantId));
    long started = System.nanoTime();
    long downloaded;
    try (TradeBill bill = gateway.tradeBill(tenantId, day);
        TradeBillReader reader = bill.open()) {
      downloaded = System.nanoTime();
      List<BillLine> batch = new ArrayList<>(BATCH);
      for (BillLine line = reader.next(); line != null; line = reader.next()) {
        batch.add(line);
        if (batch.size() == BATCH) {
          run.lines(batch);
          batch.clear();
        }
      }
      run.lines(batch);
      run.billLines = reader.lines();
    }
    long read = System.nanoTime();
    run.paidWithoutLine();
    long checked = System.nanoTime();
    ReconciliationReport report = run.finish();
    log.info(
        "reconciled {} for {}: {} lines, download {} ms, lines {} ms, paid orders {} ms, {}",
        tenantId,
        day,
        run.billLines,
        (downloaded - started) / 1_000_000,
        (read - downloaded) / 1_000_000,
        (checked - read) / 1_000_000,
        report.counts());
    return report;
  }

  /** The stored report of the day; null when it was never reconciled for the tenant. */
  public ReconciliationReport report(String tenantId, LocalDate day) {
    return tx.read(
        "reconciliation report of " + tenantId + " for " + day,
        c -> ReconciliationStore.load(c, tenantId, day));
  }

  /** The state of one run. */
  private final class Run {
    final String tenantId;
    final LocalDate day;
    final String mchid;
    final TradeOwners owners = new TradeOwners(gateway);
    final SeenOrders seen = new SeenOrders();
    final Map<LineCategory, Long> counts = new EnumMap<>(LineCategory.class);
    long billLines;
    long newFlags;

    Run(String tenantId, LocalDate day, String mchid) {
      this.tenantId = tenantId;
      this.day = day;
      this.mchid = mchid;
    }

    void lines(List<BillLine> batch) {
      if (batch.isEmpty()) {
        return;
      }
      Set<String> outTradeNos = new HashSet<>();
      Set<String> refs = new HashSet<>();
      Set<String> outRefundNos = new HashSet<>();
      for (BillLine line : batch) {
        outTradeNos.add(line.outTradeNo());
        refs.add(ref(line));
        if (line.refund()) {
          outRefundNos.add(line.outRefundNo());
        }
      }
      Lookup lookup =
          tx.read(
              "reconciliation lookups of " + batch.size() + " bill lines of " + mchid,
              c ->
                  new Lookup(
                      owners.of(c, mchid, outTradeNos),
                      ReconciliationStore.recorded(c, mchid, day, refs),
                      RecordedRefunds.find(c, tenantId, outRefundNos)));
      for (BillLine line : batch) {
        line(line, lookup);
      }
    }

    private void line(BillLine line, Lookup lookup) {
      String ref = ref(line);
      Recorded recorded = lookup.recorded().get(ref);
      if (recorded != null) {
        if (tenantId.equals(recorded.tenantId()) && recorded.orderId() != null && line.payment()) {
          seen.add(recorded.orderId());
        }
        count(
            tenantId.equals(recorded.tenantId()) ? recorded.category() : LineCategory.OTHER_TENANT);
        return;
      }
      // a sub-merchant tenant's mchid is its sub_mchid: its lines carry it in 特约商户号, and a line
      // of another sub-merchant of the same provider is a mismatch, never this tenant's
      if (!mchid.equals(line.tradeMchid())) {
        record(ref, null, LineCategory.MCHID_MISMATCH, detail(line, null));
        return;
      }
      List<Owner> bound = lookup.owners().getOrDefault(line.outTradeNo(), List.of());
      if (bound.size() > 1) {
        record(ref, null, LineCategory.SHARED_TRADE, detail(line, null));
        return;
      }
      Owner owner = bound.isEmpty() ? null : bound.get(0);
      if (owner != null && !tenantId.equals(owner.tenantId())) {
        count(LineCategory.OTHER_TENANT);
        return;
      }
      if (line.payment()) {
        payment(ref, line, owner);
      } else if (line.refund()) {
        refund(ref, line, owner, lookup);
      } else {
        record(
            ref,
            owner == null ? null : owner.orderId(),
            LineCategory.UNEXPECTED_STATE,
            detail(line, owner));
      }
    }

    private void payment(String ref, BillLine line, Owner owner) {
      if (owner == null || owner.status() == null) {
        record(ref, null, LineCategory.NO_ORDER, detail(line, owner));
        return;
      }
      seen.add(owner.orderId());
      if (line.totalFen() != owner.amountFen()) {
        record(ref, owner.orderId(), LineCategory.AMOUNT_MISMATCH, detail(line, owner));
        return;
      }
      OrderStatus status = OrderStatus.valueOf(owner.status());
      if (status.paid()) {
        count(
            line.transactionId().equals(owner.transactionId())
                ? LineCategory.MATCHED
                : recordCategory(ref, owner, LineCategory.TRANSACTION_MISMATCH, line));
        return;
      }
      apply(ref, line, owner);
    }

    /** UNPAID or CLOSED here, SUCCESS at WeChat: the paid path decides which, under its lock. */
    private void apply(String ref, BillLine line, Owner owner) {
      PaidTrade trade =
          new PaidTrade(
              tenantId,
              owner.orderId(),
              line.transactionId(),
              line.totalFen(),
              line.tradeTime().atZone(SHANGHAI).toInstant(),
              PaidTrade.Source.BILL);
      PaymentOutcome outcome;
      try {
        outcome = payments.apply(trade);
      } catch (PaymentMismatchException e) {
        Map<String, Object> detail = detail(line, owner);
        detail.put("refusal", e.getMessage());
        record(ref, owner.orderId(), LineCategory.APPLY_REFUSED, detail);
        return;
      } catch (PaymentTransientException e) {
        // the case is recorded; compensation retries its refund
        log.warn(
            "bill line {}: paid after close recorded, refund not taken yet: {}", ref, e.toString());
        outcome = PaymentOutcome.PAID_AFTER_CLOSE;
      }
      switch (outcome) {
        case PAID -> {
          metrics.count("reconciliation_applied", 1);
          record(ref, owner.orderId(), LineCategory.APPLIED, detail(line, owner));
        }
        case PAID_AFTER_CLOSE ->
            record(ref, owner.orderId(), LineCategory.PAID_AFTER_CLOSE, detail(line, owner));
        case ALREADY_PAID -> count(LineCategory.MATCHED);
      }
    }

    private void refund(String ref, BillLine line, Owner owner, Lookup lookup) {
      if (owner == null) {
        record(ref, null, LineCategory.REFUND_UNKNOWN, detail(line, null));
        return;
      }
      LineCategory category =
          RecordedRefunds.match(lookup.refunds().get(line.outRefundNo()), line.refundFen());
      if (category.flagged()) {
        record(ref, owner.orderId(), category, detail(line, owner));
      } else {
        count(category);
      }
    }

    private LineCategory recordCategory(
        String ref, Owner owner, LineCategory category, BillLine line) {
      Recorded standing =
          tx.inTransaction(
              "record bill line " + ref,
              c ->
                  ReconciliationStore.record(
                      c,
                      mchid,
                      day,
                      ref,
                      tenantId,
                      owner.orderId(),
                      category,
                      detail(line, owner)));
      if (standing == null) {
        newFlag(category);
        return category;
      }
      return tenantId.equals(standing.tenantId()) ? standing.category() : LineCategory.OTHER_TENANT;
    }

    private void record(
        String ref, String orderId, LineCategory category, Map<String, Object> detail) {
      Recorded standing =
          tx.inTransaction(
              "record bill line " + ref,
              c ->
                  ReconciliationStore.record(
                      c, mchid, day, ref, tenantId, orderId, category, detail));
      if (standing == null) {
        newFlag(category);
        count(category);
      } else {
        count(
            tenantId.equals(standing.tenantId()) ? standing.category() : LineCategory.OTHER_TENANT);
      }
    }

    private void newFlag(LineCategory category) {
      if (category.flagged()) {
        newFlags++;
        log.warn("reconciliation of {} for {}: new {} line", tenantId, day, category);
      }
    }

    private void count(LineCategory category) {
      counts.merge(category, 1L, Long::sum);
    }

    /** Every order this tenant recorded paid that day must have had a line. */
    void paidWithoutLine() {
      Instant from = day.atStartOfDay(SHANGHAI).toInstant();
      Instant to = day.plusDays(1).atStartOfDay(SHANGHAI).toInstant();
      LocalDateTime afterPaid = null;
      String afterId = "";
      while (true) {
        List<PaidOrder> page = paidPage(from, to, afterPaid, afterId);
        for (PaidOrder order : page) {
          if (!seen.contains(order.orderId())) {
            Map<String, Object> detail = new LinkedHashMap<>();
            detail.put(
                "order",
                Map.of(
                    "amountFen",
                    order.amountFen(),
                    "transactionId",
                    String.valueOf(order.transactionId()),
                    "paidAt",
                    order.paidAt().toString() + "Z"));
            record("O:" + order.orderId(), order.orderId(), LineCategory.NOT_IN_BILL, detail);
          }
        }
        if (page.size() < ORDER_PAGE) {
          return;
        }
        PaidOrder last = page.get(page.size() - 1);
        afterPaid = last.paidAt();
        afterId = last.orderId();
      }
    }

    private List<PaidOrder> paidPage(
        Instant from, Instant to, LocalDateTime afterPaid, String afterId) {
      return tx.read(
          "orders of " + tenantId + " paid on " + day,
          c -> {
            try (PreparedStatement ps =
                c.prepareStatement(
                    "SELECT order_id, paid_at, amount_fen, transaction_id FROM orders"
                        + " WHERE tenant_id = ? AND paid_at >= ? AND paid_at < ?"
                        + " AND (paid_at > ? OR (paid_at = ? AND order_id > ?))"
                        + " ORDER BY paid_at, order_id LIMIT "
                        + ORDER_PAGE)) {
              ps.setString(1, tenantId);
              DbTime.bind(ps, 2, from);
              DbTime.bind(ps, 3, to);
              LocalDateTime cursor =
                  afterPaid == null ? LocalDateTime.of(1000, 1, 1, 0, 0) : afterPaid;
              DbTime.bind(ps, 4, cursor);
              DbTime.bind(ps, 5, cursor);
              ps.setString(6, afterId);
              return paidOrders(ps);
            }
          });
    }

    ReconciliationReport finish() {
      Map<String, Long> named = new TreeMap<>();
      long flags = 0;
      for (Map.Entry<LineCategory, Long> e : counts.entrySet()) {
        named.put(e.getKey().name(), e.getValue());
        if (e.getKey().flagged()) {
          flags += e.getValue();
        }
      }
      long flagCount = flags;
      int runs =
          tx.inTransaction(
              "save the reconciliation report of " + tenantId + " for " + day,
              c ->
                  ReconciliationStore.saveReport(
                      c, tenantId, day, mchid, billLines, named, flagCount));
      metrics.count("reconciliation_lines", billLines);
      metrics.count(MetricNames.RECONCILIATION_FLAGS, newFlags);
      List<ReconciliationReport.Line> flagged =
          tx.read("flagged lines", c -> ReconciliationStore.flagged(c, tenantId, day));
      return new ReconciliationReport(
          tenantId, day.toString(), mchid, billLines, named, flags, newFlags, runs, flagged);
    }
  }

  private record Lookup(
      Map<String, List<Owner>> owners,
      Map<String, Recorded> recorded,
      Map<String, RecordedRefunds.Refund> refunds) {}

  private record PaidOrder(
      String orderId, LocalDateTime paidAt, long amountFen, String transactionId) {}

  private static List<PaidOrder> paidOrders(PreparedStatement ps) throws SQLException {
    List<PaidOrder> out = new ArrayList<>();
    try (ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        out.add(
            new PaidOrder(
                rs.getString("order_id"),
                DbTime.utc(rs, "paid_at"),
                rs.getLong("amount_fen"),
                rs.getString("transaction_id")));
      }
    }
    return out;
  }

  private static String ref(BillLine line) {
    return line.refund() ? "R:" + line.outRefundNo() : "T:" + line.outTradeNo();
  }

  private static Map<String, Object> detail(BillLine line, Owner owner) {
    Map<String, Object> detail = new LinkedHashMap<>();
    Map<String, Object> bill = new LinkedHashMap<>();
    bill.put("tradeTime", line.tradeTime().toString());
    bill.put("mchid", line.mchid());
    if (!line.tradeMchid().equals(line.mchid())) {
      bill.put("subMchid", line.subMchid());
    }
    bill.put("outTradeNo", line.outTradeNo());
    bill.put("transactionId", line.transactionId());
    bill.put("tradeState", line.tradeState());
    bill.put("totalFen", line.totalFen());
    if (line.refund()) {
      bill.put("outRefundNo", line.outRefundNo());
      bill.put("refundFen", line.refundFen());
    }
    detail.put("bill", bill);
    if (owner != null) {
      Map<String, Object> order = new LinkedHashMap<>();
      order.put("orderId", owner.orderId());
      order.put("status", String.valueOf(owner.status()));
      order.put("amountFen", owner.amountFen());
      order.put("transactionId", String.valueOf(owner.transactionId()));
      detail.put("order", order);
    }
    return detail;
  }
}
