package io.ordertimeout.bench;

import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScoredValue;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.wiring.Components;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The seed's own design (its section 4.1): every order's deadline in one Redis sorted set; one
 * scanner every 100 ms reads {@code ZRANGEBYSCORE key -inf now LIMIT 0 1000}, removes those ids
 * with {@code ZREM} before dispatching them, and a pool of {@code workers} threads (as many as DB
 * connections) closes them through the close use case in chunks of 1000 / workers. A full page is
 * scanned again at once instead of waiting the 100 ms, so a backlog is not capped at 10,000/s.
 * Removing before closing is at-most-once: a crash between the ZREM and the close loses the order
 * (this bench does not crash). Paid orders are ZREMed after the paid commit, as the seed does.
 */
final class ZsetScanSystem implements ClosingSystem {
  static final long PERIOD_MILLIS = 100;
  static final int PAGE = 1_000;
  private static final int ZADD_CHUNK = 1_000;

  private final Components app;
  private final RedisClient client;
  private final StatefulRedisConnection<String, String> scanConnection;
  private final RedisCommands<String, String> redis;
  private final String key;
  private final int workers;
  private final int chunk;
  private final Semaphore inFlight;
  private ExecutorService pool;
  private Thread scanner;
  private volatile boolean stopped;

  ZsetScanSystem(Components app, String redisUri, String key, int workers) {
    this.app = app;
    this.client = RedisClient.create(redisUri);
    this.scanConnection = client.connect();
    this.redis = scanConnection.sync();
    this.key = key;
    this.workers = workers;
    this.chunk = Math.max(1, (PAGE + workers - 1) / workers);
    // Two pages in flight at most: the scanner runs ahead of the workers by one page, no more, so
    // a backlog waits in the sorted set (where a paid order can still be removed), not in memory.
    this.inFlight = new Semaphore(2 * ((PAGE + chunk - 1) / chunk));
  }

  @Override
  public String name() {
    return "zset-100ms";
  }

  @Override
  public String description() {
    return "seed design: one sorted set, ZRANGEBYSCORE -inf now LIMIT 0 "
        + PAGE
        + " every "
        + PERIOD_MILLIS
        + " ms (again at once on a full page), ZREM, then "
        + workers
        + " workers each closing a chunk of "
        + chunk
        + " with one OrderCloser.close";
  }

  @Override
  public long scheduleMicrosPerOrder() {
    return 10;
  }

  @Override
  public void schedule(Map<String, Long> deadlines) {
    List<ScoredValue<String>> page = new ArrayList<>(ZADD_CHUNK);
    for (Map.Entry<String, Long> e : deadlines.entrySet()) {
      page.add(ScoredValue.just(e.getValue(), e.getKey()));
      if (page.size() == ZADD_CHUNK) {
        zadd(page);
      }
    }
    zadd(page);
  }

  @SuppressWarnings("unchecked")
  private void zadd(List<ScoredValue<String>> page) {
    if (!page.isEmpty()) {
      redis.zadd(key, page.toArray(new ScoredValue[0]));
      page.clear();
    }
  }

  @Override
  public void start() {
    pool = Executors.newFixedThreadPool(workers);
    scanner = new Thread(this::loop, "bench-zset-scanner");
    scanner.start();
  }

  private void loop() {
    long next = System.currentTimeMillis();
    while (!stopped) {
      try {
        while (!stopped && scanPage() == PAGE) {
          // a full page: more are due, scan again at once
        }
      } catch (RuntimeException e) {
        System.err.println("zset-100ms: scan failed: " + e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      next += PERIOD_MILLIS;
      long wait = next - System.currentTimeMillis();
      if (wait > 0) {
        try {
          Thread.sleep(wait);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      } else {
        next = System.currentTimeMillis();
      }
    }
  }

  /** One page: read the due ids, ZREM them, dispatch them in chunks; returns the page size. */
  private int scanPage() throws InterruptedException {
    List<String> due =
        redis.zrangebyscore(
            key,
            Range.create(Double.NEGATIVE_INFINITY, (double) System.currentTimeMillis()),
            Limit.create(0, PAGE));
    if (due.isEmpty()) {
      return 0;
    }
    redis.zrem(key, due.toArray(new String[0]));
    for (int from = 0; from < due.size(); from += chunk) {
      List<String> ids = List.copyOf(due.subList(from, Math.min(due.size(), from + chunk)));
      inFlight.acquire();
      pool.execute(
          () -> {
            try {
              reschedule(app.closer().close(TenantIds.DEFAULT, ids, CloseReason.TIMEOUT).notDue());
            } catch (RuntimeException e) {
              System.err.println("zset-100ms: close of " + ids.size() + " failed: " + e);
            } finally {
              inFlight.release();
            }
          });
    }
    return due.size();
  }

  /**
   * The DB's clock decides due; an id this JVM's clock saw due a millisecond early goes back into
   * the set (at the DB's deadline), as the seed's worker must do to never lose an order.
   */
  private void reschedule(Map<String, Long> notDue) {
    long now = System.currentTimeMillis();
    notDue.forEach((id, dueInMillis) -> redis.zadd(key, now + dueInMillis + 1, id));
  }

  @Override
  public void onPaid(List<String> orderIds) {
    if (!orderIds.isEmpty()) {
      redis.zrem(key, orderIds.toArray(new String[0]));
    }
  }

  @Override
  public void stop() throws InterruptedException {
    stopped = true;
    scanner.join();
    pool.shutdown();
    pool.awaitTermination(60, TimeUnit.SECONDS);
  }

  @Override
  public void close() {
    try {
      redis.del(key);
    } finally {
      scanConnection.close();
      client.shutdown();
    }
  }
}
