package io.ordertimeout.reliability;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * Counts the deadlocks (MySQL/MariaDB error 1213) and lock wait timeouts (1205) that statements on
 * a wrapped DataSource run into. Tx retries both silently, so its callers never see them; this sees
 * every one, including those a retry then hid.
 */
final class LockConflicts {
  static final int DEADLOCK = 1213;
  static final int LOCK_WAIT_TIMEOUT = 1205;

  private final AtomicLong deadlocks = new AtomicLong();
  private final AtomicLong lockWaitTimeouts = new AtomicLong();

  long deadlocks() {
    return deadlocks.get();
  }

  long lockWaitTimeouts() {
    return lockWaitTimeouts.get();
  }

  /** A DataSource whose connections' statements report their lock conflicts here. */
  DataSource wrap(DataSource dataSource) {
    return proxy(
        DataSource.class,
        dataSource,
        (target, method, args) -> {
          Object result = method.invoke(target, args);
          return result instanceof Connection c
              ? proxy(Connection.class, c, this::connection)
              : result;
        });
  }

  private Object connection(Object target, java.lang.reflect.Method method, Object[] args)
      throws Throwable {
    Object result = method.invoke(target, args);
    if (result instanceof java.sql.PreparedStatement ps) {
      return proxy(java.sql.PreparedStatement.class, ps, (t, m, a) -> m.invoke(t, a));
    }
    if (result instanceof Statement st) {
      return proxy(Statement.class, st, (t, m, a) -> m.invoke(t, a));
    }
    return result;
  }

  @FunctionalInterface
  private interface Call {
    Object invoke(Object target, java.lang.reflect.Method method, Object[] args) throws Throwable;
  }

  /** Proxies {@code target}; an SQLException thrown by any call is counted, then rethrown as is. */
  private <T> T proxy(Class<T> type, T target, Call call) {
    InvocationHandler handler =
        (p, method, args) -> {
          try {
            return call.invoke(target, method, args);
          } catch (InvocationTargetException e) {
            count(e.getCause());
            throw e.getCause();
          }
        };
    return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, handler));
  }

  private void count(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof SQLException e) {
        if (e.getErrorCode() == DEADLOCK) {
          deadlocks.incrementAndGet();
          return;
        }
        if (e.getErrorCode() == LOCK_WAIT_TIMEOUT) {
          lockWaitTimeouts.incrementAndGet();
          return;
        }
      }
    }
  }
}
