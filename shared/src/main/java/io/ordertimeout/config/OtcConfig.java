package io.ordertimeout.config;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * The one configuration object of a function, read from the environment once at init, validated
 * once.
 *
 * <p>Every tunable has a default chosen for the Lambda sizes in template.yaml; the comment on each
 * says why. Contradictions fail fast with the offending variable named, so a bad deploy dies at
 * init, not mid-close.
 */
public record OtcConfig(
    String mysqlUrl,
    String mysqlUser,
    String mysqlPassword,
    int dbPoolSize,
    String redisUri,
    boolean redisCluster,
    String keyPrefix,
    int timerShards,
    Duration defaultOrderTimeout,
    Duration maxOrderTimeout,
    int sweepBatch,
    Duration claimLease,
    Duration sweepPoll,
    Duration invocationMargin,
    boolean migrateOnStart,
    StreamSettings stream,
    Waits waits) {

  public OtcConfig {
    Objects.requireNonNull(stream, "stream settings");
    Objects.requireNonNull(waits, "waits");
    Objects.requireNonNull(mysqlUrl, "OTC_MYSQL_URL");
    Objects.requireNonNull(redisUri, "OTC_REDIS_URI");
    require(
        dbPoolSize >= 1 && dbPoolSize <= 64, "OTC_DB_POOL_SIZE must be 1..64, was " + dbPoolSize);
    require(
        keyPrefix.matches("[A-Za-z0-9_.-]{1,32}"),
        "OTC_KEY_PREFIX must be 1-32 of [A-Za-z0-9_.-] (no braces or colons), was '"
            + keyPrefix
            + "'");
    require(
        timerShards >= 1 && timerShards <= 1024,
        "OTC_TIMER_SHARDS must be 1..1024, was " + timerShards);
    require(
        sweepBatch >= 1 && sweepBatch <= 5000,
        "OTC_SWEEP_BATCH must be 1..5000, was " + sweepBatch);
    require(
        !defaultOrderTimeout.isNegative() && !defaultOrderTimeout.isZero(),
        "OTC_DEFAULT_TIMEOUT_SECONDS must be positive");
    require(
        defaultOrderTimeout.compareTo(maxOrderTimeout) <= 0,
        "OTC_DEFAULT_TIMEOUT_SECONDS "
            + defaultOrderTimeout.toSeconds()
            + " exceeds OTC_MAX_TIMEOUT_SECONDS "
            + maxOrderTimeout.toSeconds());
    require(
        claimLease.toMillis() >= 1_000,
        "OTC_CLAIM_LEASE_MS must be at least 1000 (a close batch must finish inside its lease), was "
            + claimLease.toMillis());
    require(
        !sweepPoll.isNegative() && sweepPoll.toMillis() <= 5_000,
        "OTC_SWEEP_POLL_MS must be 0..5000");
    require(
        claimLease.compareTo(waits.weChatStep()) >= 0,
        "OTC_CLAIM_LEASE_MS ("
            + claimLease.toMillis()
            + ") must cover the longest step of a close, the WeChat step"
            + " OTC_WECHAT_STEP_TIMEOUT_MS ("
            + waits.weChatStep().toMillis()
            + "): a batch still asking WeChat when its lease ends is claimed again and asked twice");
    require(
        !invocationMargin.isNegative(),
        "OTC_INVOCATION_MARGIN_MS must not be negative, was " + invocationMargin.toMillis());
  }

  /** Reads the configuration from environment variables (Lambda's, or the local runner's). */
  public static OtcConfig fromEnvironment(Map<String, String> env) {
    Env e = new Env(env);
    Waits waits = waits(e);
    return new OtcConfig(
        e.required("OTC_MYSQL_URL"),
        e.get("OTC_MYSQL_USER", "root"),
        e.get("OTC_MYSQL_PASSWORD", ""),
        // Lambda runs one request at a time per environment; 2 covers the sweep's inline close plus
        // one
        // concurrent helper, and keeps RDS Proxy fan-out small when hundreds of environments run.
        e.intValue("OTC_DB_POOL_SIZE", 2),
        e.required("OTC_REDIS_URI"),
        Boolean.parseBoolean(e.get("OTC_REDIS_CLUSTER", "false")),
        e.get("OTC_KEY_PREFIX", "otc"),
        // 16 shards spread over a 3-shard ElastiCache cluster's slots and keep one ZSET under ~100k
        // members at 1M open orders, so a claim's ZRANGEBYSCORE stays O(log n + batch).
        e.intValue("OTC_TIMER_SHARDS", 16),
        Duration.ofSeconds(e.intValue("OTC_DEFAULT_TIMEOUT_SECONDS", 900)),
        Duration.ofSeconds(e.intValue("OTC_MAX_TIMEOUT_SECONDS", 86_400)),
        // 500 ids make one IN list and ~1,000 ledger rows: one round trip each, a 10-50 ms
        // transaction.
        e.intValue("OTC_SWEEP_BATCH", 500),
        // A claimed batch reappears after the lease if its claimer died. 30 s covers a batch's
        // WeChat step (10 s, checked) and both its transactions at their worst (2 x 9 s), and is
        // short enough that a crash delays closes little.
        Duration.ofMillis(e.intValue("OTC_CLAIM_LEASE_MS", 30_000)),
        // Idle poll: the design goal is p99 close lag < 200 ms, so wake at least every 50 ms.
        Duration.ofMillis(e.intValue("OTC_SWEEP_POLL_MS", 50)),
        // Stop looping this long before Lambda's deadline. The sweep starts a pass only when the
        // pass's WeChat step and its measured closing time fit before the margin; the margin then
        // covers what a measurement cannot: both transactions of a close (the batch, then the
        // prepaid orders WeChat cleared) at their worst, 2 x 9 s, plus 1 s to release the shard
        // leases and flush the metrics. 19 s with the defaults.
        Duration.ofMillis(
            e.intValue(
                "OTC_INVOCATION_MARGIN_MS",
                (int) waits.transaction().multipliedBy(2).plusSeconds(1).toMillis())),
        Boolean.parseBoolean(e.get("OTC_MIGRATE_ON_START", "false")),
        streamSettings(e),
        waits);
  }

  /**
   * The bounds on every wait; each default derives from the one it must fit in or outlast, and
   * Waits checks that the largest of them fit in the function's timeout.
   */
  private static Waits waits(Env e) {
    // 2 s: a row here is locked for 10-50 ms (one 500-order close transaction holds a hot SKU's
    // stock row that long), so 2 s is 40 times the longest legitimate hold; a longer wait means a
    // stuck holder, and waiting on it longer only holds the invocation. MySQL's default is 50 s.
    int lockWait = e.intValue("OTC_DB_LOCK_WAIT_SECONDS", 2);
    // 1 s above the lock wait: MySQL's lock-wait error (which Tx retries) arrives first, and only
    // a dead server or network ends a statement at the socket. 3 attempts x 3 s = 9 s, under the
    // API functions' 10 s.
    Duration socket =
        Duration.ofMillis(e.intValue("OTC_DB_SOCKET_TIMEOUT_MS", lockWait * 1_000 + 1_000));
    // WeChat answers in 100-300 ms; a TLS handshake to a far endpoint can take 1 s, hence 2 s to
    // connect; a call slower than 3 s is cheaper to give up and retry from the stream (the trade
    // is unchanged, or the re-query sees the change) than to wait out the SDK's default 10 s.
    Duration connect = Duration.ofMillis(e.intValue("OTC_WECHAT_CONNECT_TIMEOUT_MS", 2_000));
    Duration read = Duration.ofMillis(e.intValue("OTC_WECHAT_READ_TIMEOUT_MS", 3_000));
    return new Waits(
        // The API functions' 10 s (template.yaml Globals): the tightest, so the safe default.
        Duration.ofMillis(e.intValue("OTC_FUNCTION_TIMEOUT_MS", 10_000)),
        lockWait,
        socket,
        // SET on each new connection (one every 4 minutes per pooled connection). Behind RDS Proxy
        // that SET pins the connection: set false there and put the SET in the proxy's
        // initialization query; Database.pool verifies the value the connections get either way.
        Boolean.parseBoolean(e.get("OTC_DB_SET_LOCK_WAIT", "true")),
        connect,
        read,
        // A close asks WeChat twice per prepaid order (query, then close), concurrently across the
        // batch: two calls' worst case, 10 s with the defaults.
        Duration.ofMillis(
            e.intValue(
                "OTC_WECHAT_STEP_TIMEOUT_MS",
                (int) connect.plus(read).multipliedBy(2).toMillis())));
  }

  private static StreamSettings streamSettings(Env e) {
    return new StreamSettings(
        // ~170 bytes an entry: 500k entries are ~85 MB of Redis, and at 1,500 events/s (500
        // closes/s, three events an order) ~5 minutes of history, more than any pending backlog
        // a consumer fleet running every minute leaves behind.
        e.intValue("OTC_STREAM_MAXLEN", 500_000),
        // 100 entries make one close batch (one transaction of ~100 orders, 10-20 ms).
        e.intValue("OTC_STREAM_BATCH", 100),
        // 1 s: long enough that an idle consumer costs one command a second, short enough that
        // the loop sees the invocation's deadline and terminate() within a second.
        Duration.ofMillis(e.intValue("OTC_STREAM_BLOCK_MS", 1_000)),
        // Like the claim lease: far above one batch's worst case (WeChat timeouts 3 s x retries),
        // short enough that a killed consumer's entries are closed ~30 s later.
        Duration.ofMillis(e.intValue("OTC_STREAM_VISIBILITY_MS", 30_000)),
        // 5 deliveries ride out a DB failover (~30-60 s) at a 30 s visibility timeout.
        e.intValue("OTC_STREAM_MAX_DELIVERIES", 5),
        // 32 consumer names: more concurrent consumers than that only contend on the same rows.
        e.intValue("OTC_STREAM_CONSUMER_SLOTS", 32));
  }

  public OtcConfig withStream(StreamSettings settings) {
    return new OtcConfig(
        mysqlUrl,
        mysqlUser,
        mysqlPassword,
        dbPoolSize,
        redisUri,
        redisCluster,
        keyPrefix,
        timerShards,
        defaultOrderTimeout,
        maxOrderTimeout,
        sweepBatch,
        claimLease,
        sweepPoll,
        invocationMargin,
        migrateOnStart,
        settings,
        waits);
  }

  public OtcConfig withKeyPrefix(String prefix) {
    return new OtcConfig(
        mysqlUrl,
        mysqlUser,
        mysqlPassword,
        dbPoolSize,
        redisUri,
        redisCluster,
        prefix,
        timerShards,
        defaultOrderTimeout,
        maxOrderTimeout,
        sweepBatch,
        claimLease,
        sweepPoll,
        invocationMargin,
        migrateOnStart,
        stream,
        waits);
  }

  public OtcConfig withClaimLease(Duration lease) {
    return new OtcConfig(
        mysqlUrl,
        mysqlUser,
        mysqlPassword,
        dbPoolSize,
        redisUri,
        redisCluster,
        keyPrefix,
        timerShards,
        defaultOrderTimeout,
        maxOrderTimeout,
        sweepBatch,
        lease,
        sweepPoll,
        invocationMargin,
        migrateOnStart,
        stream,
        waits);
  }

  public OtcConfig withTimerShards(int shards) {
    return new OtcConfig(
        mysqlUrl,
        mysqlUser,
        mysqlPassword,
        dbPoolSize,
        redisUri,
        redisCluster,
        keyPrefix,
        shards,
        defaultOrderTimeout,
        maxOrderTimeout,
        sweepBatch,
        claimLease,
        sweepPoll,
        invocationMargin,
        migrateOnStart,
        stream,
        waits);
  }

  public OtcConfig withSweepBatch(int batch) {
    return new OtcConfig(
        mysqlUrl,
        mysqlUser,
        mysqlPassword,
        dbPoolSize,
        redisUri,
        redisCluster,
        keyPrefix,
        timerShards,
        defaultOrderTimeout,
        maxOrderTimeout,
        batch,
        claimLease,
        sweepPoll,
        invocationMargin,
        migrateOnStart,
        stream,
        waits);
  }

  public OtcConfig withWaits(Waits w) {
    return new OtcConfig(
        mysqlUrl,
        mysqlUser,
        mysqlPassword,
        dbPoolSize,
        redisUri,
        redisCluster,
        keyPrefix,
        timerShards,
        defaultOrderTimeout,
        maxOrderTimeout,
        sweepBatch,
        claimLease,
        sweepPoll,
        invocationMargin,
        migrateOnStart,
        stream,
        w);
  }

  @Override
  public String toString() {
    // Never print the password: configuration is logged at init.
    return "OtcConfig[mysqlUrl="
        + mysqlUrl
        + ", mysqlUser="
        + mysqlUser
        + ", dbPoolSize="
        + dbPoolSize
        + ", redisUri="
        + redisUri.replaceAll("//[^@/]*@", "//***@")
        + ", redisCluster="
        + redisCluster
        + ", keyPrefix="
        + keyPrefix
        + ", timerShards="
        + timerShards
        + ", defaultOrderTimeout="
        + defaultOrderTimeout
        + ", sweepBatch="
        + sweepBatch
        + ", claimLease="
        + claimLease
        + ", invocationMargin="
        + invocationMargin
        + ", "
        + waits
        + "]";
  }

  private static void require(boolean ok, String message) {
    if (!ok) {
      throw new IllegalArgumentException("invalid configuration: " + message);
    }
  }

  private record Env(Map<String, String> env) {
    String get(String name, String fallback) {
      String v = env.get(name);
      return v == null || v.isBlank() ? fallback : v.trim();
    }

    String required(String name) {
      String v = get(name, null);
      if (v == null) {
        throw new IllegalArgumentException("invalid configuration: " + name + " is not set");
      }
      return v;
    }

    int intValue(String name, int fallback) {
      String v = get(name, null);
      if (v == null) {
        return fallback;
      }
      try {
        return Integer.parseInt(v);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(
            "invalid configuration: " + name + " is not a number: '" + v + "'");
      }
    }
  }
}
