package io.ordertimeout.admin;

import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.mysql.Tx;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pause flags of the scheduled closing jobs (table job_pauses, V6__admin.sql says why MySQL). The
 * timeout sweep and the stream consumer each ask {@link #holds} once per invocation, so a pause
 * takes effect at the next scheduled run: within one 60 s period plus the ~70 s a running sweep
 * still sweeps. A paused job logs it and counts {@code <job>_paused}, so the dashboard shows why
 * nothing closes (the backlog alarm fires meanwhile, as it should).
 */
public final class Pauses {
  private static final Logger log = LoggerFactory.getLogger(Pauses.class);

  /** The timeout sweep (timeout-sweep function). */
  public static final String SWEEP = "sweep";

  /** The stream consumer (stream-consumer function): close_due and cancel_requested events. */
  public static final String CONSUMER = "consumer";

  static final Set<String> JOBS = Set.of(SWEEP, CONSUMER);

  /** Every tenant; a tenant's own row pauses only its orders once tenants pause separately. */
  static final String ALL_TENANTS = "*";

  private final Tx tx;

  public Pauses(Tx tx) {
    this.tx = tx;
  }

  /** An active pause: who set it, when and why. */
  public record Pause(String job, String pausedBy, String reason, String pausedAt) {}

  /**
   * True when {@code job} is paused; then logs who paused it and counts {@code <job>_paused}. A
   * failed read counts as not paused (logged): the job's closes need the same database, so they
   * fail on their own, and a pause must never be invented by an outage.
   */
  public boolean holds(String job, Metrics metrics) {
    Optional<Pause> pause;
    try {
      pause = find(job);
    } catch (RuntimeException e) {
      log.warn("could not read the pause flag of {}; running: {}", job, e.toString());
      return false;
    }
    pause.ifPresent(
        p -> {
          log.info(
              "{} paused by {} since {} ({}); skipping this run",
              job,
              p.pausedBy(),
              p.pausedAt(),
              p.reason());
          metrics.count(job + "_paused", 1);
        });
    return pause.isPresent();
  }

  public Optional<Pause> find(String job) {
    return tx.read(
        "read pause flag " + job,
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement(
                  "SELECT job, paused_by, reason, paused_at FROM job_pauses"
                      + " WHERE job = ? AND tenant_id = ?")) {
            ps.setString(1, job);
            ps.setString(2, ALL_TENANTS);
            try (ResultSet rs = ps.executeQuery()) {
              return rs.next() ? Optional.of(pause(rs)) : Optional.empty();
            }
          }
        });
  }

  public List<Pause> list() {
    return tx.read(
        "list pauses",
        c -> {
          List<Pause> out = new ArrayList<>();
          try (PreparedStatement ps =
                  c.prepareStatement(
                      "SELECT job, paused_by, reason, paused_at FROM job_pauses ORDER BY job");
              ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              out.add(pause(rs));
            }
          }
          return out;
        });
  }

  /**
   * Pauses {@code jobs}; pausing a paused job keeps its first pause (who and why stay those of the
   * operator who stopped it). Returns the jobs' state after the call.
   */
  public Map<String, Object> pause(List<String> jobs, String operator, String reason) {
    tx.inTransaction(
        "pause " + jobs,
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement(
                  "INSERT IGNORE INTO job_pauses (job, tenant_id, paused_by, reason)"
                      + " VALUES (?,?,?,?)")) {
            for (String job : jobs) {
              ps.setString(1, job);
              ps.setString(2, ALL_TENANTS);
              ps.setString(3, AdminActions.cut(operator, AdminActions.MAX_OPERATOR));
              ps.setString(4, AdminActions.cut(reason, AdminActions.MAX_REASON));
              ps.addBatch();
            }
            ps.executeBatch();
          }
          return AdminActions.insert(
              c, "pause", AdminActions.ALL_TENANTS, String.join(",", jobs), operator, reason, jobs);
        });
    return state();
  }

  /** Resumes {@code jobs} (resuming a running job changes nothing); answers the state after. */
  public Map<String, Object> resume(List<String> jobs, String operator) {
    tx.inTransaction(
        "resume " + jobs,
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement("DELETE FROM job_pauses WHERE job = ? AND tenant_id = ?")) {
            for (String job : jobs) {
              ps.setString(1, job);
              ps.setString(2, ALL_TENANTS);
              ps.addBatch();
            }
            ps.executeBatch();
          }
          return AdminActions.insert(
              c, "resume", AdminActions.ALL_TENANTS, String.join(",", jobs), operator, null, jobs);
        });
    return state();
  }

  /** Every job with its pause or "running". */
  public Map<String, Object> state() {
    Map<String, Object> state = new LinkedHashMap<>();
    state.put(CONSUMER, "running");
    state.put(SWEEP, "running");
    list().forEach(p -> state.put(p.job(), p));
    return state;
  }

  /** "sweep", "consumer" or "all" (both); anything else is refused. */
  public static List<String> jobs(String name) {
    if (name == null || name.equals("all")) {
      return List.of(CONSUMER, SWEEP);
    }
    if (!JOBS.contains(name)) {
      throw AdminRefusal.badRequest(
          "INVALID_JOB", "job must be sweep, consumer or all, was '" + name + "'");
    }
    return List.of(name);
  }

  private static Pause pause(ResultSet rs) throws java.sql.SQLException {
    return new Pause(
        rs.getString("job"),
        rs.getString("paused_by"),
        rs.getString("reason"),
        Rows.instant(rs, "paused_at"));
  }
}
