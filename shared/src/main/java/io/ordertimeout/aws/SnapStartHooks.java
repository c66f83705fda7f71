package io.ordertimeout.aws;

import com.zaxxer.hikari.HikariDataSource;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.ordertimeout.mysql.Database;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.crac.Context;
import org.crac.Core;
import org.crac.Resource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * SnapStart (CRaC) hooks for one {@link OrderTimeout}: no JDBC connection goes into the snapshot,
 * and after a restore the pool and Redis reconnect before the first request rather than during it.
 *
 * <p>A snapshot may be restored minutes later into many environments at once; a TCP connection
 * copied into it is dead (the server closed it, or thousands of clones share one socket). The pool
 * is evicted on both sides of the snapshot; Lettuce reconnects by itself when its channel fails, so
 * one PING after restore makes that happen at restore time (bounded by the 2 s command timeout).
 */
public final class SnapStartHooks implements Resource {
  private static final Logger log = LoggerFactory.getLogger(SnapStartHooks.class);

  /** org.crac holds resources weakly: this list keeps registered hooks alive. */
  private static final List<SnapStartHooks> REGISTERED = new CopyOnWriteArrayList<>();

  private final HikariDataSource dataSource;
  private final RedisClusterCommands<String, String> redis;

  SnapStartHooks(HikariDataSource dataSource, RedisClusterCommands<String, String> redis) {
    this.dataSource = dataSource;
    this.redis = redis;
  }

  /** Registers hooks for this pool and Redis connection with the JVM's global CRaC context. */
  public static void register(
      HikariDataSource dataSource, RedisClusterCommands<String, String> redis) {
    SnapStartHooks hooks = new SnapStartHooks(dataSource, redis);
    REGISTERED.add(hooks);
    Core.getGlobalContext().register(hooks);
  }

  @Override
  public void beforeCheckpoint(Context<? extends Resource> context) {
    dataSource.getHikariPoolMXBean().softEvictConnections();
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
    dataSource.getHikariPoolMXBean().softEvictConnections();
    try (Connection c = dataSource.getConnection()) {
      c.isValid(2);
    } catch (SQLException e) {
      // the first request retries through the pool; a failed warm-up must not fail the restore
      log.warn("after restore: no DB connection yet ({})", e.toString());
    }
    try {
      redis.ping();
    } catch (RuntimeException e) {
      log.warn("after restore: Redis PING failed, Lettuce reconnects ({})", e.toString());
    }
  }
}
