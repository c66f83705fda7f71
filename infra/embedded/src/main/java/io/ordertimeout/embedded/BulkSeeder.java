package io.ordertimeout.embedded;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import javax.sql.DataSource;

/**
 * Writes many UNPAID orders the way placing them one by one would (order, item, RESERVE ledger row,
 * snapshot, reserved stock), in a few multi-row statements. Tests and benchmarks use it to set up
 * 10,000 to 200,000 orders in seconds; placing them one transaction at a time would dominate their
 * run time. The result satisfies every invariant the {@link InvariantChecker} checks.
 */
public final class BulkSeeder {
  /** Rows per executeBatch: the driver rewrites them into multi-row INSERTs of ~100 KB. */
  private static final int CHUNK = 2_000;

  private static final DateTimeFormatter LITERAL =
      DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss.SSS");

  private BulkSeeder() {}

  /** One order line: every seeded order has exactly one item. */
  public record Line(String skuId, int quantity) {}

  /**
   * Inserts one order per entry of {@code orders} with deadline {@code expireIn} from the
   * database's now (negative: already overdue) and returns each order's deadline in epoch ms, ready
   * for the timer index. Stock rows must exist with enough available.
   */
  public static Map<String, Long> seedUnpaid(
      DataSource dataSource, Map<String, Line> orders, Duration expireIn) {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      try {
        Map<String, Long> deadlines = insert(c, orders, expireIn.toNanos() / 1_000);
        c.commit();
        return deadlines;
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(true);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(
          "seeding " + orders.size() + " orders failed: " + e.getMessage(), e);
    }
  }

  private static Map<String, Long> insert(Connection c, Map<String, Line> orders, long expireMicros)
      throws SQLException {
    LocalDateTime now = dbNow(c);
    LocalDateTime expireAt = now.plusNanos(expireMicros * 1_000);
    List<String> ids = List.copyOf(orders.keySet());
    for (int from = 0; from < ids.size(); from += CHUNK) {
      insertChunk(c, ids.subList(from, Math.min(ids.size(), from + CHUNK)), orders, now, expireAt);
    }
    reserve(c, orders);
    long deadline = expireAt.toInstant(ZoneOffset.UTC).toEpochMilli();
    Map<String, Long> deadlines = new HashMap<>();
    ids.forEach(id -> deadlines.put(id, deadline));
    return deadlines;
  }

  private static void insertChunk(
      Connection c,
      List<String> ids,
      Map<String, Line> orders,
      LocalDateTime now,
      LocalDateTime expireAt)
      throws SQLException {
    try (PreparedStatement o =
            c.prepareStatement(
                "INSERT INTO orders (tenant_id, order_id, user_id, status, amount_fen, request_hash, created_at,"
                    + " expire_at) VALUES ('default', ?, 'bulk-user', 'UNPAID', 100, REPEAT('0', 64), ?, ?)");
        PreparedStatement it =
            c.prepareStatement(
                "INSERT INTO order_items (tenant_id, order_id, sku_id, quantity) VALUES ('default', ?, ?, ?)");
        PreparedStatement led =
            c.prepareStatement(
                "INSERT INTO stock_movements (tenant_id, order_id, sku_id, kind, quantity)"
                    + " VALUES ('default', ?, ?, 'RESERVE', ?)");
        PreparedStatement snap =
            c.prepareStatement(
                "INSERT INTO order_snapshots (tenant_id, order_id, snapshot, checksum) VALUES ('default', ?, ?, ?)")) {
      for (String id : ids) {
        Line line = orders.get(id);
        o.setString(1, id);
        o.setString(2, literal(now));
        o.setString(3, literal(expireAt));
        o.addBatch();
        for (PreparedStatement ps : new PreparedStatement[] {it, led}) {
          ps.setString(1, id);
          ps.setString(2, line.skuId());
          ps.setInt(3, line.quantity());
          ps.addBatch();
        }
        String snapshot = snapshot(id, line, now, expireAt);
        snap.setString(1, id);
        snap.setString(2, snapshot);
        snap.setString(3, sha256(snapshot));
        snap.addBatch();
      }
      o.executeBatch();
      it.executeBatch();
      led.executeBatch();
      snap.executeBatch();
    }
  }

  /**
   * The snapshot document placing would write (PlaceOrderService.OrderSnapshot, version 1), so
   * compensation's snapshot check finds seeded orders consistent.
   */
  private static String snapshot(
      String id, Line line, LocalDateTime createdAt, LocalDateTime expireAt) {
    return "{\"v\":1,\"orderId\":\""
        + id
        + "\",\"tenantId\":\"default\",\"userId\":\"bulk-user\",\"amountFen\":100,"
        + "\"couponId\":null,\"createdAt\":\""
        + createdAt.toInstant(ZoneOffset.UTC)
        + "\",\"expireAt\":\""
        + expireAt.toInstant(ZoneOffset.UTC)
        + "\",\"items\":[{\"skuId\":\""
        + line.skuId()
        + "\",\"quantity\":"
        + line.quantity()
        + "}]}";
  }

  private static String sha256(String text) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JVM", e);
    }
  }

  private static void reserve(Connection c, Map<String, Line> orders) throws SQLException {
    Map<String, Long> perSku = new TreeMap<>();
    orders.values().forEach(l -> perSku.merge(l.skuId(), (long) l.quantity(), Long::sum));
    try (PreparedStatement ps =
        c.prepareStatement(
            "UPDATE stock SET available = available - ?, reserved = reserved + ?"
                + " WHERE sku_id = ? AND available >= ?")) {
      for (Map.Entry<String, Long> e : perSku.entrySet()) {
        ps.setLong(1, e.getValue());
        ps.setLong(2, e.getValue());
        ps.setString(3, e.getKey());
        ps.setLong(4, e.getValue());
        if (ps.executeUpdate() != 1) {
          throw new IllegalStateException(
              "not enough stock of " + e.getKey() + " to seed " + e.getValue() + " units");
        }
      }
    }
  }

  /**
   * A UTC wall-clock time as SQL text with milliseconds, the rule of shared's {@code DbTime} (this
   * module cannot depend on shared): Connector/J drops the fraction of a bound LocalDateTime on
   * MariaDB 10.x, whose handshake says 5.5.5-10.x, below the 5.6.4 that fractions need.
   */
  private static String literal(LocalDateTime utc) {
    return utc.truncatedTo(ChronoUnit.MILLIS).format(LITERAL);
  }

  private static LocalDateTime dbNow(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT NOW(3) AS now");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getObject("now", LocalDateTime.class);
    }
  }
}
