package io.ordertimeout.aws;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import io.ordertimeout.mysql.Database;
import io.ordertimeout.mysql.RotatingDataSource;
import io.ordertimeout.redis.RedisConnector;
import io.ordertimeout.util.Jitter;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.crac.Context;
import org.crac.Core;
import org.crac.Resource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * SnapStart (CRaC) hooks for one execution environment's pool and Redis connection: no database or
 * Redis socket goes into the snapshot, the hot paths are primed before it, and after a restore the
 * clients reconnect (and the DB secret is re-read) before the first request where they can, within
 * a bounded time.
 *
 * <p>A snapshot may be restored minutes later into many environments at once; a TCP connection
 * copied into it is dead (the server closed it, or thousands of clones share one socket), and a
 * half-open one stalls its first commands until a timeout. So before the checkpoint the pool is
 * suspended (it would otherwise refill itself to its minimum idle at once), its connections are
 * closed and awaited, and the shared Redis connection is closed; after the restore the pool resumes
 * and opens one connection, and Redis opens a new connection and PINGs it.
 *
 * <p>Why the restore work runs in parallel within {@link #RESTORE_BUDGET}: Lambda fails a restore
 * whose hooks take over 10 s (SnapStartTimeoutException), and in a row the three steps could: the
 * secret read (2 s connect, 3 s socket per attempt, SDK retries), a Hikari connection (up to its 5
 * s connection timeout) and a Redis connect (2 s) took 7-12 s against endpoints that accept and
 * never answer. None of them is needed for correctness: the pool opens connections on demand,
 * RedisConnector opens the shared connection on the next command, and a login refused after a
 * rotation is re-read on MySQL's 1045. So each step gets the same 2 s, all at once, and a step not
 * done by then goes on in the background while the restore returns; the first request finds what it
 * finished, or does the rest itself.
 */
public final class SnapStartHooks implements Resource {
  private static final Logger log = LoggerFactory.getLogger(SnapStartHooks.class);

  /**
   * HikariCP closes evicted connections on its own thread: a close (COM_QUIT and the socket) takes
   * milliseconds; 5 s bounds a server that does not answer, and the checkpoint goes on anyway.
   */
  private static final long CLOSE_WAIT_NANOS = 5_000_000_000L;

  /**
   * How long afterRestore waits for its parallel steps: a fifth of Lambda's 10 s hook limit. A
   * healthy restore needs tens of ms (one TLS handshake each to Secrets Manager, RDS Proxy and
   * ElastiCache); past 2 s the endpoint is in trouble and the first request would wait on it
   * anyway.
   */
  public static final Duration RESTORE_BUDGET = Duration.ofSeconds(2);

  /** org.crac holds resources weakly: this list keeps registered hooks alive. */
  private static final List<SnapStartHooks> REGISTERED = new CopyOnWriteArrayList<>();

  private static final AtomicInteger THREADS = new AtomicInteger();

  private final HikariDataSource dataSource;
  private final RedisConnector redis;
  private final Runnable primer;
  private final Duration budget;

  /**
   * @param primer runs the hot paths once before the checkpoint (read-only: see wiring.Priming), so
   *     their classes are loaded and their code warm in the snapshot
   * @param budget how long {@link #afterRestore} waits for its steps
   */
  public SnapStartHooks(
      HikariDataSource dataSource, RedisConnector redis, Runnable primer, Duration budget) {
    this.dataSource = dataSource;
    this.redis = redis;
    this.primer = primer;
    this.budget = budget;
  }

  SnapStartHooks(HikariDataSource dataSource, RedisConnector redis) {
    this(dataSource, redis, () -> {}, RESTORE_BUDGET);
  }

  /** Registers hooks for this pool and Redis connector with the JVM's global CRaC context. */
  public static void register(HikariDataSource dataSource, RedisConnector redis, Runnable primer) {
    SnapStartHooks hooks = new SnapStartHooks(dataSource, redis, primer, RESTORE_BUDGET);
    REGISTERED.add(hooks);
    Core.getGlobalContext().register(hooks);
  }

  @Override
  public void beforeCheckpoint(Context<? extends Resource> context) {
    prime();
    HikariPoolMXBean pool = dataSource.getHikariPoolMXBean();
    pool.suspendPool();
    pool.softEvictConnections();
    RotatingDataSource connections = Database.logins(dataSource);
    long deadline = System.nanoTime() + CLOSE_WAIT_NANOS;
    while (connections.openConnections() > 0 && System.nanoTime() < deadline) {
      LockSupport.parkNanos(1_000_000);
    }
    if (connections.openConnections() > 0) {
      log.warn(
          "before checkpoint: {} DB connections still open after 5 s",
          connections.openConnections());
    }
    redis.disconnect();
  }

  private void prime() {
    long started = System.nanoTime();
    try {
      primer.run();
      log.info(
          "before checkpoint: hot paths primed in {} ms",
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
    } catch (RuntimeException e) {
      // a snapshot without priming is slower on its first request, not wrong
      log.warn("before checkpoint: priming failed ({})", e.toString());
    }
  }

  @Override
  public void afterRestore(Context<? extends Resource> context) {
    // first, before anything draws a number: the snapshot holds one random state for all copies
    Jitter.reseed();
    HikariPoolMXBean pool = dataSource.getHikariPoolMXBean();
    // connections from before a checkpoint that did not run its hook are dead: none are reused
    pool.softEvictConnections();
    pool.resumePool();
    Map<String, CompletableFuture<Void>> steps = new LinkedHashMap<>();
    // the snapshot may be older than the last rotation of the DB secret
    steps.put("DB secret re-read", background(() -> Database.logins(dataSource).reload()));
    steps.put("DB connection", background(this::openDbConnection));
    steps.put(
        "Redis connection",
        background(
            () -> {
              redis.reconnect();
              redis.sync().ping();
            }));
    awaitWithin(steps);
  }

  private void openDbConnection() {
    try (Connection c = dataSource.getConnection()) {
      c.isValid(2);
    } catch (SQLException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  /** Waits for every step, at most the budget in all; logs what failed or is still running. */
  private void awaitWithin(Map<String, CompletableFuture<Void>> steps) {
    long deadline = System.nanoTime() + budget.toNanos();
    List<String> pending = new ArrayList<>();
    for (Map.Entry<String, CompletableFuture<Void>> step : steps.entrySet()) {
      try {
        step.getValue().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (TimeoutException e) {
        pending.add(step.getKey());
      } catch (ExecutionException e) {
        // the first request retries through the pool, the connector or a 1045; a failed warm-up
        // must not fail the restore
        log.warn("after restore: {} failed ({})", step.getKey(), e.getCause().toString());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
    if (!pending.isEmpty()) {
      log.warn(
          "after restore: {} not done within {} ms; continuing in the background, the first"
              + " request connects if they have not",
          pending,
          budget.toMillis());
    }
  }

  /** Runs {@code step} on a daemon thread of its own: a hung step never holds the restore. */
  private static CompletableFuture<Void> background(Runnable step) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    Thread t =
        new Thread(
            () -> {
              try {
                step.run();
                done.complete(null);
              } catch (RuntimeException | Error e) {
                done.completeExceptionally(e);
              }
            },
            "snapstart-restore-" + THREADS.incrementAndGet());
    t.setDaemon(true);
    t.start();
    return done;
  }
}
