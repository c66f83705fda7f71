package io.ordertimeout.reconcile;

import io.ordertimeout.mysql.OrderStore;
import io.ordertimeout.mysql.Statements;
import io.ordertimeout.util.Json;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLIntegrityConstraintViolationException;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** The SQL of tables reconciliation_lines and reconciliation_reports. */
final class ReconciliationStore {
  /** MySQL's ER_DUP_ENTRY. */
  private static final int DUPLICATE_KEY = 1062;

  /** A line as recorded by whichever run came first. */
  record Recorded(String tenantId, String orderId, LineCategory category) {}

  private ReconciliationStore() {}

  static Map<String, Recorded> recorded(
      Connection c, String mchid, LocalDate day, Collection<String> refs) throws SQLException {
    Map<String, Recorded> out = new HashMap<>();
    if (refs.isEmpty()) {
      return out;
    }
    String sql =
        "SELECT ref, tenant_id, order_id, category FROM reconciliation_lines"
            + " WHERE mchid = ? AND bill_date = ? AND ref IN (%s)";
    for (List<String> part : Statements.inLists(sql, new ArrayList<>(refs))) {
      try (PreparedStatement ps =
          c.prepareStatement(String.format(sql, OrderStore.placeholders(part.size())))) {
        ps.setString(1, mchid);
        ps.setString(2, day.toString());
        OrderStore.bind(ps, 3, part);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            out.put(
                rs.getString("ref"),
                new Recorded(
                    rs.getString("tenant_id"),
                    rs.getString("order_id"),
                    LineCategory.valueOf(rs.getString("category"))));
          }
        }
      }
    }
    return out;
  }

  /**
   * Records the line once; answers what stands: this record, or the one another run inserted first
   * (the UNIQUE key decides; no upsert count is read).
   */
  static Recorded record(
      Connection c,
      String mchid,
      LocalDate day,
      String ref,
      String tenantId,
      String orderId,
      LineCategory category,
      Map<String, Object> detail)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO reconciliation_lines (mchid, bill_date, ref, tenant_id, order_id,"
                + " category, flagged, detail) VALUES (?,?,?,?,?,?,?,?)")) {
      ps.setString(1, mchid);
      ps.setString(2, day.toString());
      ps.setString(3, ref);
      ps.setString(4, tenantId);
      ps.setString(5, orderId);
      ps.setString(6, category.name());
      ps.setBoolean(7, category.flagged());
      ps.setString(8, Json.write(detail));
      ps.executeUpdate();
      return null;
    } catch (SQLIntegrityConstraintViolationException e) {
      if (e.getErrorCode() != DUPLICATE_KEY) {
        throw e;
      }
      return recorded(c, mchid, day, List.of(ref)).get(ref);
    }
  }

  /**
   * Stores the run's report: an UPDATE of the day's row (runs + 1 always changes it, so its count
   * is 1 whatever useAffectedRows says), else an INSERT; a concurrent run's INSERT in between makes
   * the INSERT a duplicate, and the UPDATE then finds the row. Answers the runs so far.
   */
  static int saveReport(
      Connection c,
      String tenantId,
      LocalDate day,
      String mchid,
      long billLines,
      Map<String, Long> counts,
      long flags)
      throws SQLException {
    if (updateReport(c, tenantId, day, mchid, billLines, counts, flags) == 0) {
      try (PreparedStatement ps =
          c.prepareStatement(
              "INSERT INTO reconciliation_reports (tenant_id, bill_date, mchid, bill_lines,"
                  + " counts, flags) VALUES (?,?,?,?,?,?)")) {
        ps.setString(1, tenantId);
        ps.setString(2, day.toString());
        ps.setString(3, mchid);
        ps.setLong(4, billLines);
        ps.setString(5, Json.write(counts));
        ps.setLong(6, flags);
        ps.executeUpdate();
      } catch (SQLIntegrityConstraintViolationException e) {
        if (e.getErrorCode() != DUPLICATE_KEY) {
          throw e;
        }
        updateReport(c, tenantId, day, mchid, billLines, counts, flags);
      }
    }
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT runs FROM reconciliation_reports WHERE tenant_id = ? AND bill_date = ?")) {
      ps.setString(1, tenantId);
      ps.setString(2, day.toString());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt("runs");
      }
    }
  }

  private static int updateReport(
      Connection c,
      String tenantId,
      LocalDate day,
      String mchid,
      long billLines,
      Map<String, Long> counts,
      long flags)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "UPDATE reconciliation_reports SET mchid = ?, bill_lines = ?, counts = ?, flags = ?,"
                + " runs = runs + 1, last_run_at = NOW(3) WHERE tenant_id = ? AND bill_date = ?")) {
      ps.setString(1, mchid);
      ps.setLong(2, billLines);
      ps.setString(3, Json.write(counts));
      ps.setLong(4, flags);
      ps.setString(5, tenantId);
      ps.setString(6, day.toString());
      return ps.executeUpdate();
    }
  }

  /** Every flagged line the tenant's runs recorded for the day, oldest first. */
  static List<ReconciliationReport.Line> flagged(Connection c, String tenantId, LocalDate day)
      throws SQLException {
    List<ReconciliationReport.Line> out = new ArrayList<>();
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT ref, order_id, category, detail FROM reconciliation_lines"
                + " WHERE tenant_id = ? AND bill_date = ? AND flagged ORDER BY line_id")) {
      ps.setString(1, tenantId);
      ps.setString(2, day.toString());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(
              new ReconciliationReport.Line(
                  rs.getString("ref"),
                  rs.getString("order_id"),
                  rs.getString("category"),
                  detail(rs.getString("detail"))));
        }
      }
    }
    return out;
  }

  private static com.fasterxml.jackson.databind.JsonNode detail(String json) {
    try {
      return Json.MAPPER.readTree(json);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException("a reconciliation line's detail is not JSON: " + json, e);
    }
  }

  /** The stored report of the day, or null when the day was never reconciled for the tenant. */
  static ReconciliationReport load(Connection c, String tenantId, LocalDate day)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT mchid, bill_lines, counts, flags, runs FROM reconciliation_reports"
                + " WHERE tenant_id = ? AND bill_date = ?")) {
      ps.setString(1, tenantId);
      ps.setString(2, day.toString());
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return null;
        }
        Map<String, Long> counts = new HashMap<>();
        Json.MAPPER
            .readTree(rs.getString("counts"))
            .fields()
            .forEachRemaining(e -> counts.put(e.getKey(), e.getValue().asLong()));
        return new ReconciliationReport(
            tenantId,
            day.toString(),
            rs.getString("mchid"),
            rs.getLong("bill_lines"),
            new java.util.TreeMap<>(counts),
            rs.getLong("flags"),
            0,
            rs.getInt("runs"),
            flagged(c, tenantId, day));
      } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
        throw new IllegalStateException(
            "report of " + tenantId + " for " + day + " is not JSON", e);
      }
    }
  }
}
