package io.ordertimeout.bench;

/**
 * What every engine of one {@link TriggerBench} run gets: the same timers, due at the same offsets
 * from the instant {@code dueAt0}, drained by the same number of workers taking the same batch.
 * Timer {@code i} is the member {@code tb-<i, 8 digits>} and falls due at {@code dueAt0 + spreadMs
 * * i / timers}: due times are computed from the id, so no map of a million entries is held.
 */
record TriggerPlan(
    int timers, int workers, int batch, long dueAt0, long spreadMs, long maxDrainMs) {
  static final String ID_PREFIX = "tb-";

  static String id(int i) {
    return ID_PREFIX + String.format("%08d", i);
  }

  /** The timer's index, or -1 for a member this bench never seeded. */
  int indexOf(String id) {
    if (!id.startsWith(ID_PREFIX) || id.length() != ID_PREFIX.length() + 8) {
      return -1;
    }
    try {
      int i = Integer.parseInt(id, ID_PREFIX.length(), id.length(), 10);
      return i < timers ? i : -1;
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  long dueAt(int i) {
    return dueAt0 + spreadMs * i / timers;
  }

  TriggerPlan withDueAt0(long at) {
    return new TriggerPlan(timers, workers, batch, at, spreadMs, maxDrainMs);
  }
}
