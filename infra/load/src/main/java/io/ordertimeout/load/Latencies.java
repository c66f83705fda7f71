package io.ordertimeout.load;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * The response times Gatling measured in one step, per request name, and the answers that were not
 * the expected status. Gatling's HTML report (written beside) plots them over time; its statistics
 * are not written in a form a program reads, so each request's time (Gatling's own measurement,
 * from the moment it sent the request) is recorded here too.
 */
final class Latencies {

  private final Map<String, ConcurrentHistogram> times = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> unexpected = new ConcurrentHashMap<>();

  void record(String request, long millis, boolean expected) {
    times
        .computeIfAbsent(request, r -> new ConcurrentHistogram(3_600_000L, 3))
        .recordValue(Math.max(0, Math.min(millis, 3_600_000L)));
    if (!expected) {
      unexpected.computeIfAbsent(request, r -> new AtomicLong()).incrementAndGet();
    }
  }

  /** A copy of the request's histogram (empty when none was sent). */
  Histogram of(String request) {
    Histogram h = times.get(request);
    return h == null ? new Histogram(3_600_000L, 3) : h.copy();
  }

  long unexpected(String request) {
    AtomicLong n = unexpected.get(request);
    return n == null ? 0 : n.get();
  }

  /** Every request name with its count and unexpected answers, for the step's log. */
  Map<String, String> counts() {
    Map<String, String> out = new TreeMap<>();
    times.forEach(
        (name, h) ->
            out.put(name, h.getTotalCount() + " sent, " + unexpected(name) + " unexpected"));
    return out;
  }
}
