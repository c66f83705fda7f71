package io.ordertimeout.place;

import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.Order;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.OrderRejected;
import io.ordertimeout.domain.OrderStatus;
import io.ordertimeout.domain.PlaceOrderCommand;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.mysql.DbTime;
import io.ordertimeout.mysql.OrderStore;
import io.ordertimeout.mysql.Tx;
import io.ordertimeout.outbox.Outbox;
import io.ordertimeout.redis.TimerIndex;
import io.ordertimeout.util.Json;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLIntegrityConstraintViolationException;
import java.time.Instant;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Places an order: one transaction writes the order, its items, the RESERVE ledger rows, the
 * snapshot and the {@code created} outbox row, locks the coupon and reserves stock (conditional
 * UPDATE, no oversell), in the lock order of every writer (package {@code io.ordertimeout.mysql}):
 * order rows, their own rows, coupon, stock last. Then the timer is scheduled in Redis; its failure
 * does not fail the placement (compensation schedules any UNPAID order without a timer).
 *
 * <p>Over 300 lines: the placement transaction in its lock order (order row, items and ledger,
 * snapshot, event, coupon, stock), each step a short method; split, the lock order would be spread
 * over classes.
 */
public final class PlaceOrderService {
  private static final Logger log = LoggerFactory.getLogger(PlaceOrderService.class);

  /** ER_NO_REFERENCED_ROW_2 on MySQL and MariaDB: the tenant has no row in {@code tenants}. */
  private static final int FOREIGN_KEY_FAILED = 1452;

  private final Tx tx;
  private final TimerIndex timers;
  private final Metrics metrics;

  public PlaceOrderService(Tx tx, TimerIndex timers, Metrics metrics) {
    this.tx = tx;
    this.timers = timers;
    this.metrics = metrics;
  }

  /**
   * The outcome: the order as stored, and whether this call created it (201) or found a retry
   * (200).
   */
  public record Placed(Order order, boolean created) {}

  public Placed place(PlaceOrderCommand cmd) {
    String hash = cmd.requestHash();
    Optional<Placed> retry = existing(cmd.tenantId(), cmd.orderId(), hash);
    if (retry.isPresent()) {
      return retry.get();
    }
    Order order;
    try {
      order = tx.inTransaction("place order " + cmd.orderId(), c -> insert(c, cmd, hash));
    } catch (DuplicateOrder race) {
      // A concurrent identical request committed first: answer as a retry.
      return existing(cmd.tenantId(), cmd.orderId(), hash).orElseThrow(() -> race);
    }
    metrics.count("orders_placed", 1);
    schedule(order);
    return new Placed(order, true);
  }

  private Optional<Placed> existing(String tenantId, String orderId, String hash) {
    return tx.read("load order " + orderId, c -> OrderStore.find(c, tenantId, orderId))
        .map(
            found -> {
              if (!found.requestHash().equals(hash)) {
                throw new OrderRejected(
                    OrderRejected.Code.ORDER_CONFLICT,
                    "order " + orderId + " already exists with different content");
              }
              return new Placed(found, false);
            });
  }

  private void schedule(Order order) {
    try {
      timers.schedule(
          order.tenantId(),
          DeadlineKind.PAYMENT_TIMEOUT,
          order.orderId(),
          order.expireAt().toEpochMilli());
    } catch (RuntimeException e) {
      metrics.count("schedule_failures", 1);
      log.warn(
          "order {} placed but its timer was not scheduled; compensation will schedule it: {}",
          order.orderId(),
          e.toString());
    }
  }

  private Order insert(Connection c, PlaceOrderCommand cmd, String hash) throws SQLException {
    Instant now = DbTime.now(c);
    Instant expireAt = now.plusSeconds(cmd.timeoutSeconds());
    // The lock order (package io.ordertimeout.mysql): order row and its own rows, coupon, stock. A
    // re-order with the coupon of an order being closed waits for the coupon while holding no stock
    // row, so it cannot deadlock with the closer, which takes the stock rows after the coupons.
    insertOrder(c, cmd, hash, now, expireAt);
    insertItemsAndLedger(c, cmd);
    insertSnapshot(c, cmd, now, expireAt);
    Order order = placed(cmd, hash, now, expireAt);
    Outbox.created(c, order); // an own row of the order: commits with it or not at all
    if (cmd.couponId() != null) {
      lockCoupon(c, cmd);
    }
    for (OrderItem item : cmd.items()) { // sorted by SKU (PlaceOrderCommand)
      reserve(c, cmd.tenantId(), item);
    }
    return order;
  }

  private static Order placed(PlaceOrderCommand cmd, String hash, Instant now, Instant expireAt) {
    return new Order(
        cmd.orderId(),
        cmd.tenantId(),
        cmd.userId(),
        OrderStatus.UNPAID,
        cmd.amountFen(),
        cmd.couponId(),
        null,
        cmd.items(),
        now,
        expireAt,
        null,
        null,
        null,
        hash);
  }

  /**
   * The order row goes first: a concurrent duplicate waits on its primary key instead of reserving
   * stock.
   */
  private static void insertOrder(
      Connection c, PlaceOrderCommand cmd, String hash, Instant now, Instant expireAt)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO orders (order_id, tenant_id, user_id, status,"
                + " amount_fen, coupon_id, request_hash, created_at, expire_at) VALUES (?,?,?,'UNPAID',?,?,?,?,?)")) {
      ps.setString(1, cmd.orderId());
      ps.setString(2, cmd.tenantId());
      ps.setString(3, cmd.userId());
      ps.setLong(4, cmd.amountFen());
      ps.setString(5, cmd.couponId());
      ps.setString(6, hash);
      DbTime.bind(ps, 7, now);
      DbTime.bind(ps, 8, expireAt);
      ps.executeUpdate();
    } catch (SQLIntegrityConstraintViolationException e) {
      if (e.getErrorCode() == FOREIGN_KEY_FAILED) {
        throw new OrderRejected(
            OrderRejected.Code.UNKNOWN_TENANT,
            "tenant "
                + cmd.tenantId()
                + " is not onboarded (no row in tenants; see docs/operations/onboarding.md)");
      }
      throw new DuplicateOrder(cmd.orderId(), e);
    }
  }

  private static void reserve(Connection c, String tenantId, OrderItem item) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "UPDATE stock SET available = available - ?,"
                + " reserved = reserved + ? WHERE tenant_id = ? AND sku_id = ? AND available >= ?")) {
      ps.setInt(1, item.quantity());
      ps.setInt(2, item.quantity());
      ps.setString(3, tenantId);
      ps.setString(4, item.skuId());
      ps.setInt(5, item.quantity());
      if (ps.executeUpdate() == 1) {
        return;
      }
    }
    Long available = available(c, tenantId, item.skuId());
    if (available == null) {
      throw new OrderRejected(
          OrderRejected.Code.UNKNOWN_SKU, "SKU " + item.skuId() + " does not exist");
    }
    throw new OrderRejected(
        OrderRejected.Code.OUT_OF_STOCK,
        "SKU "
            + item.skuId()
            + " has "
            + available
            + " available, "
            + item.quantity()
            + " requested");
  }

  private static Long available(Connection c, String tenantId, String skuId) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT available FROM stock WHERE tenant_id = ? AND sku_id = ?")) {
      ps.setString(1, tenantId);
      ps.setString(2, skuId);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong("available") : null;
      }
    }
  }

  private static void lockCoupon(Connection c, PlaceOrderCommand cmd) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "UPDATE coupons SET status = 'LOCKED', locked_by_order = ?"
                + " WHERE coupon_id = ? AND tenant_id = ? AND owner_user_id = ? AND status = 'AVAILABLE'"
                + " AND (valid_until IS NULL OR valid_until > NOW(3))")) {
      ps.setString(1, cmd.orderId());
      ps.setString(2, cmd.couponId());
      ps.setString(3, cmd.tenantId());
      ps.setString(4, cmd.userId());
      if (ps.executeUpdate() == 1) {
        return;
      }
    }
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT owner_user_id, status FROM coupons WHERE coupon_id = ? AND tenant_id = ?")) {
      ps.setString(1, cmd.couponId());
      ps.setString(2, cmd.tenantId());
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new OrderRejected(
              OrderRejected.Code.UNKNOWN_COUPON, "coupon " + cmd.couponId() + " does not exist");
        }
        if (!rs.getString("owner_user_id").equals(cmd.userId())) {
          throw new OrderRejected(
              OrderRejected.Code.COUPON_NOT_OWNED,
              "coupon " + cmd.couponId() + " does not belong to user " + cmd.userId());
        }
        String status = rs.getString("status");
        String why = status.equals("AVAILABLE") ? "expired" : status;
        throw new OrderRejected(
            OrderRejected.Code.COUPON_NOT_AVAILABLE, "coupon " + cmd.couponId() + " is " + why);
      }
    }
  }

  private static void insertItemsAndLedger(Connection c, PlaceOrderCommand cmd)
      throws SQLException {
    try (PreparedStatement items =
            c.prepareStatement(
                "INSERT INTO order_items (order_id, sku_id, quantity, tenant_id)"
                    + " VALUES (?,?,?,?)");
        PreparedStatement ledger =
            c.prepareStatement(
                "INSERT INTO stock_movements (order_id, sku_id, quantity, tenant_id, kind)"
                    + " VALUES (?,?,?,?,'RESERVE')")) {
      for (OrderItem item : cmd.items()) {
        for (PreparedStatement ps : new PreparedStatement[] {items, ledger}) {
          ps.setString(1, cmd.orderId());
          ps.setString(2, item.skuId());
          ps.setInt(3, item.quantity());
          ps.setString(4, cmd.tenantId());
          ps.addBatch();
        }
      }
      items.executeBatch();
      ledger.executeBatch();
    }
  }

  private static void insertSnapshot(
      Connection c, PlaceOrderCommand cmd, Instant now, Instant expireAt) throws SQLException {
    String snapshot = OrderSnapshot.of(cmd, now, expireAt);
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO order_snapshots (order_id, snapshot, checksum, tenant_id)"
                + " VALUES (?,?,?,?)")) {
      ps.setString(1, cmd.orderId());
      ps.setString(2, snapshot);
      ps.setString(3, PlaceOrderCommand.sha256(snapshot));
      ps.setString(4, cmd.tenantId());
      ps.executeUpdate();
    }
  }

  /** Signals that another transaction inserted the same order id first. */
  static final class DuplicateOrder extends RuntimeException {
    DuplicateOrder(String orderId, Throwable cause) {
      super("order " + orderId + " was inserted concurrently", cause);
    }
  }

  /**
   * The snapshot document: what the order was when placed, versioned so compensation can evolve.
   */
  static final class OrderSnapshot {
    private OrderSnapshot() {}

    static String of(PlaceOrderCommand cmd, Instant createdAt, Instant expireAt) {
      var root =
          Json.object()
              .put("v", 1)
              .put("orderId", cmd.orderId())
              .put("tenantId", cmd.tenantId())
              .put("userId", cmd.userId())
              .put("amountFen", cmd.amountFen())
              .put("couponId", cmd.couponId())
              .put("createdAt", createdAt.toString())
              .put("expireAt", expireAt.toString());
      var items = root.putArray("items");
      cmd.items()
          .forEach(i -> items.addObject().put("skuId", i.skuId()).put("quantity", i.quantity()));
      return Json.write(root);
    }
  }
}
