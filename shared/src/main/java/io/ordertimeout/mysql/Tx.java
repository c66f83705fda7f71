package io.ordertimeout.mysql;

import io.ordertimeout.util.Jitter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.time.Duration;
import java.util.concurrent.Executor;
import javax.sql.DataSource;

/**
 * Runs a unit of work in one transaction, retrying deadlocks and lock-wait timeouts a few times.
 *
 * <p>Every state change in this system is one transaction with conditional UPDATEs, so a retry
 * either redoes the whole change or finds it already done; that is what makes retrying here safe.
 */
public final class Tx {
  /**
   * Three attempts: InnoDB deadlocks between closers on a hot SKU resolve on the first retry in
   * practice. A lock-wait timeout costs a whole lock wait per attempt, so the configuration checks
   * that this many socket timeouts fit in the function's timeout (config.Waits).
   */
  public static final int ATTEMPTS = 3;

  /** setNetworkTimeout only sets the socket's read timeout: no reason to hand it to a thread. */
  private static final Executor DIRECT = Runnable::run;

  private final DataSource dataSource;
  private final int socketTimeoutMillis;

  /** Statements wait as long as the driver and server let them (tests, tools). */
  public Tx(DataSource dataSource) {
    this(dataSource, Duration.ZERO);
  }

  /**
   * Every statement of this Tx's work ends within {@code socketTimeout} (JDBC's network timeout on
   * each borrowed connection; the pool restores the connection's own on return, so migrations and
   * bulk loads on the same pool are not cut). Zero: no bound.
   */
  public Tx(DataSource dataSource, Duration socketTimeout) {
    this.dataSource = dataSource;
    this.socketTimeoutMillis = Math.toIntExact(socketTimeout.toMillis());
  }

  public DataSource dataSource() {
    return dataSource;
  }

  @FunctionalInterface
  public interface Work<T> {
    T run(Connection connection) throws SQLException;
  }

  /** Runs {@code work} in a transaction; {@code what} names the operation for error messages. */
  public <T> T inTransaction(String what, Work<T> work) {
    for (int attempt = 1; ; attempt++) {
      try {
        return once(work);
      } catch (SQLException e) {
        boolean retryable = isRetryable(e);
        if (!retryable || attempt >= ATTEMPTS) {
          throw new DataAccessException(
              what
                  + " failed (attempt "
                  + attempt
                  + ", SQLState "
                  + e.getSQLState()
                  + ", error "
                  + e.getErrorCode()
                  + "): "
                  + e.getMessage(),
              e,
              retryable || isConnectionFailure(e));
        }
        backoff(attempt);
      }
    }
  }

  /** Runs read-only work on a pooled connection in autocommit mode. */
  public <T> T read(String what, Work<T> work) {
    try (Connection c = connection()) {
      return work.run(c);
    } catch (SQLException e) {
      throw new DataAccessException(
          what + " failed (SQLState " + e.getSQLState() + "): " + e.getMessage(),
          e,
          isConnectionFailure(e) || isRetryable(e));
    }
  }

  private Connection connection() throws SQLException {
    Connection c = dataSource.getConnection();
    if (socketTimeoutMillis > 0) {
      try {
        c.setNetworkTimeout(DIRECT, socketTimeoutMillis);
      } catch (SQLException | RuntimeException e) {
        c.close();
        throw e;
      }
    }
    return c;
  }

  /**
   * The work between {@code setAutoCommit(false)} and {@code setAutoCommit(true)}, which commits:
   * JDBC commits a transaction whose connection goes back to autocommit, and MySQL commits it on
   * {@code SET autocommit=1}. One round trip where {@code commit()} and then back to autocommit
   * (which the pool needs) were two; an error of that commit is this attempt's error.
   */
  private <T> T once(Work<T> work) throws SQLException {
    try (Connection c = connection()) {
      c.setAutoCommit(false);
      T result;
      try {
        result = work.run(c);
      } catch (SQLException | RuntimeException e) {
        rollbackQuietly(c, e);
        try {
          c.setAutoCommit(true);
        } catch (SQLException restoreFailure) {
          e.addSuppressed(restoreFailure); // the pool resets a connection it gets back this way
        }
        throw e;
      }
      c.setAutoCommit(true);
      return result;
    }
  }

  private static void rollbackQuietly(Connection c, Exception cause) {
    try {
      c.rollback();
    } catch (SQLException rollbackFailure) {
      cause.addSuppressed(rollbackFailure);
    }
  }

  /**
   * 1213 deadlock, 1205 lock wait timeout; SQLState 40001 is the standard serialization failure.
   */
  static boolean isRetryable(SQLException e) {
    return e.getErrorCode() == 1213 || e.getErrorCode() == 1205 || "40001".equals(e.getSQLState());
  }

  static boolean isConnectionFailure(SQLException e) {
    String state = e.getSQLState();
    return e instanceof SQLTransientException
        || e instanceof SQLRecoverableException
        || (state != null && state.startsWith("08"));
  }

  private static void backoff(int attempt) {
    try {
      Thread.sleep(5L * attempt + Jitter.nextLong(10));
    } catch (InterruptedException ie) {
      Thread.currentThread().interrupt();
      throw new DataAccessException("interrupted while retrying a transaction", ie, true);
    }
  }
}
