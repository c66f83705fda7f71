package io.ordertimeout.db;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
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
    HikariConfig cfg = new HikariConfig();
    cfg.setJdbcUrl(withSessionDefaults(jdbcUrl));
    cfg.setUsername(user);
    cfg.setPassword(password);
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
    cfg.setAutoCommit(true);
    cfg.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
    return new HikariDataSource(cfg);
  }

  /**
   * Applies pending migrations; returns how many ran. Idempotent, safe to call from every cold
   * start.
   */
  public static int migrate(DataSource dataSource) {
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
   * Every connection works in UTC (DATETIME(3) columns hold UTC; NOW(3) must too) and batches
   * inserts into multi-row statements. Options already in the URL win.
   */
  static String withSessionDefaults(String jdbcUrl) {
    String[][] defaults = {
      {"connectionTimeZone", "UTC"},
      {"forceConnectionTimeZoneToSession", "true"},
      {"rewriteBatchedStatements", "true"},
      {"cachePrepStmts", "true"},
      {"useServerPrepStmts", "false"},
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
