package io.ordertimeout.loop;

import java.util.function.BooleanSupplier;

/**
 * A polling loop, modelled on Sidekiq's poller: {@code until done or out of time: one pass; wait}.
 * The work says how long to wait after each pass (a sweep until its next deadline, a consumer not
 * at all: its read blocks) and after a failed one (a jittered backoff); the loop owns the done flag
 * and the wait, so {@link #terminate()} ends every kind of loop the same way. A pass's errors are
 * the work's to log and count; the loop only survives them.
 */
public final class PollingLoop {
  /** What a pass or a failure returns to end the loop at once (a lost lease, for instance). */
  public static final long STOP = -1;

  /** The work of one loop. */
  public interface Work {
    /** One pass; returns the millis to wait before the next one (0: none) or {@link #STOP}. */
    long pass();

    /** The pass threw {@code e}; returns the millis to wait before the next one or STOP. */
    long failed(RuntimeException e);
  }

  private final Sleeper sleeper = new Sleeper();

  /** Runs passes while not terminated and {@code mayStart} allows another pass. */
  public void run(BooleanSupplier mayStart, Work work) {
    while (!sleeper.done() && mayStart.getAsBoolean()) {
      long wait;
      try {
        wait = work.pass();
      } catch (RuntimeException e) {
        wait = work.failed(e);
      }
      if (wait == STOP) {
        return;
      }
      sleeper.sleep(wait);
    }
  }

  /** True once terminated or interrupted: a pass that loops within itself stops early too. */
  public boolean done() {
    return sleeper.done();
  }

  /** Ends the loop after the current pass and wakes a sleeping loop. */
  public void terminate() {
    sleeper.terminate();
  }

  /** The loop's sleeper, for helpers that must end the loop on an interrupt. */
  public Sleeper sleeper() {
    return sleeper;
  }
}
