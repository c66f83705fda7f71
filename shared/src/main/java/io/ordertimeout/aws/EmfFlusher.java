package io.ordertimeout.aws;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Flushes an invocation's metrics as EMF every {@code interval} while the invocation runs, on a
 * thread of its own: the scheduled loops run ~66-100 s, and with one flush at their end their
 * metrics reached CloudWatch a minute or more late, and never from a run killed at its timeout.
 * With a flush every 10 s (CloudWatch's guidance for long-running functions) the alarms that treat
 * missing data as breaching and the dashboard see each interval as it ends, and a killed run loses
 * at most its last interval. The invocation's own flush at its end ({@link Invocation}) publishes
 * the rest; each flush publishes what happened since the previous one, so nothing is counted twice.
 *
 * <pre>{@code
 * try (EmfFlusher flusher = EmfFlusher.start(publisher, function, Duration.ofSeconds(10))) {
 *   body.get();
 * } // then publisher.flush(function): the last, partial interval
 * }</pre>
 */
public final class EmfFlusher implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(EmfFlusher.class);

  /** CloudWatch's guidance for long-running functions: flush at most every 10 s. */
  public static final Duration INTERVAL = Duration.ofSeconds(10);

  /** How long {@link #close()} waits for a flush in progress (a flush writes ~100 KB at most). */
  static final long CLOSE_WAIT_MILLIS = 1_000;

  private final EmfPublisher publisher;
  private final String functionName;
  private final long intervalNanos;
  private final double shareOfMinute;
  private final Map<String, String> mdc;
  private final Object lock = new Object();
  private final Thread thread;
  private boolean stopped;

  private EmfFlusher(EmfPublisher publisher, String functionName, Duration interval) {
    this.publisher = publisher;
    this.functionName = functionName;
    this.intervalNanos = interval.toNanos();
    this.shareOfMinute = Math.min(1.0, interval.toMillis() / 60_000.0);
    this.mdc = MDC.getCopyOfContextMap();
    this.thread = new Thread(this::run, "emf-flusher");
    this.thread.setDaemon(true);
  }

  /** Starts flushing {@code publisher} every {@code interval} until {@link #close()}. */
  public static EmfFlusher start(EmfPublisher publisher, String functionName, Duration interval) {
    if (interval.isNegative() || interval.isZero()) {
      throw new IllegalArgumentException("flush interval must be positive, was " + interval);
    }
    EmfFlusher flusher = new EmfFlusher(publisher, functionName, interval);
    flusher.thread.start();
    return flusher;
  }

  /**
   * Stops the periodic flushes and waits for one in progress, so the caller's final flush comes
   * after it (EmfPublisher.flush is synchronized: they never interleave either way). The thread
   * never outlives the invocation: a frozen Lambda environment would resume it inside the next.
   */
  @Override
  public void close() {
    synchronized (lock) {
      stopped = true;
      lock.notifyAll();
    }
    try {
      thread.join(CLOSE_WAIT_MILLIS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (thread.isAlive()) {
      thread.interrupt();
    }
  }

  private void run() {
    if (mdc != null) {
      MDC.setContextMap(mdc);
    }
    // each flush an interval after the previous one started: never more often than the interval
    // (a flush takes milliseconds, so the period is the interval plus those)
    long next = System.nanoTime() + intervalNanos;
    while (awaitTick(next)) {
      next = System.nanoTime() + intervalNanos;
      try {
        publisher.flush(functionName, shareOfMinute);
      } catch (RuntimeException e) {
        log.warn("periodic EMF flush of {} failed; the next one retries: {}", functionName, e);
      }
    }
  }

  /** Waits until {@code tick} (System.nanoTime); false once closed. */
  private boolean awaitTick(long tick) {
    synchronized (lock) {
      try {
        long left;
        while (!stopped && (left = tick - System.nanoTime()) > 0) {
          TimeUnit.NANOSECONDS.timedWait(lock, left);
        }
      } catch (InterruptedException e) {
        return false;
      }
      return !stopped;
    }
  }
}
