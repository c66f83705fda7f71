package io.ordertimeout.bench;

import io.ordertimeout.domain.CloseReason;
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
 * The delayed queue users would otherwise pick: Redisson's RDelayedQueue moves each order id to a
 * blocking queue at its deadline; one worker thread takes ids one by one, as the usual listener
 * does, and closes each through the close use case (one transaction per order). Paid orders are not
 * removed from the delayed queue (RDelayedQueue.remove scans the whole queue); the worker's
 * conditional close skips them.
 */
final class RedissonSystem implements ClosingSystem {
  private static final int OFFERS_IN_FLIGHT = 1_000;

  private final Components app;
  private final RedissonClient redisson;
  private final RBlockingQueue<String> due;
  private final RDelayedQueue<String> delayed;
  private Thread worker;
  private volatile boolean stopped;

  RedissonSystem(Components app, String redisUri, String queueName) {
    this.app = app;
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
        + " RDelayedQueue (StringCodec) -> RBlockingQueue.poll, 1 worker, one order per close";
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
    worker = new Thread(this::work, "bench-redisson-worker");
    worker.start();
  }

  private void work() {
    while (!stopped) {
      try {
        String id = due.poll(100, TimeUnit.MILLISECONDS);
        if (id != null) {
          app.closer().close(List.of(id), CloseReason.TIMEOUT);
        }
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
    worker.join();
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
