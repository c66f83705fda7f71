package io.ordertimeout.sweep;

import java.util.concurrent.atomic.AtomicLong;

/** What one sweep run counted, for its SweepStats; shared by the closer threads of the run. */
final class SweepCounters {
  final AtomicLong passes = new AtomicLong();
  final AtomicLong claimCalls = new AtomicLong();
  final AtomicLong claimed = new AtomicLong();
  final AtomicLong closed = new AtomicLong();
  final AtomicLong notDue = new AtomicLong();
  final AtomicLong alreadyFinal = new AtomicLong();
  final AtomicLong failedBatches = new AtomicLong();
  final AtomicLong handedOff = new AtomicLong();

  SweepStats stats(int shardsHeld, long durationMillis) {
    return new SweepStats(
        passes.get(),
        claimCalls.get(),
        claimed.get(),
        closed.get(),
        notDue.get(),
        alreadyFinal.get(),
        failedBatches.get(),
        handedOff.get(),
        shardsHeld,
        durationMillis);
  }
}
