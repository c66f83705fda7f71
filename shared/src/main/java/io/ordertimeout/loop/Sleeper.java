package io.ordertimeout.loop;

import io.ordertimeout.util.Jitter;

/**
 * The done flag and the wait of one polling loop, Sidekiq-poller style: the loop reads {@code until
 * done: one pass; wait}, a pass's errors are logged by the loop and survived, waits are jittered,
 * and {@link #terminate()} wakes a sleeping loop at once instead of after its wait.
 *
 * <p>The sweep and the stream consumer each held a copy of this (a lock object, a volatile flag,
 * the same 15-line sleep); one copy means one place where the lost-wake-up race is handled. Both
 * now run as a {@link PollingLoop}, which owns the sleeper.
 */
public final class Sleeper {
  private final Object lock = new Object();
  private volatile boolean done;

  /** True once terminate() ran or the thread was interrupted: the loop ends after this pass. */
  public boolean done() {
    return done;
  }

  /** Ends the loop after the current pass and wakes a sleeping loop. */
  public void terminate() {
    // done is set under the lock, and sleep() checks it there, so a terminate() between that check
    // and wait() cannot be missed (it would cost a whole wait, up to seconds).
    synchronized (lock) {
      done = true;
      lock.notifyAll();
    }
  }

  /** Called by a loop that caught an InterruptedException: restores the flag and ends the loop. */
  public void interrupted() {
    Thread.currentThread().interrupt();
    done = true;
  }

  /** Waits up to {@code millis}, less if terminated; returns at once when already done. */
  public void sleep(long millis) {
    if (millis <= 0) {
      return;
    }
    synchronized (lock) {
      if (done) {
        return;
      }
      try {
        lock.wait(millis);
      } catch (InterruptedException e) {
        interrupted();
      }
    }
  }

  /**
   * {@code millis} +-25%, uniformly: when a shared failure (a Redis restart) hits 32 loops at once,
   * their retries spread over half the wait instead of landing in the same millisecond.
   */
  public static long jittered(long millis) {
    return millis * 3 / 4 + Jitter.nextLong(millis / 2 + 1);
  }
}
