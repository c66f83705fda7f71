package io.ordertimeout.bench;

/**
 * One engine's drain: {@code seconds} from the first due instant (or the workers' start, whichever
 * is later) to the last delivery, and the merged tally of its workers.
 */
record TriggerResult(
    String engine,
    String description,
    TriggerPlan plan,
    double seconds,
    TriggerTally tally,
    long keysLeft,
    long seedOverrunMs,
    double redisCpuSeconds) {
  TriggerResult withSeedOverrunMs(long ms) {
    return new TriggerResult(
        engine, description, plan, seconds, tally, keysLeft, ms, redisCpuSeconds);
  }

  TriggerResult withRedisCpuSeconds(double cpu) {
    return new TriggerResult(
        engine, description, plan, seconds, tally, keysLeft, seedOverrunMs, cpu);
  }

  long distinct() {
    return tally.seen.cardinality();
  }

  double perSecond() {
    return tally.delivered / seconds;
  }

  boolean exactlyOnce() {
    return tally.delivered == plan.timers()
        && distinct() == plan.timers()
        && tally.duplicates == 0
        && tally.foreign == 0;
  }
}
