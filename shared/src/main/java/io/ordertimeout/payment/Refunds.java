package io.ordertimeout.payment;

import io.ordertimeout.metrics.MetricNames;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.mysql.DbTime;
import io.ordertimeout.mysql.Tx;
import io.ordertimeout.util.Json;
import io.ordertimeout.wechat.PaymentGateway;
import io.ordertimeout.wechat.PaymentRejectedException;
import io.ordertimeout.wechat.PaymentTransientException;
import io.ordertimeout.wechat.RefundResult;
import io.ordertimeout.wechat.RefundStatus;
import io.ordertimeout.wechat.WeChatTrade;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLIntegrityConstraintViolationException;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every refund this system asks WeChat for, tracked to WeChat's final word (table {@code refunds}).
 *
 * <p>WeChat's answer to a refund request is acceptance (PROCESSING), not the result. The result
 * comes as a refund notification ({@link RefundNotificationService}) or, when none comes, from
 * compensation's query ({@link #settle}); both go through {@link #apply}, which moves the row only
 * along WeChat's transitions (PENDING -> PROCESSING -> SUCCESS | CLOSED | ABNORMAL, ABNORMAL ->
 * PROCESSING | SUCCESS | CLOSED once an operator applied for the exception refund; SUCCESS and
 * CLOSED are final), so a late or repeated answer changes nothing. An ABNORMAL refund (the payer's
 * card is gone) is counted ({@link MetricNames#REFUNDS_ABNORMAL}, alarmed) and flagged
 * REFUND_ABNORMAL in compensation_flags for an operator; a CLOSED one is flagged REFUND_CLOSED.
 *
 * <p>The row is written before WeChat is called and a retry names the same out_refund_no (the
 * primary key), which WeChat answers with the refund it has. WeChat wants refunds of one order at
 * least a minute apart: a new refund of an order whose other refund was sent less than {@link
 * #WECHAT_SPACING} ago is not sent ({@link RefundSpacingException}); the order row's lock makes the
 * check and the claim of the slot one step.
 *
 * <p>Over 300 lines: a refund's request, its transitions and their effects (paid_after_close, the
 * operator's flags, the metrics) are one state machine over one table, kept together so the
 * transitions read in one place.
 */
public final class Refunds {
  private static final Logger log = LoggerFactory.getLogger(Refunds.class);

  /** WeChat Pay: "同一笔订单多次退款的请求需相隔1分钟". */
  public static final Duration WECHAT_SPACING = Duration.ofMinutes(1);

  /** Flag kinds in compensation_flags, subject the order id. */
  public static final String ABNORMAL_FLAG = "REFUND_ABNORMAL";

  public static final String CLOSED_FLAG = "REFUND_CLOSED";

  /** Why a refund is asked for; the migration's CHECK lists the same. */
  public enum Purpose {
    PAID_AFTER_CLOSE
  }

  /** Who told us a refund's status. */
  public enum Source {
    CREATE,
    NOTIFY,
    QUERY
  }

  /** A refund to ask for: the order's bound trade, the out_refund_no every retry repeats. */
  public record Request(
      String tenantId,
      String orderId,
      WeChatTrade trade,
      String outRefundNo,
      long amountFen,
      String reason,
      Purpose purpose) {}

  /** A refund as tracked here. */
  public record Tracked(
      String tenantId,
      String outRefundNo,
      String orderId,
      String mchid,
      String outTradeNo,
      long amountFen,
      RefundStatus status,
      String refundId) {}

  /** WeChat's word on one refund, from a notification, a query or the create answer. */
  public record Outcome(
      RefundStatus status, String refundId, Instant successTime, String userReceivedAccount) {}

  private final Tx tx;
  private final PaymentGateway gateway;
  private final Metrics metrics;
  private final Duration spacing;

  public Refunds(Tx tx, PaymentGateway gateway, Metrics metrics) {
    this(tx, gateway, metrics, WECHAT_SPACING);
  }

  /**
   * @param spacing at least {@link #WECHAT_SPACING} in production; tests shorten it to see a spaced
   *     refund go through without waiting a minute
   */
  public Refunds(Tx tx, PaymentGateway gateway, Metrics metrics, Duration spacing) {
    this.tx = tx;
    this.gateway = gateway;
    this.metrics = metrics;
    this.spacing = spacing;
  }

  /**
   * Sends the refund to WeChat unless WeChat already holds it (a row past PENDING: its status is
   * answered without a call).
   *
   * @throws RefundSpacingException another refund of the order was sent within the spacing
   * @throws PaymentTransientException WeChat gave no answer (recorded; retry later, same number)
   * @throws PaymentRejectedException WeChat refused the request (recorded)
   */
  public RefundResult request(Request r) {
    Claim claim = tx.inTransaction("claim refund " + r.outRefundNo(), c -> claim(c, r));
    if (claim.recentOther() != null) {
      // the row is recorded PENDING (committed): the retry finds it and sends the same number
      throw new RefundSpacingException(
          r.tenantId(), r.orderId(), r.outRefundNo(), claim.recentOther());
    }
    Tracked tracked = claim.row();
    if (tracked.status() != RefundStatus.NOT_FOUND) {
      return new RefundResult(
          tracked.outRefundNo(), tracked.outTradeNo(), tracked.refundId(), tracked.status(), null);
    }
    RefundResult answer;
    try {
      answer = gateway.refund(r.tenantId(), r.trade(), r.outRefundNo(), r.amountFen(), r.reason());
    } catch (PaymentTransientException | PaymentRejectedException e) {
      recordError(r.tenantId(), r.outRefundNo(), e.getMessage());
      throw e;
    }
    if (answer.status() != RefundStatus.NOT_FOUND) {
      apply(
          r.tenantId(),
          r.outRefundNo(),
          new Outcome(answer.status(), answer.refundId(), null, null),
          Source.CREATE);
    }
    return answer;
  }

  /** The row to act on, or the other refund of the order that was sent within the spacing. */
  private record Claim(Tracked row, String recentOther) {}

  /**
   * Inserts the row if new, then claims the order's refund slot. Answers the row with status
   * NOT_FOUND when WeChat is to be called, else the row as it is (WeChat holds it already).
   */
  private Claim claim(Connection c, Request r) throws SQLException {
    lockOrder(c, r.tenantId(), r.orderId());
    Tracked row = load(c, r.tenantId(), r.outRefundNo(), true);
    if (row == null) {
      insert(c, r);
    } else if (row.status() != RefundStatus.NOT_FOUND) {
      return new Claim(row, null);
    }
    String recent = recentOther(c, r);
    if (recent != null) {
      return new Claim(null, recent);
    }
    try (PreparedStatement ps =
        c.prepareStatement(
            "UPDATE refunds SET requested_at = NOW(3), request_count = request_count + 1"
                + " WHERE tenant_id = ? AND out_refund_no = ?")) {
      ps.setString(1, r.tenantId());
      ps.setString(2, r.outRefundNo());
      ps.executeUpdate();
    }
    return new Claim(
        new Tracked(
            r.tenantId(),
            r.outRefundNo(),
            r.orderId(),
            r.trade().mchid(),
            r.trade().outTradeNo(),
            r.amountFen(),
            RefundStatus.NOT_FOUND,
            null),
        null);
  }

  /** Serialises the refunds of one order: the spacing check and the claim are one step. */
  private static void lockOrder(Connection c, String tenantId, String orderId) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT order_id FROM orders WHERE tenant_id = ? AND order_id = ? FOR UPDATE")) {
      ps.setString(1, tenantId);
      ps.setString(2, orderId);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new IllegalArgumentException(
              "tenant " + tenantId + " has no order " + orderId + " to refund");
        }
      }
    }
  }

  private static void insert(Connection c, Request r) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO refunds (tenant_id, out_refund_no, order_id, mchid, out_trade_no,"
                + " purpose, amount_fen) VALUES (?,?,?,?,?,?,?)")) {
      ps.setString(1, r.tenantId());
      ps.setString(2, r.outRefundNo());
      ps.setString(3, r.orderId());
      ps.setString(4, r.trade().mchid());
      ps.setString(5, r.trade().outTradeNo());
      ps.setString(6, r.purpose().name());
      ps.setLong(7, r.amountFen());
      ps.executeUpdate();
    } catch (SQLIntegrityConstraintViolationException e) {
      // (mchid, out_refund_no) of another tenant's refund: WeChat would answer with that refund
      throw new IllegalArgumentException(
          "out_refund_no " + r.outRefundNo() + " is taken at merchant " + r.trade().mchid(), e);
    }
  }

  /** Another refund of the order sent within the spacing, by the database's clock; else null. */
  private String recentOther(Connection c, Request r) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT out_refund_no FROM refunds WHERE tenant_id = ? AND order_id = ?"
                + " AND out_refund_no <> ?"
                + " AND requested_at > TIMESTAMPADD(MICROSECOND, ?, NOW(3)) LIMIT 1")) {
      ps.setString(1, r.tenantId());
      ps.setString(2, r.orderId());
      ps.setString(3, r.outRefundNo());
      ps.setLong(4, -spacing.toMillis() * 1_000);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString("out_refund_no") : null;
      }
    }
  }

  /** The tracked refund, or null; status NOT_FOUND while PENDING (WeChat never took it). */
  public Tracked tracked(String tenantId, String outRefundNo) {
    return tx.read(
        "load refund " + tenantId + "/" + outRefundNo, c -> load(c, tenantId, outRefundNo, false));
  }

  private static Tracked load(Connection c, String tenantId, String outRefundNo, boolean lock)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT tenant_id, out_refund_no, order_id, mchid, out_trade_no, amount_fen, status,"
                + " refund_id FROM refunds WHERE tenant_id = ? AND out_refund_no = ?"
                + (lock ? " FOR UPDATE" : ""))) {
      ps.setString(1, tenantId);
      ps.setString(2, outRefundNo);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return null;
        }
        String status = rs.getString("status");
        return new Tracked(
            rs.getString("tenant_id"),
            rs.getString("out_refund_no"),
            rs.getString("order_id"),
            rs.getString("mchid"),
            rs.getString("out_trade_no"),
            rs.getLong("amount_fen"),
            "PENDING".equals(status) ? RefundStatus.NOT_FOUND : RefundStatus.valueOf(status),
            rs.getString("refund_id"));
      }
    }
  }

  /** WeChat's transitions; NOT_FOUND stands for PENDING (not at WeChat yet). */
  static boolean canMove(RefundStatus from, RefundStatus to) {
    return switch (to) {
      case PROCESSING -> from == RefundStatus.NOT_FOUND || from == RefundStatus.ABNORMAL;
      case ABNORMAL -> from == RefundStatus.NOT_FOUND || from == RefundStatus.PROCESSING;
      case SUCCESS, CLOSED ->
          from == RefundStatus.NOT_FOUND
              || from == RefundStatus.PROCESSING
              || from == RefundStatus.ABNORMAL;
      case NOT_FOUND -> false;
    };
  }

  /**
   * Moves the tracked refund to WeChat's status if that is one of WeChat's transitions from its
   * status here; also the paid-after-close case's refund_status, and the operator's flags.
   *
   * @return true when the row moved; false when it was there already or the answer is stale
   * @throws IllegalArgumentException no such tracked refund
   */
  public boolean apply(String tenantId, String outRefundNo, Outcome outcome, Source source) {
    Tracked before =
        tx.inTransaction(
            "apply refund " + outcome.status() + " to " + tenantId + "/" + outRefundNo,
            c -> move(c, tenantId, outRefundNo, outcome, source));
    if (!canMove(before.status(), outcome.status())) {
      return false;
    }
    afterMove(before, outcome, source);
    return true;
  }

  private static Tracked move(
      Connection c, String tenantId, String outRefundNo, Outcome outcome, Source source)
      throws SQLException {
    Tracked row = load(c, tenantId, outRefundNo, true);
    if (row == null) {
      throw new IllegalArgumentException("tenant " + tenantId + " tracks no refund " + outRefundNo);
    }
    if (!canMove(row.status(), outcome.status())) {
      return row;
    }
    String status = outcome.status().name();
    try (PreparedStatement ps =
        c.prepareStatement(
            "UPDATE refunds SET status = ?, refund_id = COALESCE(?, refund_id),"
                + " success_at = COALESCE(?, success_at),"
                + " user_received_account = COALESCE(?, user_received_account),"
                + " status_source = ?, last_error = NULL"
                + " WHERE tenant_id = ? AND out_refund_no = ?")) {
      ps.setString(1, status);
      ps.setString(2, outcome.refundId());
      DbTime.bind(ps, 3, outcome.successTime());
      ps.setString(4, outcome.userReceivedAccount());
      ps.setString(5, source.name());
      ps.setString(6, tenantId);
      ps.setString(7, outRefundNo);
      ps.executeUpdate();
    }
    try (PreparedStatement ps =
        c.prepareStatement(
            "UPDATE paid_after_close SET refund_status = ?, refund_id = COALESCE(?, refund_id)"
                + " WHERE tenant_id = ? AND out_refund_no = ?")) {
      ps.setString(1, status);
      ps.setString(2, outcome.refundId());
      ps.setString(3, tenantId);
      ps.setString(4, outRefundNo);
      ps.executeUpdate();
    }
    flags(c, row, outcome, source);
    return row;
  }

  /** Raises REFUND_ABNORMAL / REFUND_CLOSED; resolves REFUND_ABNORMAL when WeChat goes on. */
  private static void flags(Connection c, Tracked row, Outcome outcome, Source source)
      throws SQLException {
    RefundStatus to = outcome.status();
    if (to == RefundStatus.ABNORMAL || to == RefundStatus.CLOSED) {
      Map<String, Object> evidence = new LinkedHashMap<>();
      evidence.put("outRefundNo", row.outRefundNo());
      evidence.put("refundId", outcome.refundId() == null ? row.refundId() : outcome.refundId());
      evidence.put("outTradeNo", row.outTradeNo());
      evidence.put("amountFen", row.amountFen());
      evidence.put("reportedBy", source.name());
      String json = Json.write(Json.MAPPER.valueToTree(evidence));
      try (PreparedStatement ps =
          c.prepareStatement(
              "INSERT INTO compensation_flags (kind, subject, evidence, tenant_id)"
                  + " VALUES (?,?,?,?) ON DUPLICATE KEY UPDATE evidence = ?,"
                  + " last_seen_at = NOW(3), seen_count = seen_count + 1, resolved_at = NULL")) {
        ps.setString(1, to == RefundStatus.ABNORMAL ? ABNORMAL_FLAG : CLOSED_FLAG);
        ps.setString(2, row.orderId());
        ps.setString(3, json);
        ps.setString(4, row.tenantId());
        ps.setString(5, json);
        ps.executeUpdate();
      }
    } else if (row.status() == RefundStatus.ABNORMAL) {
      try (PreparedStatement ps =
          c.prepareStatement(
              "UPDATE compensation_flags SET resolved_at = NOW(3) WHERE kind = ?"
                  + " AND tenant_id = ? AND subject = ? AND resolved_at IS NULL"
                  + " AND NOT EXISTS (SELECT 1 FROM refunds r WHERE r.tenant_id = ?"
                  + " AND r.order_id = ? AND r.status = 'ABNORMAL')")) {
        ps.setString(1, ABNORMAL_FLAG);
        ps.setString(2, row.tenantId());
        ps.setString(3, row.orderId());
        ps.setString(4, row.tenantId());
        ps.setString(5, row.orderId());
        ps.executeUpdate();
      }
    }
  }

  private void afterMove(Tracked before, Outcome outcome, Source source) {
    switch (outcome.status()) {
      case SUCCESS -> metrics.count("refunds_succeeded", 1);
      case CLOSED -> {
        metrics.count("refunds_closed", 1);
        log.error(
            "refund {} of order {}/{} ({} fen) CLOSED at WeChat ({}): the money did not go back;"
                + " flagged {}",
            before.outRefundNo(),
            before.tenantId(),
            before.orderId(),
            before.amountFen(),
            source,
            CLOSED_FLAG);
      }
      case ABNORMAL -> {
        metrics.count(MetricNames.REFUNDS_ABNORMAL, 1);
        log.error(
            "refund {} of order {}/{} ({} fen) ABNORMAL at WeChat ({}): the payer's account cannot"
                + " take it; an operator applies for the exception refund (runbook"
                + " RefundsAbnormalAlarm); flagged {}",
            before.outRefundNo(),
            before.tenantId(),
            before.orderId(),
            before.amountFen(),
            source,
            ABNORMAL_FLAG);
      }
      default -> {}
    }
  }

  /**
   * Asks WeChat for the refund's status and applies it: the fallback when no notification came.
   *
   * @return WeChat's status (NOT_FOUND: WeChat does not know the out_refund_no)
   * @throws PaymentTransientException WeChat gave no answer
   */
  public RefundStatus settle(String tenantId, String outRefundNo) {
    RefundResult answer = gateway.queryRefund(tenantId, outRefundNo);
    if (answer.status() != RefundStatus.NOT_FOUND) {
      apply(
          tenantId,
          outRefundNo,
          new Outcome(answer.status(), answer.refundId(), null, null),
          Source.QUERY);
    }
    return answer.status();
  }

  private void recordError(String tenantId, String outRefundNo, String error) {
    String text = error == null ? "" : error.length() <= 512 ? error : error.substring(0, 512);
    tx.inTransaction(
        "record refund error " + outRefundNo,
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement(
                  "UPDATE refunds SET last_error = ? WHERE tenant_id = ? AND out_refund_no = ?")) {
            ps.setString(1, text);
            ps.setString(2, tenantId);
            ps.setString(3, outRefundNo);
            return ps.executeUpdate();
          }
        });
  }
}
