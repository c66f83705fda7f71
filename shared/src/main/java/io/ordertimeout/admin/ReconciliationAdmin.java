package io.ordertimeout.admin;

import io.ordertimeout.reconcile.Reconciler;
import io.ordertimeout.reconcile.ReconciliationReport;
import io.ordertimeout.wechat.PaymentRejectedException;
import io.ordertimeout.wechat.PaymentTransientException;
import java.time.LocalDate;
import java.time.format.DateTimeParseException;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The operator's side of the daily reconciliation (POST and GET /admin/reconciliation, {@code ./ops
 * admin reconcile}): reconcile a tenant's day now (again, if it was: a re-run changes nothing that
 * is already recorded), or read the stored report.
 */
public final class ReconciliationAdmin {
  private final Reconciler reconciler;
  private final AdminActions actions;
  private final Supplier<LocalDate> today;

  /**
   * @param reconciler null when payments are not configured (both routes answer 503)
   * @param today today in Asia/Shanghai: a day after it has no bill yet
   */
  public ReconciliationAdmin(
      Reconciler reconciler, AdminActions actions, Supplier<LocalDate> today) {
    this.reconciler = reconciler;
    this.actions = actions;
    this.today = today;
  }

  /** Reconciles {@code date} (yyyy-MM-dd, Asia/Shanghai) for the tenant now; answers its report. */
  public ReconciliationReport run(String tenantId, String date, String operator) {
    LocalDate day = day(date);
    Reconciler r = reconciler();
    ReconciliationReport report;
    try {
      report = r.reconcile(tenantId, day);
    } catch (PaymentTransientException e) {
      throw new AdminRefusal(
          AdminRefusal.Kind.UNAVAILABLE,
          "WECHAT_UNAVAILABLE",
          "the trade bill of " + day + " could not be had now: " + e.getMessage());
    } catch (PaymentRejectedException e) {
      throw AdminRefusal.conflict("BILL_REJECTED", e.getMessage());
    }
    actions.record(
        "reconcile",
        tenantId,
        day.toString(),
        operator,
        null,
        Map.of(
            "billLines", report.billLines(), "flags", report.flags(), "counts", report.counts()));
    return report;
  }

  /** The stored report of {@code date} for the tenant. */
  public ReconciliationReport show(String tenantId, String date) {
    LocalDate day = day(date);
    ReconciliationReport report = reconciler().report(tenantId, day);
    if (report == null) {
      throw new AdminRefusal(
          AdminRefusal.Kind.NOT_FOUND,
          "REPORT_NOT_FOUND",
          "tenant " + tenantId + " has no reconciliation report for " + day);
    }
    return report;
  }

  private Reconciler reconciler() {
    if (reconciler == null) {
      throw new AdminRefusal(
          AdminRefusal.Kind.UNAVAILABLE,
          "PAYMENTS_UNAVAILABLE",
          "WeChat Pay is not configured: there is no trade bill to reconcile");
    }
    return reconciler;
  }

  private LocalDate day(String date) {
    if (date == null) {
      throw AdminRefusal.badRequest("INVALID_DATE", "give the bill's \"date\" as yyyy-MM-dd");
    }
    LocalDate day;
    try {
      day = LocalDate.parse(date);
    } catch (DateTimeParseException e) {
      throw AdminRefusal.badRequest("INVALID_DATE", "date must be yyyy-MM-dd, was '" + date + "'");
    }
    if (day.isAfter(today.get())) {
      throw AdminRefusal.badRequest(
          "INVALID_DATE",
          "the bill of " + day + " does not exist yet (today is " + today.get() + ")");
    }
    return day;
  }
}
