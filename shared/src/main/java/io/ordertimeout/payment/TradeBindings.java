package io.ordertimeout.payment;

import io.ordertimeout.mysql.OrderStore;
import io.ordertimeout.mysql.Statements;
import io.ordertimeout.mysql.Tx;
import io.ordertimeout.payment.TradeBinding.Problem;
import io.ordertimeout.wechat.PaymentGateway;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLIntegrityConstraintViolationException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * The trade-binding rule: one WeChat trade (mchid, out_trade_no) belongs to exactly one (tenant,
 * order). WeChat keys trades by merchant and out_trade_no while order ids are unique per tenant
 * only, and tenants may share a merchant account; so the prepay records here which trade an order
 * uses before it asks WeChat to create it, and every query, close, refund and notification looks
 * the trade up here instead of naming the bare order id.
 *
 * <p>An order's out_trade_no is its id when no other order of the same merchant holds that number,
 * else the first 32 hex digits of SHA-256(tenant, order id), within WeChat's 6-32 characters. The
 * UNIQUE(mchid, out_trade_no) key settles two tenants binding the same number at once.
 *
 * <p>A trade created before bindings recorded the merchant (mchid NULL, out_trade_no = order id) is
 * the tenant's merchant's of today, and reachable only while no other tenant's trade of that
 * merchant has the same number: when one does, WeChat holds one trade for two orders and no call
 * may act on it for either ({@link Problem#SHARED_TRADE}; compensation flags it for an operator).
 */
public final class TradeBindings {
  /** WeChat Pay's out_trade_no: 6-32 characters of digits, letters, _ - | *. */
  static final Pattern OUT_TRADE_NO = Pattern.compile("[0-9A-Za-z_\\-|*]{6,32}");

  /** MySQL's ER_DUP_ENTRY. */
  private static final int DUPLICATE_KEY = 1062;

  private final Tx tx;
  private final PaymentGateway gateway;

  public TradeBindings(Tx tx, PaymentGateway gateway) {
    this.tx = tx;
    this.gateway = gateway;
  }

  /** The out_trade_no of an order whose id another order of its merchant already holds. */
  static String digest(String tenantId, String orderId) {
    try {
      byte[] hash =
          MessageDigest.getInstance("SHA-256")
              .digest((tenantId + "\n" + orderId).getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(hash).substring(0, 32);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JVM has SHA-256", e);
    }
  }

  /**
   * The order's binding, created now if it has none: in the prepay's first transaction, with the
   * order's row locked, so the binding commits together with prepaid_at and before WeChat is asked.
   *
   * @param mchid the tenant's merchant now
   */
  TradeBinding bind(Connection c, String tenantId, String orderId, String mchid)
      throws SQLException {
    Map<String, TradeBinding> existing = load(c, tenantId, List.of(orderId));
    if (existing.containsKey(orderId)) {
      return check(c, existing.get(orderId), mchid);
    }
    String bare = orderId;
    if (OUT_TRADE_NO.matcher(bare).matches()
        && free(c, bare, mchid)
        && insert(c, tenantId, orderId, mchid, bare)) {
      return new TradeBinding(tenantId, orderId, mchid, bare, Problem.NONE);
    }
    String digest = digest(tenantId, orderId);
    if (!insert(c, tenantId, orderId, mchid, digest)) {
      throw new IllegalStateException(
          "out_trade_no " + digest + " of order " + tenantId + "/" + orderId + " is taken");
    }
    return new TradeBinding(tenantId, orderId, mchid, digest, Problem.NONE);
  }

  /**
   * The binding of each of the tenant's prepaid orders {@code orderIds}. A prepaid order without a
   * row (prepaid by a version before bindings, after the migration ran) is bound as the migration
   * binds those: its id, no mchid.
   *
   * @throws IllegalArgumentException when the tenant has no merchant account
   */
  public Map<String, TradeBinding> resolve(String tenantId, Collection<String> orderIds) {
    String mchid = gateway.merchantId(tenantId);
    List<String> ids = new ArrayList<>(new TreeSet<>(orderIds));
    return tx.read(
        "trade bindings of " + ids.size() + " orders of tenant " + tenantId,
        c -> {
          Map<String, TradeBinding> rows = load(c, tenantId, ids);
          Map<String, TradeBinding> out = new LinkedHashMap<>();
          for (String id : ids) {
            TradeBinding row = rows.get(id);
            out.put(
                id,
                check(
                    c,
                    row == null ? new TradeBinding(tenantId, id, null, id, Problem.NONE) : row,
                    mchid));
          }
          return out;
        });
  }

  /** {@link #resolve(String, Collection)} of one order. */
  public TradeBinding resolve(String tenantId, String orderId) {
    return resolve(tenantId, List.of(orderId)).get(orderId);
  }

  /**
   * The order of {@code tenantId} that trade (mchid, outTradeNo) belongs to; empty when it belongs
   * to no order of that tenant (another tenant's, or no order's), or cannot be told apart.
   */
  public Optional<String> orderOf(String tenantId, String mchid, String outTradeNo) {
    String tenantsMchid = gateway.merchantId(tenantId);
    return tx.read(
        "order of trade " + mchid + "/" + outTradeNo,
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement(
                  "SELECT tenant_id, order_id FROM wechat_trades"
                      + " WHERE mchid = ? AND out_trade_no = ?")) {
            ps.setString(1, mchid);
            ps.setString(2, outTradeNo);
            try (ResultSet rs = ps.executeQuery()) {
              if (rs.next()) {
                return tenantId.equals(rs.getString("tenant_id"))
                    ? Optional.of(rs.getString("order_id"))
                    : Optional.empty();
              }
            }
          }
          return legacyOrderOf(c, tenantId, tenantsMchid, outTradeNo);
        });
  }

  /**
   * A trade bound without mchid (or prepaid before bindings) names its order by the bare id: the
   * order of that id, if its binding is such a one and no other tenant's trade shares the number.
   */
  private Optional<String> legacyOrderOf(
      Connection c, String tenantId, String mchid, String outTradeNo) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT o.order_id, t.order_id AS bound, t.mchid, t.out_trade_no,"
                + " (o.prepay_id IS NOT NULL OR o.prepaid_at IS NOT NULL) AS prepaid"
                + " FROM orders o LEFT JOIN wechat_trades t"
                + " ON t.tenant_id = o.tenant_id AND t.order_id = o.order_id"
                + " WHERE o.tenant_id = ? AND o.order_id = ?")) {
      ps.setString(1, tenantId);
      ps.setString(2, outTradeNo);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return Optional.empty();
        }
        boolean legacy =
            rs.getString("bound") == null
                ? rs.getBoolean("prepaid")
                : rs.getString("mchid") == null && outTradeNo.equals(rs.getString("out_trade_no"));
        if (!legacy) {
          return Optional.empty();
        }
      }
    }
    TradeBinding legacy = new TradeBinding(tenantId, outTradeNo, null, outTradeNo, Problem.NONE);
    return check(c, legacy, mchid).reachable() ? Optional.of(outTradeNo) : Optional.empty();
  }

  /** The out_trade_no the order's trade has (its id when it has no binding). */
  static String outTradeNoOf(Connection c, String tenantId, String orderId) throws SQLException {
    TradeBinding row = load(c, tenantId, List.of(orderId)).get(orderId);
    return row == null ? orderId : row.outTradeNo();
  }

  private TradeBinding check(Connection c, TradeBinding binding, String mchid) throws SQLException {
    if (binding.mchid() != null) {
      return binding.mchid().equals(mchid)
          ? binding
          : binding.withProblem(Problem.MERCHANT_CHANGED);
    }
    return sharedWithOtherTenant(c, binding.tenantId(), binding.outTradeNo(), mchid)
        ? binding.withProblem(Problem.SHARED_TRADE)
        : binding;
  }

  /** No binding of merchant {@code mchid} has the number yet. */
  private boolean free(Connection c, String outTradeNo, String mchid) throws SQLException {
    return !sharedWithOtherTenant(c, null, outTradeNo, mchid);
  }

  /**
   * Another tenant's (any tenant's, when {@code tenantId} is null) binding has the number under
   * {@code mchid}, recorded or, without a recorded one, as its tenant's merchant of today; a tenant
   * whose merchant is unknown here counts as the same merchant.
   */
  private boolean sharedWithOtherTenant(
      Connection c, String tenantId, String outTradeNo, String mchid) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT tenant_id, mchid FROM wechat_trades WHERE out_trade_no = ?"
                + " AND (mchid = ? OR mchid IS NULL)")) {
      ps.setString(1, outTradeNo);
      ps.setString(2, mchid);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String other = rs.getString("tenant_id");
          if (other.equals(tenantId)) {
            continue;
          }
          if (rs.getString("mchid") != null || sameMerchant(other, mchid)) {
            return true;
          }
        }
      }
    }
    return false;
  }

  private boolean sameMerchant(String tenantId, String mchid) {
    try {
      return mchid.equals(gateway.merchantId(tenantId));
    } catch (IllegalArgumentException e) {
      return true;
    }
  }

  /** Inserts the binding; false when the number is taken under the merchant (a concurrent bind). */
  private static boolean insert(
      Connection c, String tenantId, String orderId, String mchid, String outTradeNo)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO wechat_trades (tenant_id, order_id, mchid, out_trade_no)"
                + " VALUES (?,?,?,?)")) {
      ps.setString(1, tenantId);
      ps.setString(2, orderId);
      ps.setString(3, mchid);
      ps.setString(4, outTradeNo);
      ps.executeUpdate();
      return true;
    } catch (SQLIntegrityConstraintViolationException e) {
      if (e.getErrorCode() != DUPLICATE_KEY) {
        throw e;
      }
      // InnoDB rolls back only this statement; the transaction goes on
      return false;
    }
  }

  private static Map<String, TradeBinding> load(
      Connection c, String tenantId, List<String> orderIds) throws SQLException {
    Map<String, TradeBinding> out = new LinkedHashMap<>();
    String sql =
        "SELECT order_id, mchid, out_trade_no FROM wechat_trades"
            + " WHERE tenant_id = ? AND order_id IN (%s)";
    for (List<String> part : Statements.inLists(sql, orderIds)) {
      try (PreparedStatement ps =
          c.prepareStatement(String.format(sql, OrderStore.placeholders(part.size())))) {
        ps.setString(1, tenantId);
        OrderStore.bind(ps, 2, part);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            String id = rs.getString("order_id");
            out.put(
                id,
                new TradeBinding(
                    tenantId,
                    id,
                    rs.getString("mchid"),
                    rs.getString("out_trade_no"),
                    Problem.NONE));
          }
        }
      }
    }
    return out;
  }
}
