package io.ordertimeout.compensation;

import io.ordertimeout.compensation.CompensationReport.Finding;
import io.ordertimeout.mysql.Statements;
import io.ordertimeout.mysql.Tx;
import io.ordertimeout.util.Json;
import java.sql.PreparedStatement;
import java.util.Map;

/**
 * The {@code compensation_flags} table: one row per (kind, tenant, subject), updated when seen
 * again; the report's finding carries the tenant in its evidence. A flag is raised, never acted on:
 * it is a divergence compensation could not repair with certainty.
 */
final class Flags {
  /**
   * Evidence is a few hundred bytes; anything longer is cut to 7,000 bytes as a literal: the upsert
   * binds it twice and must stay under RDS Proxy's 16 KB pinning limit (mysql.Statements).
   */
  static final int MAX_EVIDENCE_BYTES = 7_000;

  private final Tx tx;

  Flags(Tx tx) {
    this.tx = tx;
  }

  /** Records the flag in the table and the run's report. */
  void raise(
      Tally tally, String kind, String tenantId, String subject, Map<String, Object> evidence) {
    String json = Json.write(Json.MAPPER.valueToTree(evidence));
    // the row has its tenant column; the report's finding names the tenant in its evidence
    Map<String, Object> withTenant = new java.util.LinkedHashMap<>();
    withTenant.put("tenantId", tenantId);
    withTenant.putAll(evidence);
    Finding flag = new Finding(kind, subject, withTenant);
    String text = Statements.cutToBytes(json, MAX_EVIDENCE_BYTES);
    tx.inTransaction(
        "raise compensation flag " + kind + " on " + tenantId + "/" + subject,
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement(
                  "INSERT INTO compensation_flags (kind, subject, evidence, tenant_id)"
                      + " VALUES (?,?,?,?)"
                      // evidence bound again: VALUES(col) is deprecated since MySQL 8.0.20 and
                      // the row alias that replaces it is not MariaDB syntax
                      + " ON DUPLICATE KEY UPDATE evidence = ?,"
                      + " last_seen_at = NOW(3), seen_count = seen_count + 1, resolved_at = NULL")) {
            ps.setString(1, kind);
            ps.setString(2, subject);
            ps.setString(3, text);
            ps.setString(4, tenantId);
            ps.setString(5, text);
            return ps.executeUpdate();
          }
        });
    tally.flagged(flag);
    tally.add("flags_raised", 1);
  }
}
