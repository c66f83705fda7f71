package io.ordertimeout.aws;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import io.ordertimeout.mysql.Database;
import io.ordertimeout.mysql.RotatingDataSource;
import io.ordertimeout.redis.RedisConnector;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;
import org.crac.Context;
import org.crac.Core;
import org.crac.Resource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * SnapStart (CRaC) hooks for one execution environment's pool and Redis connection: no database or
 * Redis socket goes into the snapshot, and after a restore both reconnect (and the DB secret is
 * re-read) before the first request rather than during it.
 *
 * <p>A snapshot may be restored minutes later into many environments at once; a TCP connection
 * copied into it is dead (the server closed it, or thousands of clones share one socket), and a
 * half-open one stalls its first commands until a timeout. So before the checkpoint the pool is
 * suspended (it would otherwise refill itself to its minimum idle at once), its connections are
 * closed and awaited, and the shared Redis connection is closed; after the restore the pool resumes
 * and opens one connection, and Redis opens a new connection and PINGs it.
 */
public final class SnapStartHooks implements Resource {
  private static final Logger log = LoggerFactory.getLogger(SnapStartHooks.class);

  /**
   * HikariCP closes evicted connections on its own thread: a close (COM_QUIT and the socket) takes
   * milliseconds; 5 s bounds a server that does not answer, and the checkpoint goes on anyway.
   */
  private static final long CLOSE_WAIT_NANOS = 5_000_000_000L;

  /** org.crac holds resources weakly: this list keeps registered hooks alive. */
  private static final List<SnapStartHooks> REGISTERED = new CopyOnWriteArrayList<>();

  private final HikariDataSource dataSource;
  private final RedisConnector redis;

  SnapStartHooks(HikariDataSource dataSource, RedisConnector redis) {
    this.dataSource = dataSource;
    this.redis = redis;
  }

  /** Registers hooks for this pool and Redis connector with the JVM's global CRaC context. */
  public static void register(HikariDataSource dataSource, RedisConnector redis) {
    SnapStartHooks hooks = new SnapStartHooks(dataSource, redis);
    REGISTERED.add(hooks);
    Core.getGlobalContext().register(hooks);
  }

  @Override
  public void beforeCheckpoint(Context<? extends Resource> context) {
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

  @Override
  public void afterRestore(Context<? extends Resource> context) {
    try {
      // the snapshot may be older than the last rotation of the DB secret
      Database.logins(dataSource).reload();
    } catch (RuntimeException e) {
      // the login held may still work; a refused one is re-read again on the first 1045
      log.warn("after restore: DB secret not re-read ({})", e.toString());
    }
    HikariPoolMXBean pool = dataSource.getHikariPoolMXBean();
    // connections from before a checkpoint that did not run its hook are dead: none are reused
    pool.softEvictConnections();
    pool.resumePool();
    try (Connection c = dataSource.getConnection()) {
      c.isValid(2);
    } catch (SQLException e) {
      // the first request retries through the pool; a failed warm-up must not fail the restore
      log.warn("after restore: no DB connection yet ({})", e.toString());
    }
    try {
      redis.reconnect();
      redis.sync().ping();
    } catch (RuntimeException e) {
      // the next command opens the connection again (RedisConnector)
      log.warn("after restore: Redis not reconnected yet ({})", e.toString());
    }
  }
}
