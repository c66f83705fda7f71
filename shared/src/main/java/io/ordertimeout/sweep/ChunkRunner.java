package io.ordertimeout.sweep;

import io.ordertimeout.loop.Sleeper;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How one pass closes its chunks: {@link #serial()} one after another on the sweep thread, or
 * {@link #pipelined} on a pool of daemon threads, one closing transaction per pooled connection,
 * while the sweep thread goes on claiming.
 *
 * <p>Pipelined, because a pass that waited for its closes made every order's lag the whole pass:
 * claim, close, read the next deadlines, sleep. At 3,333 due/s (bench S1, full size) passes took 36
 * ms on average and grew their own batches (82 orders a pass); p99 lag 168-204 ms. Handed to closer
 * threads, a batch's lag is its claim plus its own close, and the claims keep the batches small. At
 * most {@code threads} closes are in flight: the sweep thread waits for a free closer before it
 * dispatches more, so a backlog is claimed no faster than it closes (claimed timers are leased in
 * Redis, never held only in memory).
 */
interface ChunkRunner {
  /**
   * Starts every task: inline (serial), or on a closer thread as soon as one is free (pipelined;
   * returns once every task has a closer, not when they end).
   */
  void dispatch(List<Runnable> tasks);

  /**
   * How many closing times a dispatched chunk may take before it ends: all the pass's chunks one
   * after another (serial), or the close in flight ahead of it and its own (pipelined).
   */
  int chunksInSeries(int chunks);

  /** Waits until every dispatched task ended, at most {@code maxMillis}; true if they all did. */
  boolean awaitIdle(long maxMillis);

  /** Waits for the dispatched tasks at most {@code maxWaitMillis}, then stops the closers. */
  void close(long maxWaitMillis);

  /**
   * Splits claimed orders into at most {@code parallelism} chunks of at most {@code batch}, none
   * smaller than {@code minChunk} unless it is the only one.
   */
  static List<List<String>> split(List<String> claimed, int batch, int parallelism, int minChunk) {
    int bySize = (claimed.size() + batch - 1) / batch;
    int byThreads = Math.min(parallelism, Math.max(1, claimed.size() / minChunk));
    int count = Math.max(bySize, byThreads);
    List<List<String>> chunks = new java.util.ArrayList<>(count);
    int size = (claimed.size() + count - 1) / count;
    for (int from = 0; from < claimed.size(); from += size) {
      chunks.add(claimed.subList(from, Math.min(claimed.size(), from + size)));
    }
    return chunks;
  }

  static ChunkRunner serial() {
    return new ChunkRunner() {
      @Override
      public void dispatch(List<Runnable> tasks) {
        tasks.forEach(Runnable::run);
      }

      @Override
      public int chunksInSeries(int chunks) {
        return chunks;
      }

      @Override
      public boolean awaitIdle(long maxMillis) {
        return true;
      }

      @Override
      public void close(long maxWaitMillis) {}
    };
  }

  /**
   * {@code threads} closer threads; an interrupt while waiting for one ends the loop through {@code
   * sleeper}.
   */
  static ChunkRunner pipelined(int threads, Sleeper sleeper) {
    return new Pipelined(threads, sleeper);
  }

  /** The closer threads and the permits that bound the closes in flight. */
  final class Pipelined implements ChunkRunner {
    private static final Logger log = LoggerFactory.getLogger(TimeoutSweeper.class);

    private final int threads;
    private final Semaphore free;
    private final Sleeper sleeper;
    private final ExecutorService pool;

    Pipelined(int threads, Sleeper sleeper) {
      this.threads = threads;
      this.free = new Semaphore(threads);
      this.sleeper = sleeper;
      AtomicInteger n = new AtomicInteger();
      this.pool =
          Executors.newFixedThreadPool(
              threads,
              r -> {
                Thread t = new Thread(r, "otc-sweep-closer-" + n.incrementAndGet());
                t.setDaemon(true);
                return t;
              });
    }

    @Override
    public void dispatch(List<Runnable> tasks) {
      for (Runnable task : tasks) {
        try {
          free.acquire();
        } catch (InterruptedException e) {
          // The claimed timers not dispatched keep their lease and come back to a claimer.
          sleeper.interrupted();
          return;
        }
        pool.execute(
            () -> {
              try {
                task.run();
              } catch (RuntimeException | Error e) {
                // ClaimedCloser handles every close failure; this is a defect in it.
                log.error("a sweep close failed outside its handler", e);
              } finally {
                free.release();
              }
            });
      }
    }

    @Override
    public int chunksInSeries(int chunks) {
      return 2;
    }

    @Override
    public boolean awaitIdle(long maxMillis) {
      try {
        if (free.tryAcquire(threads, maxMillis, TimeUnit.MILLISECONDS)) {
          free.release(threads);
          return true;
        }
      } catch (InterruptedException e) {
        sleeper.interrupted();
      }
      return false;
    }

    @Override
    public void close(long maxWaitMillis) {
      if (!awaitIdle(maxWaitMillis)) {
        log.warn(
            "sweep closes still running after {} ms; their timers come back after the claim lease",
            maxWaitMillis);
      }
      pool.shutdownNow();
    }
  }
}
