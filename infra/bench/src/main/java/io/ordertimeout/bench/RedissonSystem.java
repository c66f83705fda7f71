package io.ordertimeout.bench;

import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.wiring.Components;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.redisson.Redisson;
import org.redisson.api.RBlockingQueue;
import org.redisson.api.RDelayedQueue;
import org.redisson.api.RFuture;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;

/**
 * The delayed queue users would otherwise pick, configured as a competent user would deploy it:
 * Redisson's RDelayedQueue moves each order id to a blocking queue at its deadline; {@code workers}
 * threads (as many as DB connections, so no worker waits for a connection another one could use)
 * each block for one id, drain up to {@code batch - 1} more with {@code poll(limit)} and close them
 * through the close use case in one transaction. Paid orders are not removed from the delayed queue
 * (RDelayedQueue.remove scans the whole queue); the workers' conditional close skips them.
 */
final class RedissonSystem implements ClosingSystem {
  private static final int OFFERS_IN_FLIGHT = 1_000;

  private final Components app;
  private final RedissonClient redisson;
  private final RBlockingQueue<String> due;
  private final RDelayedQueue<String> delayed;
  private final int workers;
  private final int batch;
  private final List<Thread> threads = new ArrayList<>();
  private volatile boolean stopped;

  RedissonSystem(Components app, String redisUri, String queueName, int workers, int batch) {
    this.app = app;
    this.workers = workers;
    this.batch = batch;
    Config config = new Config();
    config.setCodec(StringCodec.INSTANCE);
    config.useSingleServer().setAddress(redisUri);
    this.redisson = Redisson.create(config);
    this.due = redisson.getBlockingQueue(queueName, StringCodec.INSTANCE);
    this.delayed = redisson.getDelayedQueue(due);
  }

  @Override
  public String name() {
    return "redisson";
  }

  @Override
  public String description() {
    return "Redisson "
        + org.redisson.Version.class.getPackage().getImplementationVersion()
        + " RDelayedQueue (StringCodec) -> "
        + workers
        + " workers, each RBlockingQueue.poll(100 ms) then poll("
        + (batch - 1)
        + "), one OrderCloser.close per batch";
  }

  @Override
  public long scheduleMicrosPerOrder() {
    return 100;
  }

  @Override
  public void schedule(Map<String, Long> deadlines) throws Exception {
    List<RFuture<Void>> inFlight = new ArrayList<>(OFFERS_IN_FLIGHT);
    for (Map.Entry<String, Long> e : deadlines.entrySet()) {
      long delay = Math.max(0, e.getValue() - System.currentTimeMillis());
      inFlight.add(delayed.offerAsync(e.getKey(), delay, TimeUnit.MILLISECONDS));
      if (inFlight.size() == OFFERS_IN_FLIGHT) {
        awaitAll(inFlight);
      }
    }
    awaitAll(inFlight);
  }

  private static void awaitAll(List<RFuture<Void>> futures) {
    futures.forEach(f -> f.toCompletableFuture().join());
    futures.clear();
  }

  @Override
  public void start() {
    for (int i = 0; i < workers; i++) {
      Thread t = new Thread(this::work, "bench-redisson-worker-" + i);
      threads.add(t);
      t.start();
    }
  }

  private void work() {
    while (!stopped) {
      try {
        String first = due.poll(100, TimeUnit.MILLISECONDS);
        if (first == null) {
          continue;
        }
        List<String> ids = new ArrayList<>(batch);
        ids.add(first);
        if (batch > 1) {
          ids.addAll(due.poll(batch - 1));
        }
        // the DB's clock decides due: an id delivered a millisecond early is offered again
        app.closer()
            .close(TenantIds.DEFAULT, ids, CloseReason.TIMEOUT)
            .notDue()
            .forEach((id, dueIn) -> delayed.offer(id, dueIn + 1, TimeUnit.MILLISECONDS));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (RuntimeException e) {
        System.err.println("redisson worker: close failed: " + e);
      }
    }
  }

  @Override
  public void onPaid(List<String> orderIds) {
    // Nothing: see the class comment.
  }

  @Override
  public void stop() throws InterruptedException {
    stopped = true;
    for (Thread t : threads) {
      t.join();
    }
  }

  @Override
  public void close() {
    try {
      delayed.destroy();
      due.delete();
    } finally {
      redisson.shutdown();
    }
  }
}
