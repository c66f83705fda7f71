package io.ordertimeout.mysql;

/** A database operation failed; the message names the operation and the ids it was working on. */
public class DataAccessException extends RuntimeException {
  private final boolean transientFailure;

  public DataAccessException(String message, Throwable cause, boolean transientFailure) {
    super(message, cause);
    this.transientFailure = transientFailure;
  }

  /** True when a retry may succeed (deadlock, lock wait timeout, lost connection). */
  public boolean isTransient() {
    return transientFailure;
  }
}
