package io.ordertimeout.compensation;

import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.lifecycle.DueColumns;
import io.ordertimeout.lifecycle.Transition;
import io.ordertimeout.mysql.DbTime;
import io.ordertimeout.mysql.Tx;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The MySQL side of {@link DeadlineAudit}: a deadline kind's subjects (orders in the from-state of
 * the transition the kind triggers, AVAILABLE coupons) paged by (status, due, id) on the indexes V1
 * and V7 made for it, and which subjects of a timer scan still warrant a timer.
 */
final class PendingSubjects {
  /** The smallest DATETIME(3): the keyset cursor before the first row (NULL dues never match). */
  private static final LocalDateTime BEGINNING = LocalDateTime.of(1000, 1, 1, 0, 0);

  private static final LocalDateTime END = LocalDateTime.of(9999, 12, 31, 0, 0);

  private final Tx tx;
  private final int pageSize;

  PendingSubjects(Tx tx, int pageSize) {
    this.tx = tx;
    this.pageSize = pageSize;
  }

  /** A pending subject as the keyset pages read it. */
  record Pending(String tenantId, String id, LocalDateTime due) {
    long dueMillis() {
      return due.toInstant(ZoneOffset.UTC).toEpochMilli();
    }
  }

  /**
   * Where a kind's subjects live: the table, its id column, the pending state the walk pages by,
   * and the SQL condition under which a subject's timer is kept.
   */
  private record Source(String table, String id, String status, String keeps) {
    static Source of(DeadlineKind kind) {
      String due = DueColumns.of(kind);
      if (kind == DeadlineKind.COUPON_EXPIRY) {
        // A LOCKED coupon is left to its order (its close expires it once the validity passed);
        // before its validity its timer is kept: the order may close and return it AVAILABLE.
        return new Source(
            "coupons",
            "coupon_id",
            "AVAILABLE",
            due
                + " IS NOT NULL AND (status = 'AVAILABLE' OR (status = 'LOCKED' AND "
                + due
                + " > NOW(3)))");
      }
      String from =
          Transition.triggeredBy(kind)
              .orElseThrow(() -> new IllegalStateException("no transition is triggered by " + kind))
              .from()
              .name();
      return new Source(
          "orders", "order_id", from, "status = '" + from + "' AND " + due + " IS NOT NULL");
    }
  }

  /**
   * Pages through {@code kind}'s pending subjects by (due, tenant, id), due before {@code before}
   * (null: all), under {@code category}'s time check and the page budget {@code <label>_<budget>}.
   */
  void walk(
      Tally tally,
      String category,
      DeadlineKind kind,
      String budget,
      LocalDateTime before,
      Consumer<List<Pending>> work) {
    Source source = Source.of(kind);
    String due = DueColumns.of(kind);
    String sql =
        "SELECT "
            + source.id()
            + " AS id, tenant_id, "
            + due
            + " AS due FROM "
            + source.table()
            + " WHERE status = ? AND "
            + due
            + " < ? AND ("
            + due
            + " > ? OR ("
            + due
            + " = ? AND (tenant_id > ? OR (tenant_id = ? AND "
            + source.id()
            + " > ?)))) ORDER BY "
            + due
            + ", tenant_id, "
            + source.id()
            + " LIMIT ?";
    LocalDateTime afterAt = BEGINNING;
    String afterTenant = "";
    String afterId = "";
    while (tally.page(category, kind.label() + "_" + budget)) {
      LocalDateTime at = afterAt;
      String tenant = afterTenant;
      String id = afterId;
      List<Pending> page =
          tx.read(
              kind.label() + " " + budget + " page after " + tenant + "/" + id,
              c -> page(c, sql, source.status(), before == null ? END : before, at, tenant, id));
      if (page.isEmpty()) {
        return;
      }
      work.accept(page);
      afterAt = page.get(page.size() - 1).due();
      afterTenant = page.get(page.size() - 1).tenantId();
      afterId = page.get(page.size() - 1).id();
      if (page.size() < pageSize) {
        return;
      }
    }
  }

  private List<Pending> page(
      Connection c,
      String sql,
      String status,
      LocalDateTime before,
      LocalDateTime afterAt,
      String afterTenant,
      String afterId)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, status);
      DbTime.bind(ps, 2, before);
      DbTime.bind(ps, 3, afterAt);
      DbTime.bind(ps, 4, afterAt);
      ps.setString(5, afterTenant);
      ps.setString(6, afterTenant);
      ps.setString(7, afterId);
      ps.setInt(8, pageSize);
      List<Pending> page = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          page.add(
              new Pending(rs.getString("tenant_id"), rs.getString("id"), DbTime.utc(rs, "due")));
        }
      }
      return page;
    }
  }

  /**
   * Which of {@code ids} still warrant a {@code kind} timer: they exist and are pending (a LOCKED
   * coupon before its validity too); the others' timers are stale.
   */
  Set<String> kept(DeadlineKind kind, String tenantId, List<String> ids) {
    Source source = Source.of(kind);
    Set<String> kept = new HashSet<>();
    if (ids.isEmpty()) {
      return kept;
    }
    tx.read(
        kind.label() + " timers' subjects",
        c -> {
          Sql.selectIn(
              c,
              "SELECT "
                  + source.id()
                  + " FROM "
                  + source.table()
                  + " WHERE tenant_id = ? AND "
                  + source.id()
                  + " IN (%s) AND "
                  + source.keeps(),
              tenantId,
              ids,
              rs -> kept.add(rs.getString(1)));
          return null;
        });
    return kept;
  }
}
