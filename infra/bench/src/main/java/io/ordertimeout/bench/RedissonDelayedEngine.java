package io.ordertimeout.bench;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.redisson.Redisson;
import org.redisson.api.RBlockingQueue;
import org.redisson.api.RDelayedQueue;
import org.redisson.api.RFuture;
import org.redisson.api.RedissonClient;
import org.redisson.client.RedisException;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;

/**
 * Redisson's RDelayedQueue in its best configuration for this measure: StringCodec (no
 * serialization beyond the id), {@code queues} delayed queues with a destination queue each (timer
 * {@code i} goes to queue {@code i % queues}), because one delayed queue moves due elements with
 * one script call of at most 100 elements at a time (hard-coded in Redisson's transfer task) and
 * several queues move in parallel; timers offered in due order, so the transfer script's LREM of
 * each element from the queue's order list finds it at the head. Consumers drain the destination
 * queues with {@code poll(batch)} (one LPOP with a count per call), worker {@code w} of {@code W}
 * the queues {@code q % W == w}, as this system's workers do shards. "Delivered" is taken from the
 * destination queue: RDelayedQueue has no lease, so a consumer that dies after the pop loses the
 * timer (this system's claim survives it; that costs the ZREM).
 */
final class RedissonDelayedEngine implements TriggerEngine {
  private static final int OFFERS_IN_FLIGHT = 1_000;

  private final String redisUri;
  private final String prefix;
  private final RedissonClient redisson;
  private final List<RBlockingQueue<String>> destinations = new ArrayList<>();
  private final List<RDelayedQueue<String>> delayed = new ArrayList<>();

  RedissonDelayedEngine(String redisUri, String prefix, int queues) {
    this.redisUri = redisUri;
    this.prefix = prefix;
    Config config = new Config();
    config.setCodec(StringCodec.INSTANCE);
    config.useSingleServer().setAddress(redisUri);
    this.redisson = Redisson.create(config);
    for (int q = 0; q < queues; q++) {
      RBlockingQueue<String> queue =
          redisson.getBlockingQueue(prefix + ":rq" + q, StringCodec.INSTANCE);
      destinations.add(queue);
      delayed.add(redisson.getDelayedQueue(queue));
    }
  }

  @Override
  public String name() {
    return "redisson-" + destinations.size() + "q";
  }

  @Override
  public String description() {
    return "Redisson "
        + org.redisson.Version.class.getPackage().getImplementationVersion()
        + " RDelayedQueue x "
        + destinations.size()
        + " (StringCodec, default single-server pools), consumers RBlockingQueue.poll(batch)";
  }

  @Override
  public void seed(TriggerPlan plan) {
    List<RFuture<Void>> inFlight = new ArrayList<>(OFFERS_IN_FLIGHT);
    for (int i = 0; i < plan.timers(); i++) {
      long delay = Math.max(0, plan.dueAt(i) - System.currentTimeMillis());
      inFlight.add(
          delayed
              .get(i % delayed.size())
              .offerAsync(TriggerPlan.id(i), delay, TimeUnit.MILLISECONDS));
      if (inFlight.size() == OFFERS_IN_FLIGHT) {
        inFlight.forEach(f -> f.toCompletableFuture().join());
        inFlight.clear();
      }
    }
    inFlight.forEach(f -> f.toCompletableFuture().join());
  }

  @Override
  public TriggerResult drain(TriggerPlan plan) throws Exception {
    return TriggerDrain.run(this, plan, (w, tally, sink) -> pass(plan, w, tally, sink));
  }

  private long pass(TriggerPlan plan, int worker, TriggerTally tally, TriggerDrain.Sink sink) {
    long got = 0;
    for (int q = worker; q < destinations.size(); q += plan.workers()) {
      long t0 = System.nanoTime();
      List<String> ids;
      try {
        ids = destinations.get(q).poll(plan.batch());
      } catch (RedisException e) {
        // A 1,000,000-timer backlog kept Redis busy in the transfer scripts past Redisson's 3 s
        // response timeout (4 retries): a consumer would poll again, so does this one.
        if (tally.errors++ == 0) {
          System.err.println("redisson consumer " + worker + ": poll failed, retrying: " + e);
        }
        continue;
      }
      tally.call(System.nanoTime() - t0);
      if (!ids.isEmpty()) {
        sink.delivered(tally, ids);
        got += ids.size();
      }
    }
    return got;
  }

  @Override
  public long keysLeft() {
    // Redisson names its keys redisson_delay_queue_timeout:{<name>} and so on: match the prefix
    // anywhere. A separate Lettuce client, so the count does not depend on Redisson's own view.
    RedisClient client = RedisClient.create(redisUri);
    try (StatefulRedisConnection<String, String> c = client.connect()) {
      return c.sync().keys("*" + prefix + "*").size();
    } finally {
      client.shutdown();
    }
  }

  @Override
  public void close() {
    try {
      delayed.forEach(RDelayedQueue::destroy);
    } finally {
      redisson.shutdown();
    }
  }
}
