package io.ordertimeout.admin;

import io.ordertimeout.mysql.Tx;
import io.ordertimeout.util.Json;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The audit trail of operator actions (table admin_actions, V6__admin.sql). */
public final class AdminActions {
  /** Operator names (IAM ARNs) and reasons are cut to their columns' 256 and 512 characters. */
  static final int MAX_OPERATOR = 256;

  static final int MAX_REASON = 512;

  private final Tx tx;

  public AdminActions(Tx tx) {
    this.tx = tx;
  }

  /** Records an action in its own transaction (after the action committed). */
  /**
   * Records an action in its own transaction (after the action committed). {@code tenantId}: the
   * tenant whose subject it is; {@link #ALL_TENANTS} for deployment-wide actions (pauses,
   * compensation runs).
   */
  public void record(
      String action,
      String tenantId,
      String subject,
      String operator,
      String reason,
      Object outcome) {
    tx.inTransaction(
        "record admin action " + action + " on " + tenantId + "/" + subject,
        c -> insert(c, action, tenantId, subject, operator, reason, outcome));
  }

  /** The tenant of an action that is no one tenant's. */
  public static final String ALL_TENANTS = "*";

  /** Records an action inside the caller's transaction: it commits or rolls back with it. */
  static int insert(
      Connection c,
      String action,
      String tenantId,
      String subject,
      String operator,
      String reason,
      Object outcome)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO admin_actions (action, subject, operator, reason, outcome, tenant_id)"
                + " VALUES (?,?,?,?,?,?)")) {
      ps.setString(1, action);
      ps.setString(2, cut(subject, 64));
      ps.setString(3, cut(operator, MAX_OPERATOR));
      ps.setString(4, reason == null ? null : cut(reason, MAX_REASON));
      ps.setString(5, Json.write(Json.MAPPER.valueToTree(outcome)));
      ps.setString(6, tenantId);
      return ps.executeUpdate();
    }
  }

  /** The actions on {@code subject}, oldest first. */
  static List<Map<String, Object>> about(Connection c, String tenantId, String subject)
      throws SQLException {
    List<Map<String, Object>> rows = new ArrayList<>();
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT action, operator, reason, outcome, created_at FROM admin_actions"
                + " WHERE tenant_id = ? AND subject = ? ORDER BY action_id")) {
      ps.setString(1, tenantId);
      ps.setString(2, subject);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          Map<String, Object> row = new LinkedHashMap<>();
          row.put("action", rs.getString("action"));
          row.put("operator", rs.getString("operator"));
          row.put("reason", rs.getString("reason"));
          row.put("outcome", Json.MAPPER.readTree(rs.getString("outcome")));
          row.put("at", Rows.instant(rs, "created_at"));
          rows.add(row);
        }
      }
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException("admin_actions outcome of " + subject + " is not JSON", e);
    }
    return rows;
  }

  static String cut(String text, int max) {
    return text.length() > max ? text.substring(0, max) : text;
  }
}
