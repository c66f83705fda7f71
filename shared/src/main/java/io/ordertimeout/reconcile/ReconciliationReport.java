package io.ordertimeout.reconcile;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Map;

/**
 * One tenant's reconciliation of one bill day, as stored in reconciliation_reports and
 * reconciliation_lines.
 *
 * @param day the bill's day, yyyy-MM-dd in Asia/Shanghai
 * @param billLines detail lines of the merchant's bill (shared by the tenants of a merchant)
 * @param counts lines (and paid orders without a line) per {@link LineCategory}
 * @param flags flagged lines this tenant's report holds
 * @param newFlags of those, recorded by this run (the metric and the alarm count these)
 * @param runs runs of this day for this tenant, this one included
 * @param flagged every flagged line of the report
 */
public record ReconciliationReport(
    String tenantId,
    String day,
    String mchid,
    long billLines,
    Map<String, Long> counts,
    long flags,
    long newFlags,
    int runs,
    List<Line> flagged) {

  /** A recorded line: what the bill (or the order) says and what was found. */
  public record Line(String ref, String orderId, String category, JsonNode detail) {}
}
