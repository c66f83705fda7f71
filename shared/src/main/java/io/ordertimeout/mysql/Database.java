package io.ordertimeout.mysql;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;

/**
 * Builds the connection pool and applies the schema migrations (Flyway, classpath:db/migration).
 */
public final class Database {
  private Database() {}

  /**
   * A small HikariCP pool. Lambda runs one invocation at a time per environment, so a pool of 2 is
   * plenty there; tests and the local stack ask for more.
   */
  public static HikariDataSource pool(
      String jdbcUrl, String user, String password, int size, String name) {
    DbLogin login = new DbLogin(user, password);
    return new HikariDataSource(config(jdbcUrl, login, LoginSource.fixed(login), size, name));
  }

  /** The connection factory of a pool this class built: its login, and re-reading it. */
  public static RotatingDataSource logins(HikariDataSource pool) {
    return (RotatingDataSource) pool.getDataSource();
  }

  /**
   * As {@link #pool(String, String, String, int, String)}, with every connection's InnoDB lock wait
   * at most {@code lockWaitSeconds} instead of MySQL's default 50 s: SET on each new connection
   * when {@code setLockWait}, else provided by the server (an RDS Proxy initialization query or the
   * parameter group, which do not pin proxy connections). One connection is checked before the pool
   * is returned, so a server that does not apply it fails init rather than a close later.
   */
  public static HikariDataSource pool(
      String jdbcUrl,
      String user,
      String password,
      int size,
      String name,
      int lockWaitSeconds,
      boolean setLockWait) {
    DbLogin login = new DbLogin(user, password);
    return pool(jdbcUrl, login, LoginSource.fixed(login), size, name, lockWaitSeconds, setLockWait);
  }

  /**
   * As above, with a login that can change: a connection refused with error 1045 re-reads it from
   * {@code logins} (see {@link RotatingDataSource}, which {@link #logins} answers).
   */
  public static HikariDataSource pool(
      String jdbcUrl,
      DbLogin login,
      LoginSource logins,
      int size,
      String name,
      int lockWaitSeconds,
      boolean setLockWait) {
    HikariConfig cfg = config(jdbcUrl, login, logins, size, name);
    if (setLockWait) {
      cfg.setConnectionInitSql("SET SESSION innodb_lock_wait_timeout = " + lockWaitSeconds);
    }
    HikariDataSource pool = new HikariDataSource(cfg);
    try {
      requireLockWait(pool, name, lockWaitSeconds, setLockWait);
      return pool;
    } catch (RuntimeException e) {
      pool.close();
      throw e;
    }
  }

  private static void requireLockWait(
      DataSource pool, String name, int lockWaitSeconds, boolean setLockWait) {
    long actual;
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT @@SESSION.innodb_lock_wait_timeout")) {
      rs.next();
      actual = rs.getLong(1);
    } catch (SQLException e) {
      throw new DataAccessException(
          "reading innodb_lock_wait_timeout of pool " + name + " failed: " + e.getMessage(),
          e,
          true);
    }
    if (actual > lockWaitSeconds) {
      throw new IllegalArgumentException(
          "invalid configuration: connections of pool "
              + name
              + " wait "
              + actual
              + " s for a row lock (innodb_lock_wait_timeout), above OTC_DB_LOCK_WAIT_SECONDS="
              + lockWaitSeconds
              + (setLockWait
                  ? ": the server did not apply the SET"
                  : ": with OTC_DB_SET_LOCK_WAIT=false the server must provide it; put SET"
                      + " innodb_lock_wait_timeout="
                      + lockWaitSeconds
                      + " in the RDS Proxy's initialization query or the DB parameter group, or"
                      + " set OTC_DB_SET_LOCK_WAIT=true (a SET on each connection, which pins"
                      + " RDS Proxy connections)"));
    }
  }

  private static HikariConfig config(
      String jdbcUrl, DbLogin login, LoginSource logins, int size, String name) {
    HikariConfig cfg = new HikariConfig();
    // the pool's connections come from here, not from a JDBC URL and credentials of its own, so a
    // rotated password is re-read where a new connection is refused (RotatingDataSource)
    cfg.setDataSource(new RotatingDataSource(withSessionDefaults(jdbcUrl), login, logins));
    cfg.setMaximumPoolSize(size);
    cfg.setMinimumIdle(Math.min(1, size));
    cfg.setPoolName(name);
    // Fail an invocation fast when the DB is unreachable; the schedule retries within a minute
    // anyway.
    cfg.setConnectionTimeout(5_000);
    cfg.setValidationTimeout(2_000);
    // Below RDS Proxy's and MySQL's idle timeouts, so a thawed Lambda never picks a dead
    // connection.
    cfg.setMaxLifetime(240_000);
    cfg.setIdleTimeout(120_000);
    // SnapStart's beforeCheckpoint suspends the pool so it does not refill itself with a
    // connection that would go into the snapshot (aws.SnapStartHooks)
    cfg.setAllowPoolSuspension(true);
    cfg.setAutoCommit(true);
    cfg.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
    return cfg;
  }

  /**
   * Applies pending migrations; returns how many ran. Idempotent, safe to call from every cold
   * start.
   */
  public static int migrate(DataSource dataSource) {
    requireFlyway();
    MigrateResult result =
        Flyway.configure()
            .dataSource(dataSource)
            .locations("classpath:db/migration")
            .failOnMissingLocations(true)
            .load()
            .migrate();
    return result.migrationsExecuted;
  }

  /**
   * Only the admin function's jar carries Flyway: the other five leave it out (0.9 MB each), so
   * OTC_MIGRATE_ON_START on one of them fails its init with this, not with NoClassDefFoundError.
   */
  private static void requireFlyway() {
    try {
      Class.forName("org.flywaydb.core.Flyway", false, Database.class.getClassLoader());
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException(
          "invalid configuration: OTC_MIGRATE_ON_START=true, but this function's jar carries no"
              + " Flyway; set it on the admin function, whose jar does (docs/operations/deploy.md, \"Deploying to"
              + " AWS\")",
          e);
    }
  }

  /**
   * Every connection works in UTC (DATETIME(3) columns hold UTC; NOW(3) must too) and batches
   * inserts into multi-row statements. Options already in the URL win.
   */
  static String withSessionDefaults(String jdbcUrl) {
    String[][] defaults = {
      {"connectionTimeZone", "UTC"},
      {"forceConnectionTimeZoneToSession", "true"},
      {"rewriteBatchedStatements", "true"},
      {"cachePrepStmts", "true"},
      {"prepStmtCacheSize", "250"},
      {"prepStmtCacheSqlLimit", "2048"},
      {"useServerPrepStmts", "false"},
      // the driver's own record of autocommit, isolation and read-only instead of the server's:
      // without it every executeBatch first asked the server for @@session.transaction_read_only,
      // a round trip per batch (five or so per closing transaction; HikariCP's MySQL settings
      // recommend it too). Nothing here changes those through SQL text.
      {"useLocalSessionState", "true"},
    };
    StringBuilder url = new StringBuilder(jdbcUrl);
    for (String[] kv : defaults) {
      if (!jdbcUrl.contains(kv[0] + "=")) {
        url.append(url.indexOf("?") < 0 ? '?' : '&').append(kv[0]).append('=').append(kv[1]);
      }
    }
    return url.toString();
  }
}
