package io.ordertimeout.compensation;

import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.util.Json;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What one compensation pass found and did: machine-readable, written as one JSON log line and as
 * metrics ({@code compensation_<count>} counters, {@code compensation_duration_ms}).
 *
 * @param startedAt ISO-8601 instant the pass began
 * @param counts per category (see {@link Compensator} for the list), sorted by name; the receipt,
 *     completion and coupon deadlines count as {@code <label>_applied}, {@code
 *     <label>_rescheduled}, {@code <label>_stale_timers_removed} ... beside the payment timeout's
 *     unchanged names (see {@link DeadlineAudit})
 * @param pagesScanned keyset pages and Redis scan pages read, all categories together
 * @param repairs what was changed with certainty, one entry per repaired subject
 * @param flags what was found and left alone, with the evidence (also in compensation_flags)
 * @param exhausted categories whose page or WeChat budget ran out (the next run continues)
 * @param skipped categories stopped part-way or never started because the invocation's remaining
 *     time fell under the pass's margin; their work is left as it was for the next run
 * @param failures categories that failed with an error (the other categories still ran)
 */
public record CompensationReport(
    String startedAt,
    long durationMs,
    long pagesScanned,
    Map<String, Long> counts,
    List<Finding> repairs,
    List<Finding> flags,
    List<String> exhausted,
    List<String> skipped,
    List<String> failures) {

  public CompensationReport {
    counts = new TreeMap<>(counts);
    repairs = List.copyOf(repairs);
    flags = List.copyOf(flags);
    exhausted = List.copyOf(exhausted);
    skipped = List.copyOf(skipped);
    failures = List.copyOf(failures);
  }

  /** A repair made or a flag raised: its kind, the order or SKU it is about, and the evidence. */
  public record Finding(String kind, String subject, Map<String, Object> evidence) {
    public Finding {
      evidence = new TreeMap<>(evidence);
    }
  }

  public long count(String category) {
    return counts.getOrDefault(category, 0L);
  }

  public String toJson() {
    return Json.write(Json.MAPPER.valueToTree(this));
  }

  /** Adds this run to the metrics registry (the handler's EMF flush publishes them). */
  public void publish(Metrics metrics) {
    counts.forEach((name, value) -> metrics.count("compensation_" + name, value));
    metrics.count("compensation_pages_scanned", pagesScanned);
    metrics.count("compensation_repairs", repairs.size());
    metrics.count("compensation_flags", flags.size());
    metrics.count("compensation_failures", failures.size());
    metrics.count("compensation_skipped", skipped.size());
    metrics.recordMillis("compensation_duration_ms", durationMs);
  }
}
