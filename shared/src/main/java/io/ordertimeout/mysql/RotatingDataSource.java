package io.ordertimeout.mysql;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.slf4j.LoggerFactory;

/**
 * The pool's connection factory, surviving a password rotation: a new connection refused with
 * MySQL's error 1045 (access denied) re-reads the login from its {@link LoginSource} and, when the
 * login changed, connects again at once with the new one. Connections already open are not touched:
 * MySQL keeps a session authenticated after ALTER USER, so they work until the pool retires them
 * (maxLifetime).
 *
 * <p>HikariCP itself could take new credentials (HikariConfigMXBean.setCredentials), but only a
 * caller that sees the failure could set them, and a borrower sees it only after the pool's
 * connection timeout (5 s) as a SQLTransientConnectionException. Here the failure is handled where
 * it happens, inside the pool's own connection attempt, so a borrower just gets a connection.
 *
 * <p>Reads are coalesced: a second failure with the login just re-read does not read again for
 * {@link #MIN_RELOAD_INTERVAL_NANOS} (1 s), so a wrong password in the source costs one Secrets
 * Manager call per second per environment, not one per connection attempt.
 */
public final class RotatingDataSource implements DataSource {
  /** MySQL and MariaDB's ER_ACCESS_DENIED_ERROR: wrong user or password. */
  static final int ACCESS_DENIED = 1045;

  static final long MIN_RELOAD_INTERVAL_NANOS = 1_000_000_000L;

  private static final org.slf4j.Logger log = LoggerFactory.getLogger(RotatingDataSource.class);

  private final String jdbcUrl;
  private final LoginSource source;
  private volatile DbLogin login;
  private long lastReloadNanos;
  private long reloads;

  /** Every connection this made, until garbage: SnapStart waits for them all to be closed. */
  private final Set<Connection> made = Collections.newSetFromMap(new WeakHashMap<>());

  public RotatingDataSource(String jdbcUrl, DbLogin login, LoginSource source) {
    this.jdbcUrl = jdbcUrl;
    this.login = login;
    this.source = source;
    this.lastReloadNanos = System.nanoTime() - MIN_RELOAD_INTERVAL_NANOS;
  }

  /** The login new connections use now. */
  public DbLogin login() {
    return login;
  }

  /** How many times the login was re-read (after restores and authentication failures). */
  public synchronized long reloads() {
    return reloads;
  }

  /**
   * Re-reads the login unconditionally: after a SnapStart restore, whose snapshot may hold a login
   * rotated since.
   */
  public synchronized DbLogin reload() {
    DbLogin fresh = source.reload();
    lastReloadNanos = System.nanoTime();
    reloads++;
    if (!fresh.equals(login)) {
      log.info(
          "DB login re-read: new connections log in as {} with the current password", fresh.user());
    }
    login = fresh;
    return fresh;
  }

  @Override
  public Connection getConnection() throws SQLException {
    DbLogin used = login;
    try {
      return connect(used);
    } catch (SQLException denied) {
      if (!isAccessDenied(denied)) {
        throw denied;
      }
      DbLogin fresh;
      try {
        fresh = reloadAfterDenial(used);
      } catch (RuntimeException unreadable) {
        denied.addSuppressed(unreadable);
        throw denied;
      }
      if (fresh.equals(used)) {
        throw denied; // the source still holds the refused login: rotation not finished yet
      }
      log.warn(
          "MySQL refused user {} (error {}); connecting with the login just re-read",
          used.user(),
          denied.getErrorCode());
      return connect(fresh);
    }
  }

  /** The login to retry with: re-read unless another thread just did (then theirs). */
  private synchronized DbLogin reloadAfterDenial(DbLogin refused) {
    if (!login.equals(refused)) {
      return login;
    }
    if (System.nanoTime() - lastReloadNanos < MIN_RELOAD_INTERVAL_NANOS) {
      return login;
    }
    return reload();
  }

  /** How many connections this made are still open (the pool closes evicted ones on a thread). */
  public int openConnections() {
    List<Connection> all;
    synchronized (made) {
      all = new ArrayList<>(made);
    }
    int open = 0;
    for (Connection c : all) {
      try {
        if (!c.isClosed()) {
          open++;
        }
      } catch (SQLException e) {
        // a connection that cannot answer isClosed() is broken: not open
      }
    }
    return open;
  }

  static boolean isAccessDenied(SQLException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException s
          && (s.getErrorCode() == ACCESS_DENIED || "28000".equals(s.getSQLState()))) {
        return true;
      }
    }
    return false;
  }

  private Connection connect(DbLogin with) throws SQLException {
    Properties props = new Properties();
    props.setProperty("user", with.user());
    props.setProperty("password", with.password());
    Driver driver = DriverManager.getDriver(jdbcUrl);
    Connection c = driver.connect(jdbcUrl, props);
    if (c == null) {
      throw new SQLException("no JDBC driver accepts " + jdbcUrl, "08001");
    }
    synchronized (made) {
      made.add(c);
    }
    return c;
  }

  @Override
  public Connection getConnection(String username, String password) throws SQLException {
    return connect(new DbLogin(username, password));
  }

  @Override
  public PrintWriter getLogWriter() {
    return DriverManager.getLogWriter();
  }

  @Override
  public void setLogWriter(PrintWriter out) {
    DriverManager.setLogWriter(out);
  }

  /** As HikariCP's own DriverDataSource: the JDBC login timeout is DriverManager's. */
  @Override
  public void setLoginTimeout(int seconds) {
    DriverManager.setLoginTimeout(seconds);
  }

  @Override
  public int getLoginTimeout() {
    return DriverManager.getLoginTimeout();
  }

  @Override
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    throw new SQLFeatureNotSupportedException("no java.util.logging here");
  }

  @Override
  public <T> T unwrap(Class<T> iface) throws SQLException {
    if (iface.isInstance(this)) {
      return iface.cast(this);
    }
    throw new SQLException("RotatingDataSource does not wrap " + iface.getName());
  }

  @Override
  public boolean isWrapperFor(Class<?> iface) {
    return iface.isInstance(this);
  }
}
