package io.ordertimeout.outbox;

import io.ordertimeout.mysql.DbTime;
import io.ordertimeout.mysql.OrderStore;
import io.ordertimeout.mysql.Tx;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The relay's and the timeline's SQL over {@code outbox} and {@code outbox_leases}. Every time
 * comparison runs on the database clock (NOW(3)); durations cross JDBC as microsecond counts.
 */
public final class OutboxStore {
  private static final String COLUMNS =
      "ob.seq, ob.event_id, ob.order_id, ob.tenant_id, ob.event_type, ob.schema_version,"
          + " ob.payload, ob.trace_id, ob.committed_at";

  private final Tx tx;

  public OutboxStore(Tx tx) {
    this.tx = tx;
  }

  /** The oldest {@code limit} rows not yet delivered to {@code d}, ascending seq. */
  public List<OutboxRow> pending(Destination d, int limit) {
    return tx.read(
        "read rows pending for " + d.leaseName(),
        c ->
            rows(
                c,
                "SELECT "
                    + COLUMNS
                    + " FROM outbox ob WHERE ob."
                    + d.column()
                    + " IS NULL ORDER BY ob.seq LIMIT ?",
                limit));
  }

  /** Marks rows delivered to {@code d} (now, on the database clock); returns how many changed. */
  public int markDelivered(Destination d, List<Long> seqs) {
    if (seqs.isEmpty()) {
      return 0;
    }
    return tx.inTransaction(
        "mark "
            + seqs.size()
            + " rows delivered to "
            + d.leaseName()
            + " (first "
            + seqs.get(0)
            + ")",
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement(
                  "UPDATE outbox SET "
                      + d.column()
                      + " = NOW(3) WHERE seq IN ("
                      + OrderStore.placeholders(seqs.size())
                      + ")")) {
            for (int i = 0; i < seqs.size(); i++) {
              ps.setLong(i + 1, seqs.get(i));
            }
            return ps.executeUpdate();
          }
        });
  }

  /** Milliseconds since the oldest row pending for {@code d} committed; 0 when none is pending. */
  public long oldestPendingAgeMillis(Destination d) {
    return tx.read(
        "read outbox lag of " + d.leaseName(),
        c -> {
          try (PreparedStatement ps =
                  c.prepareStatement(
                      "SELECT TIMESTAMPDIFF(MICROSECOND, committed_at, NOW(3)) AS age_us FROM"
                          + " outbox WHERE "
                          + d.column()
                          + " IS NULL ORDER BY seq LIMIT 1");
              ResultSet rs = ps.executeQuery()) {
            return rs.next() ? Math.max(0, rs.getLong("age_us") / 1_000) : 0L;
          }
        });
  }

  /** Rows pending for {@code d} (for the metrics). */
  public long pendingCount(Destination d) {
    return tx.read(
        "count outbox rows pending for " + d.leaseName(),
        c -> {
          try (PreparedStatement ps =
                  c.prepareStatement(
                      "SELECT COUNT(*) AS n FROM outbox WHERE " + d.column() + " IS NULL");
              ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong("n");
          }
        });
  }

  /** The order's events, ascending seq; empty when it has none (or they aged out). */
  public List<OutboxRow> timeline(String tenantId, String orderId) {
    return tx.read(
        "read the events of order " + tenantId + "/" + orderId,
        c ->
            rows(
                c,
                "SELECT "
                    + COLUMNS
                    + " FROM outbox ob WHERE ob.tenant_id = ? AND ob.order_id = ? ORDER BY ob.seq",
                tenantId,
                orderId));
  }

  /**
   * cancel_requested rows of orders still UNPAID whose cancel is older than {@code after} and that
   * were last put on the stream longer than {@code after} ago: Redis lost them, or no consumer
   * closed the order yet. The range of orders_cancel_pending holds only UNPAID orders with a
   * cancel.
   */
  public List<OutboxRow> staleCancels(Duration after, int limit) {
    long us = after.toNanos() / 1_000;
    return tx.read(
        "read stale cancel requests",
        c ->
            rows(
                c,
                "SELECT "
                    + COLUMNS
                    + " FROM orders o JOIN outbox ob"
                    + " ON ob.tenant_id = o.tenant_id AND ob.order_id = o.order_id"
                    + " AND ob.event_type = 'cancel_requested'"
                    + " WHERE o.status = 'UNPAID'"
                    + " AND o.cancel_requested_at <= TIMESTAMPADD(MICROSECOND, -?, NOW(3))"
                    + " AND ob.streamed_at <= TIMESTAMPADD(MICROSECOND, -?, NOW(3))"
                    + " ORDER BY ob.seq LIMIT ?",
                us,
                us,
                limit));
  }

  /**
   * Claims or renews the lease of {@code d} for {@code holder}: one conditional UPDATE, true when
   * this holder has it until now + {@code ttl} (database clock).
   */
  public boolean claimLease(Destination d, String holder, Duration ttl) {
    return tx.inTransaction(
        "claim the " + d.leaseName() + " relay lease for " + holder,
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement(
                  "UPDATE outbox_leases SET holder = ?,"
                      + " expires_at = TIMESTAMPADD(MICROSECOND, ?, NOW(3))"
                      + " WHERE destination = ? AND (holder = ? OR holder IS NULL"
                      + " OR expires_at <= NOW(3))")) {
            ps.setString(1, holder);
            ps.setLong(2, ttl.toNanos() / 1_000);
            ps.setString(3, d.leaseName());
            ps.setString(4, holder);
            return ps.executeUpdate() == 1;
          }
        });
  }

  /** Gives the lease back if {@code holder} still has it. */
  public void releaseLease(Destination d, String holder) {
    tx.inTransaction(
        "release the " + d.leaseName() + " relay lease of " + holder,
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement(
                  "UPDATE outbox_leases SET holder = NULL, expires_at = NOW(3)"
                      + " WHERE destination = ? AND holder = ?")) {
            ps.setString(1, d.leaseName());
            ps.setString(2, holder);
            return ps.executeUpdate();
          }
        });
  }

  /**
   * Deletes at most {@code batch} rows committed more than {@code age} ago and delivered to every
   * destination in {@code delivered}; returns how many. Oldest first, one short transaction.
   */
  public int deleteDelivered(Duration age, List<Destination> delivered, int batch) {
    StringBuilder sql =
        new StringBuilder(
            "DELETE FROM outbox WHERE committed_at < TIMESTAMPADD(MICROSECOND, -?, NOW(3))");
    delivered.forEach(d -> sql.append(" AND ").append(d.column()).append(" IS NOT NULL"));
    sql.append(" ORDER BY committed_at LIMIT ?");
    return tx.inTransaction(
        "delete up to " + batch + " outbox rows older than " + age,
        c -> {
          try (PreparedStatement ps = c.prepareStatement(sql.toString())) {
            ps.setLong(1, age.toNanos() / 1_000);
            ps.setInt(2, batch);
            return ps.executeUpdate();
          }
        });
  }

  private static List<OutboxRow> rows(Connection c, String sql, Object... args)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      List<OutboxRow> rows = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.add(
              new OutboxRow(
                  rs.getLong("seq"),
                  rs.getString("event_id"),
                  rs.getString("order_id"),
                  rs.getString("tenant_id"),
                  rs.getString("event_type"),
                  rs.getInt("schema_version"),
                  rs.getString("payload"),
                  rs.getString("trace_id"),
                  DbTime.instant(rs, "committed_at")));
        }
      }
      return rows;
    }
  }
}
