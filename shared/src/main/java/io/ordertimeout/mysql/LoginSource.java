package io.ordertimeout.mysql;

/**
 * Where the pool's login comes from when the one it holds stops working: Secrets Manager on AWS
 * (io.ordertimeout.aws.ConfigLoader), the fixed configured login elsewhere.
 */
@FunctionalInterface
public interface LoginSource {
  /** The current login, read again from its source (not from a cache). */
  DbLogin reload();

  /** A login that never changes (local runs, tests without rotation). */
  static LoginSource fixed(DbLogin login) {
    return () -> login;
  }
}
