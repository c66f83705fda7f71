package io.ordertimeout.lifecycle;

import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderRejected;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.mysql.DbTime;
import io.ordertimeout.mysql.OrderStore;
import io.ordertimeout.mysql.Statements;
import io.ordertimeout.mysql.Tx;
import io.ordertimeout.redis.TimeSource;
import io.ordertimeout.redis.TimerIndex;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Coupons with a validity: issued AVAILABLE until {@code valid_until}, when the coupon-expiry
 * deadline makes an AVAILABLE coupon EXPIRED (a conditional UPDATE on AVAILABLE and on the database
 * clock). A coupon LOCKED by an unpaid order at that time is left to the order: its close expires
 * it (close.OrderCloser), its payment uses it. The timer is removed then, as the order decides.
 *
 * <p>A timer claimed while the database says the validity has not ended (Redis TIME ahead of
 * MySQL's NOW(3)) goes back by the time MySQL says remains, counted on the timer clock, for an
 * AVAILABLE coupon and for a LOCKED one alike: the LOCKED coupon's order may close before the
 * validity ends, and the coupon, AVAILABLE again, must still expire on time.
 */
public final class Coupons {
  private static final Logger log = LoggerFactory.getLogger(Coupons.class);

  private final Tx tx;
  private final TimerIndex timers;
  private final TimeSource time;
  private final Metrics metrics;

  public Coupons(Tx tx, TimerIndex timers, TimeSource time, Metrics metrics) {
    this.tx = tx;
    this.timers = timers;
    this.time = time;
    this.metrics = metrics;
  }

  /** A coupon as stored. {@code validUntil} null: valid without end. */
  public record Coupon(
      String couponId,
      String tenantId,
      String ownerUserId,
      String status,
      String lockedByOrder,
      Instant validUntil,
      Instant expiredAt) {}

  /** The answer to an issue request: the coupon, and whether this request created it. */
  public record Issued(Coupon coupon, boolean created) {}

  /**
   * Issues a coupon valid until {@code validUntil}; an identical retry answers the existing coupon
   * ({@code created = false}), another coupon under the same id is 409 COUPON_CONFLICT. The expiry
   * timer follows the commit (compensation re-adds it if Redis fails then).
   */
  public Issued issue(String couponId, String tenantId, String ownerUserId, Instant validUntil) {
    Issued issued =
        tx.inTransaction(
            "issue coupon " + tenantId + "/" + couponId,
            c -> {
              try (PreparedStatement ps =
                  c.prepareStatement(
                      "INSERT IGNORE INTO coupons (coupon_id, tenant_id, owner_user_id, status,"
                          + " valid_until) VALUES (?,?,?,'AVAILABLE',?)")) {
                ps.setString(1, couponId);
                ps.setString(2, tenantId);
                ps.setString(3, ownerUserId);
                DbTime.bind(ps, 4, validUntil);
                boolean created = ps.executeUpdate() == 1;
                // INSERT IGNORE also ignores the foreign key to tenants: no row and no coupon
                // means the tenant was never onboarded.
                Coupon coupon =
                    find(c, tenantId, couponId)
                        .orElseThrow(
                            () ->
                                new OrderRejected(
                                    OrderRejected.Code.UNKNOWN_TENANT,
                                    "tenant "
                                        + tenantId
                                        + " is not onboarded (no row in tenants); coupon "
                                        + couponId
                                        + " was not issued"));
                if (!created
                    && !(coupon.ownerUserId().equals(ownerUserId)
                        && java.util.Objects.equals(coupon.validUntil(), validUntil))) {
                  throw new OrderRejected(
                      OrderRejected.Code.COUPON_CONFLICT,
                      "coupon "
                          + couponId
                          + " exists already for user "
                          + coupon.ownerUserId()
                          + ", valid until "
                          + coupon.validUntil());
                }
                return new Issued(coupon, created);
              }
            });
    if (issued.created() && validUntil != null) {
      try {
        timers.schedule(tenantId, DeadlineKind.COUPON_EXPIRY, couponId, validUntil.toEpochMilli());
      } catch (RuntimeException e) {
        metrics.count("timer_schedule_failures", 1);
        log.warn(
            "coupon {} issued but its expiry timer was not scheduled; compensation adds it: {}",
            couponId,
            e.toString());
      }
    }
    return issued;
  }

  /** A tenant's coupon: another tenant's coupon of the same id is another coupon. */
  public Optional<Coupon> find(String tenantId, String couponId) {
    return tx.read(
        "read coupon " + couponId + " of tenant " + tenantId, c -> find(c, tenantId, couponId));
  }

  static Optional<Coupon> find(Connection c, String tenantId, String couponId) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT coupon_id, tenant_id, owner_user_id, status, locked_by_order, valid_until,"
                + " expired_at FROM coupons WHERE tenant_id = ? AND coupon_id = ?")) {
      ps.setString(1, tenantId);
      ps.setString(2, couponId);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return Optional.empty();
        }
        return Optional.of(
            new Coupon(
                rs.getString("coupon_id"),
                rs.getString("tenant_id"),
                rs.getString("owner_user_id"),
                rs.getString("status"),
                rs.getString("locked_by_order"),
                DbTime.instant(rs, "valid_until"),
                DbTime.instant(rs, "expired_at")));
      }
    }
  }

  /**
   * What an expiry batch found: expired now (coupon id -> lag ms), not due yet by the database
   * clock, AVAILABLE or LOCKED (-> due epoch ms), and settled otherwise (locked past its validity,
   * used, expired already, unknown: their timers go).
   */
  public record Expiry(Map<String, Long> expired, Map<String, Long> notDue, List<String> settled) {}

  /** An expiry batch and, per not-due coupon, the ms its validity still runs by the DB clock. */
  private record Expired(Expiry expiry, Map<String, Long> dueInMillis) {}

  /** Expires the claimed coupons that are AVAILABLE and past their validity by the DB clock. */
  public Expiry expireDue(String tenantId, List<String> couponIds) {
    if (couponIds.isEmpty()) {
      return new Expiry(Map.of(), Map.of(), List.of());
    }
    Expired result =
        tx.inTransaction(
            "expire " + couponIds.size() + " coupons of tenant " + tenantId,
            c -> expire(c, tenantId, couponIds));
    Expiry expiry = result.expiry();
    metrics.count("coupons_expired", expiry.expired().size());
    expiry
        .expired()
        .values()
        .forEach(
            lag -> metrics.recordMillis(Transitions.lagMetric(DeadlineKind.COUPON_EXPIRY), lag));
    try {
      List<String> done = new ArrayList<>(expiry.expired().keySet());
      done.addAll(expiry.settled());
      if (!done.isEmpty()) {
        timers.remove(tenantId, DeadlineKind.COUPON_EXPIRY, done);
      }
      if (!result.dueInMillis().isEmpty()) {
        timers.scheduleAllIn(
            tenantId, DeadlineKind.COUPON_EXPIRY, time.nowMillis(), result.dueInMillis());
      }
    } catch (RuntimeException e) {
      metrics.count("timer_schedule_failures", 1);
      log.warn("coupon expiry timers not updated; compensation repairs them: {}", e.toString());
    }
    return expiry;
  }

  private static Expired expire(Connection c, String tenantId, List<String> couponIds)
      throws SQLException {
    Map<String, Long> eligible = new TreeMap<>();
    Map<String, Long> notDue = new TreeMap<>();
    Map<String, Long> dueIn = new TreeMap<>();
    List<String> settled = new ArrayList<>(couponIds);
    String sql =
        "SELECT coupon_id, status, valid_until, valid_until <= NOW(3) AS due_now,"
            + " TIMESTAMPDIFF(MICROSECOND, valid_until, NOW(3)) AS lag_us FROM coupons"
            + " WHERE tenant_id = ? AND coupon_id IN (%s) ORDER BY coupon_id FOR UPDATE";
    for (List<String> part : Statements.inLists(sql, couponIds.stream().sorted().toList())) {
      try (PreparedStatement ps =
          c.prepareStatement(String.format(sql, OrderStore.placeholders(part.size())))) {
        ps.setString(1, tenantId);
        OrderStore.bind(ps, 2, part);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            String id = rs.getString("coupon_id");
            Instant validUntil = DbTime.instant(rs, "valid_until");
            String status = rs.getString("status");
            boolean dueNow = rs.getBoolean("due_now");
            boolean pending = "AVAILABLE".equals(status) || ("LOCKED".equals(status) && !dueNow);
            if (!pending || validUntil == null) {
              continue; // settled (a LOCKED one past its validity: its order expires it)
            }
            settled.remove(id);
            if (dueNow && "AVAILABLE".equals(status)) {
              eligible.put(id, Math.max(0, rs.getLong("lag_us") / 1_000));
            } else {
              notDue.put(id, validUntil.toEpochMilli());
              // whole ms still to wait by the database clock, rounded up: never claimed early
              dueIn.put(id, (-rs.getLong("lag_us") + 999) / 1_000);
            }
          }
        }
      }
    }
    if (!eligible.isEmpty()) {
      String update =
          "UPDATE coupons SET status = 'EXPIRED', expired_at = NOW(3)"
              + " WHERE tenant_id = ? AND coupon_id IN (%s) AND status = 'AVAILABLE'"
              + " AND valid_until <= NOW(3)";
      int updated = 0;
      for (List<String> part : Statements.inLists(update, new ArrayList<>(eligible.keySet()))) {
        try (PreparedStatement ps =
            c.prepareStatement(String.format(update, OrderStore.placeholders(part.size())))) {
          ps.setString(1, tenantId);
          OrderStore.bind(ps, 2, part);
          updated += ps.executeUpdate();
        }
      }
      if (updated != eligible.size()) {
        throw new IllegalStateException(
            "expired " + updated + " of " + eligible.size() + " locked coupons");
      }
    }
    return new Expired(new Expiry(eligible, notDue, settled), dueIn);
  }
}
