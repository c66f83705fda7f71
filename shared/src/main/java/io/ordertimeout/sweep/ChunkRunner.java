package io.ordertimeout.sweep;

import io.ordertimeout.loop.Sleeper;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * How one pass closes its chunks: {@link #serial()} one after another on the sweep thread, or
 * {@link #parallel} on a pool of daemon threads, one closing transaction per pooled connection.
 * Both are real strategies (serial used to be a null executor checked in two places).
 */
interface ChunkRunner extends AutoCloseable {
  /** Runs every task and returns when all ended; rethrows the first task's failure. */
  void runAll(List<Runnable> tasks);

  /** How many chunks' closing times add up in a pass's wall time: all of them, or one. */
  int chunksInSeries(int chunks);

  @Override
  void close();

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
      public void runAll(List<Runnable> tasks) {
        tasks.forEach(Runnable::run);
      }

      @Override
      public int chunksInSeries(int chunks) {
        return chunks;
      }

      @Override
      public void close() {}
    };
  }

  /** {@code threads} closer threads; an interrupt while waiting ends the loop through sleeper. */
  static ChunkRunner parallel(int threads, Sleeper sleeper) {
    AtomicInteger n = new AtomicInteger();
    ExecutorService pool =
        Executors.newFixedThreadPool(
            threads,
            r -> {
              Thread t = new Thread(r, "otc-sweep-closer-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    return new ChunkRunner() {
      @Override
      public void runAll(List<Runnable> tasks) {
        if (tasks.size() == 1) {
          tasks.get(0).run();
          return;
        }
        List<Future<?>> running = new ArrayList<>(tasks.size());
        tasks.forEach(task -> running.add(pool.submit(task)));
        for (Future<?> r : running) {
          try {
            r.get();
          } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException re ? re : new IllegalStateException(e);
          } catch (InterruptedException e) {
            sleeper.interrupted();
          }
        }
      }

      @Override
      public int chunksInSeries(int chunks) {
        return 1;
      }

      @Override
      public void close() {
        pool.shutdownNow();
      }
    };
  }
}
