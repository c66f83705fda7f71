package io.ordertimeout.mysql;

import io.ordertimeout.domain.Order;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.OrderStatus;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Reads orders and their items from MySQL. Columns are read by name. */
public final class OrderStore {
  static final String ORDER_COLUMNS =
      "order_id, tenant_id, user_id, status, amount_fen, coupon_id, prepay_id,"
          + " created_at, expire_at, paid_at, closed_at, close_reason, request_hash";

  private final Tx tx;

  public OrderStore(Tx tx) {
    this.tx = tx;
  }

  public Optional<Order> find(String tenantId, String orderId) {
    return tx.read("load order " + tenantId + "/" + orderId, c -> find(c, tenantId, orderId));
  }

  /**
   * True when {@code tenantId} has an order {@code orderId}: the order API's scope (another
   * tenant's order of the same id is a different order, and answers as missing).
   */
  public boolean owns(String tenantId, String orderId) {
    return tx.read(
        "check tenant " + tenantId + " of order " + orderId,
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement("SELECT 1 FROM orders WHERE tenant_id = ? AND order_id = ?")) {
            ps.setString(1, tenantId);
            ps.setString(2, orderId);
            try (ResultSet rs = ps.executeQuery()) {
              return rs.next();
            }
          }
        });
  }

  public static Optional<Order> find(Connection c, String tenantId, String orderId)
      throws SQLException {
    List<Order> found = findAll(c, tenantId, List.of(orderId));
    return found.isEmpty() ? Optional.empty() : Optional.of(found.get(0));
  }

  /** Loads a tenant's orders with their items, two queries however many ids. */
  public static List<Order> findAll(Connection c, String tenantId, Collection<String> orderIds)
      throws SQLException {
    if (orderIds.isEmpty()) {
      return List.of();
    }
    Map<String, List<OrderItem>> items = items(c, tenantId, orderIds);
    List<Order> orders = new ArrayList<>(orderIds.size());
    String sql =
        "SELECT " + ORDER_COLUMNS + " FROM orders WHERE tenant_id = ? AND order_id IN (%s)";
    // IN lists under RDS Proxy's 16 KB (Statements)
    for (List<String> part : Statements.inLists(sql, List.copyOf(orderIds))) {
      try (PreparedStatement ps =
          c.prepareStatement(String.format(sql, placeholders(part.size())))) {
        ps.setString(1, tenantId);
        bind(ps, 2, part);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            orders.add(map(rs, items.getOrDefault(rs.getString("order_id"), List.of())));
          }
        }
      }
    }
    return orders;
  }

  /** The items of a tenant's orders, by order id in id order, each order's lines in SKU order. */
  public static Map<String, List<OrderItem>> items(
      Connection c, String tenantId, Collection<String> orderIds) throws SQLException {
    Map<String, List<OrderItem>> items = new java.util.TreeMap<>();
    String sql =
        "SELECT order_id, sku_id, quantity FROM order_items WHERE tenant_id = ? AND order_id IN (%s)"
            + " ORDER BY order_id, sku_id";
    for (List<String> part : Statements.inLists(sql, List.copyOf(orderIds))) {
      try (PreparedStatement ps =
          c.prepareStatement(String.format(sql, placeholders(part.size())))) {
        ps.setString(1, tenantId);
        bind(ps, 2, part);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            items
                .computeIfAbsent(rs.getString("order_id"), k -> new ArrayList<>())
                .add(new OrderItem(rs.getString("sku_id"), rs.getInt("quantity")));
          }
        }
      }
    }
    return items;
  }

  private static Order map(ResultSet rs, List<OrderItem> items) throws SQLException {
    return new Order(
        rs.getString("order_id"),
        rs.getString("tenant_id"),
        rs.getString("user_id"),
        OrderStatus.valueOf(rs.getString("status")),
        rs.getLong("amount_fen"),
        rs.getString("coupon_id"),
        rs.getString("prepay_id"),
        items,
        DbTime.instant(rs, "created_at"),
        DbTime.instant(rs, "expire_at"),
        DbTime.instant(rs, "paid_at"),
        DbTime.instant(rs, "closed_at"),
        rs.getString("close_reason"),
        rs.getString("request_hash"));
  }

  public static String placeholders(int n) {
    return String.join(",", java.util.Collections.nCopies(n, "?"));
  }

  public static int bind(PreparedStatement ps, int start, Collection<String> values)
      throws SQLException {
    int i = start;
    for (String v : values) {
      ps.setString(i++, v);
    }
    return i;
  }
}
