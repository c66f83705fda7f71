package io.ordertimeout.config;

import io.ordertimeout.mysql.Tx;
import java.time.Duration;

/**
 * Every bound on a wait, derived from the one that encloses it: the function's timeout bounds a
 * transaction with its retries, which bounds the socket timeout, which must outlast MySQL's lock
 * wait; the WeChat connect and read timeouts bound a call, two calls make the WeChat step of a
 * close. OtcConfig reads them (defaults derived from each other there) and checks the claim lease
 * and the sweep against them.
 *
 * <p>How each bound is enforced: the lock wait is MySQL's {@code innodb_lock_wait_timeout}, set on
 * each pooled connection (Database.pool); the socket timeout is JDBC's network timeout on every
 * connection a {@link Tx} borrows, so a dead server or network ends a statement too. No JDBC query
 * timeout is used: Connector/J cancels it with KILL QUERY from a second connection, and behind RDS
 * Proxy that id names a multiplexed backend connection, not necessarily ours.
 *
 * @param functionTimeout the Lambda function's Timeout (OTC_FUNCTION_TIMEOUT_MS, template.yaml)
 * @param lockWaitSeconds innodb_lock_wait_timeout of the system's connections
 * @param socketTimeout JDBC network timeout of every statement the system runs
 * @param setLockWait whether each connection SETs the lock wait (false: the server or RDS Proxy's
 *     initialization query provides it; Database.pool verifies either way)
 * @param weChatConnectTimeout connecting to WeChat Pay
 * @param weChatReadTimeout reading one WeChat Pay answer
 * @param weChatStep the WeChat step of one close batch, all its calls together
 */
public record Waits(
    Duration functionTimeout,
    int lockWaitSeconds,
    Duration socketTimeout,
    boolean setLockWait,
    Duration weChatConnectTimeout,
    Duration weChatReadTimeout,
    Duration weChatStep) {

  public Waits {
    // the accessors read fields, which a compact constructor assigns only at its end
    Duration transaction = socketTimeout.multipliedBy(Tx.ATTEMPTS);
    Duration weChatCall = weChatConnectTimeout.plus(weChatReadTimeout);
    require(
        functionTimeout.toMillis() >= 1_000,
        "OTC_FUNCTION_TIMEOUT_MS must be at least 1000, was " + functionTimeout.toMillis());
    require(
        lockWaitSeconds >= 1 && lockWaitSeconds <= 3_600,
        "OTC_DB_LOCK_WAIT_SECONDS must be 1..3600, was " + lockWaitSeconds);
    require(
        socketTimeout.toMillis() >= lockWaitSeconds * 1_000L + 500,
        "OTC_DB_SOCKET_TIMEOUT_MS ("
            + socketTimeout.toMillis()
            + ") must exceed OTC_DB_LOCK_WAIT_SECONDS ("
            + lockWaitSeconds
            + " s) by at least 500 ms: a lock wait must end with MySQL's error 1205, which Tx"
            + " retries, before the socket gives up on the connection");
    require(
        transaction.compareTo(functionTimeout) < 0,
        Tx.ATTEMPTS
            + " transaction attempts x OTC_DB_SOCKET_TIMEOUT_MS ("
            + socketTimeout.toMillis()
            + ", above OTC_DB_LOCK_WAIT_SECONDS "
            + lockWaitSeconds
            + " s) = "
            + transaction.toMillis()
            + " ms must be under OTC_FUNCTION_TIMEOUT_MS ("
            + functionTimeout.toMillis()
            + "): a transaction retrying lock waits would outlive its invocation");
    require(
        !weChatConnectTimeout.isNegative() && !weChatConnectTimeout.isZero(),
        "OTC_WECHAT_CONNECT_TIMEOUT_MS must be positive");
    require(
        !weChatReadTimeout.isNegative() && !weChatReadTimeout.isZero(),
        "OTC_WECHAT_READ_TIMEOUT_MS must be positive");
    require(
        weChatCall.compareTo(functionTimeout) < 0,
        "OTC_WECHAT_CONNECT_TIMEOUT_MS ("
            + weChatConnectTimeout.toMillis()
            + ") + OTC_WECHAT_READ_TIMEOUT_MS ("
            + weChatReadTimeout.toMillis()
            + ") must be under OTC_FUNCTION_TIMEOUT_MS ("
            + functionTimeout.toMillis()
            + "): one WeChat call would outlive its invocation");
    require(
        !weChatStep.isNegative() && !weChatStep.isZero(),
        "OTC_WECHAT_STEP_TIMEOUT_MS must be positive");
  }

  /**
   * A transaction's worst case: every attempt ends by the lock wait (MySQL's error, retried) or at
   * the latest by the socket timeout, and Tx makes {@link Tx#ATTEMPTS} of them.
   */
  public Duration transaction() {
    return socketTimeout.multipliedBy(Tx.ATTEMPTS);
  }

  /** One WeChat call's worst case: connecting, then waiting for the answer. */
  public Duration weChatCall() {
    return weChatConnectTimeout.plus(weChatReadTimeout);
  }

  public Waits withWeChatStep(Duration step) {
    return new Waits(
        functionTimeout,
        lockWaitSeconds,
        socketTimeout,
        setLockWait,
        weChatConnectTimeout,
        weChatReadTimeout,
        step);
  }

  public Waits withLockWait(int seconds, Duration socket) {
    return new Waits(
        functionTimeout,
        seconds,
        socket,
        setLockWait,
        weChatConnectTimeout,
        weChatReadTimeout,
        weChatStep);
  }

  private static void require(boolean ok, String message) {
    if (!ok) {
      throw new IllegalArgumentException("invalid configuration: " + message);
    }
  }
}
