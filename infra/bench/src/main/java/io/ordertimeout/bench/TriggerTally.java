package io.ordertimeout.bench;

import java.util.BitSet;
import java.util.List;
import org.HdrHistogram.Histogram;

/**
 * One worker's count of what it delivered: which timers (a bit per seeded index, so a second
 * delivery of the same timer is a duplicate), members this bench never seeded, the latency of each
 * claim call and each timer's lag behind its due time. Workers own one each; {@link #merge} adds
 * them up after the drain, counting a timer two workers both delivered as a duplicate.
 */
final class TriggerTally {
  final BitSet seen = new BitSet();
  final Histogram callMicros = new Histogram(60_000_000L, 3);
  final Histogram lagMillis = new Histogram(3_600_000L, 3);
  long delivered;
  long duplicates;
  long foreign;
  long early;
  long calls;

  /** Calls that failed (a Redis timeout) and were retried by the next pass. */
  long errors;

  /** Records a claim call's latency, in microseconds. */
  void call(long nanos) {
    calls++;
    callMicros.recordValue(Math.min(callMicros.getHighestTrackableValue(), nanos / 1_000));
  }

  /** Counts these timers as delivered at {@code nowMillis}. */
  void deliver(TriggerPlan plan, List<String> ids, long nowMillis) {
    for (String id : ids) {
      int i = plan.indexOf(id);
      if (i < 0) {
        foreign++;
        continue;
      }
      delivered++;
      if (seen.get(i)) {
        duplicates++;
      }
      seen.set(i);
      long lag = Math.max(0, nowMillis - plan.dueAt(i));
      lagMillis.recordValue(Math.min(lagMillis.getHighestTrackableValue(), lag));
      if (nowMillis < plan.dueAt(i)) {
        early++;
      }
    }
  }

  void merge(TriggerTally other) {
    BitSet both = (BitSet) seen.clone();
    both.and(other.seen);
    duplicates += other.duplicates + both.cardinality();
    seen.or(other.seen);
    delivered += other.delivered;
    foreign += other.foreign;
    early += other.early;
    calls += other.calls;
    errors += other.errors;
    callMicros.add(other.callMicros);
    lagMillis.add(other.lagMillis);
  }
}
