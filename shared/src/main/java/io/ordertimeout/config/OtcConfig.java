package io.ordertimeout.config;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * The one configuration object of a function, read from the environment once at init (here, in
 * {@link #fromEnvironment}), validated once, composed of one small record per concern.
 *
 * <p>Every tunable has a default chosen for the Lambda sizes in template.yaml; the comment on each
 * says why. Each record validates its own fields; this one checks what crosses them (the claim
 * lease against the WeChat step, the default order timeout against the maximum). Contradictions
 * fail fast with the offending variable named, so a bad deploy dies at init, not mid-close. Tests
 * change fields through {@link #toBuilder()}, which validates the result the same way. {@link
 * #toString()} lists every property, secrets masked, HikariCP-style, for the one init log.
 *
 * <p>Over 300 lines: the builder (18 one-line setters) and every default with its reason and
 * numbers, kept in the one place the environment is read.
 */
public record OtcConfig(
    DatabaseSettings database,
    RedisSettings redis,
    SweepSettings sweep,
    Duration defaultOrderTimeout,
    Duration maxOrderTimeout,
    Duration invocationMargin,
    StreamSettings stream,
    Waits waits,
    DeadlineSettings deadlines,
    TenantSettings tenants,
    AdminSettings admins,
    Duration userPayingLimit) {

  /**
   * A payer at WeChat's password sheet finishes or leaves it within a minute or two, and WeChat's
   * advice for a code payment answered USERPAYING is to query it again every 10 s or so and give up
   * (revoke it) after about 30 s: 5 minutes past the deadline is well past both, so a slow payer is
   * still waited for, while a walked-away one holds stock and a coupon at the 5 s retry for that
   * long only.
   */
  static final Duration DEFAULT_USER_PAYING_LIMIT = Duration.ofMinutes(5);

  public OtcConfig {
    Objects.requireNonNull(tenants, "tenant settings");
    Objects.requireNonNull(admins, "admin settings");
    Objects.requireNonNull(deadlines, "deadline settings");
    Objects.requireNonNull(database, "database settings");
    Objects.requireNonNull(redis, "redis settings");
    Objects.requireNonNull(sweep, "sweep settings");
    Objects.requireNonNull(stream, "stream settings");
    Objects.requireNonNull(waits, "waits");
    Objects.requireNonNull(defaultOrderTimeout, "OTC_DEFAULT_TIMEOUT_SECONDS");
    Objects.requireNonNull(maxOrderTimeout, "OTC_MAX_TIMEOUT_SECONDS");
    Objects.requireNonNull(invocationMargin, "OTC_INVOCATION_MARGIN_MS");
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
        sweep.claimLease().compareTo(waits.weChatStep()) >= 0,
        "OTC_CLAIM_LEASE_MS ("
            + sweep.claimLease().toMillis()
            + ") must cover the longest step of a close, the WeChat step"
            + " OTC_WECHAT_STEP_TIMEOUT_MS ("
            + waits.weChatStep().toMillis()
            + "): a batch still asking WeChat when its lease ends is claimed again and asked twice");
    Objects.requireNonNull(userPayingLimit, "OTC_USERPAYING_LIMIT_MS");
    require(
        !userPayingLimit.isNegative() && userPayingLimit.compareTo(Duration.ofDays(1)) <= 0,
        "OTC_USERPAYING_LIMIT_MS must be 0..86400000, was " + userPayingLimit.toMillis());
    require(
        !invocationMargin.isNegative(),
        "OTC_INVOCATION_MARGIN_MS must not be negative, was " + invocationMargin.toMillis());
  }

  /** Reads the configuration from environment variables (Lambda's, or the local runner's). */
  public static OtcConfig fromEnvironment(Map<String, String> env) {
    Env e = new Env(env);
    Waits waits = waits(e);
    return new Builder()
            .mysqlUrl(e.required("OTC_MYSQL_URL"))
            .mysqlUser(e.get("OTC_MYSQL_USER", "root"))
            .mysqlPassword(e.get("OTC_MYSQL_PASSWORD", ""))
            // Lambda runs one request at a time per environment; 2 covers the sweep's inline close
            // plus
            // one concurrent helper, and keeps RDS Proxy fan-out small when hundreds of
            // environments
            // run.
            .dbPoolSize(e.intValue("OTC_DB_POOL_SIZE", 2))
            .redisUri(e.required("OTC_REDIS_URI"))
            .redisCluster(Boolean.parseBoolean(e.get("OTC_REDIS_CLUSTER", "false")))
            .keyPrefix(e.get("OTC_KEY_PREFIX", "otc"))
            // 16 shards spread over a 3-shard ElastiCache cluster's slots and keep one ZSET under
            // ~100k
            // members at 1M open orders, so a claim's ZRANGEBYSCORE stays O(log n + batch).
            .timerShards(e.intValue("OTC_TIMER_SHARDS", 16))
            .defaultOrderTimeout(Duration.ofSeconds(e.intValue("OTC_DEFAULT_TIMEOUT_SECONDS", 900)))
            .maxOrderTimeout(Duration.ofSeconds(e.intValue("OTC_MAX_TIMEOUT_SECONDS", 86_400)))
            // 500 ids make one IN list and ~1,000 ledger rows: one round trip each, a 10-50 ms
            // transaction.
            .sweepBatch(e.intValue("OTC_SWEEP_BATCH", 500))
            // A claimed batch reappears after the lease if its claimer died. 30 s covers a batch's
            // WeChat step (10 s, checked) and both its transactions at their worst (2 x 9 s), and
            // is
            // short enough that a crash delays closes little.
            .claimLease(Duration.ofMillis(e.intValue("OTC_CLAIM_LEASE_MS", 30_000)))
            // Idle poll: the design goal is p99 close lag < 200 ms, so wake at least every 50 ms.
            .sweepPoll(Duration.ofMillis(e.intValue("OTC_SWEEP_POLL_MS", 50)))
            // One schedule starts one run a minute: each run sweeps until the next one has taken
            // its shards (docs/concepts/architecture.md, coverage and the hand-over). More
            // schedules or processes
            // sweeping at once set their count, so that many runs share the shards.
            .sweepRuns(e.intValue("OTC_SWEEP_RUNS", 1))
            // After a pass that claimed orders the next starts no sooner than this: steady traffic
            // closes in transactions of tens of orders instead of a few (docs/benchmarks).
            .sweepGather(
                Duration.ofMillis(
                    e.intValue(
                        "OTC_SWEEP_GATHER_MS", (int) SweepSettings.DEFAULT_GATHER.toMillis())))
            // Stop looping this long before Lambda's deadline. The sweep starts a pass only when
            // the
            // pass's WeChat step and its measured closing time fit before the margin; the margin
            // then
            // covers what a measurement cannot: both transactions of a close (the batch, then the
            // prepaid orders WeChat cleared) at their worst, 2 x 9 s, plus 1 s to release the shard
            // leases and flush the metrics. 19 s with the defaults.
            .invocationMargin(
                Duration.ofMillis(
                    e.intValue(
                        "OTC_INVOCATION_MARGIN_MS",
                        (int) waits.transaction().multipliedBy(2).plusSeconds(1).toMillis())))
            // How long past its deadline a payer still at the password sheet (USERPAYING) is
            // waited for at the 5 s retry; past it, flagged and asked every 5 min (see the
            // constant's reason).
            .userPayingLimit(
                Duration.ofMillis(
                    e.intValue(
                        "OTC_USERPAYING_LIMIT_MS", (int) DEFAULT_USER_PAYING_LIMIT.toMillis())))
            .migrateOnStart(Boolean.parseBoolean(e.get("OTC_MIGRATE_ON_START", "false")))
            .stream(streamSettings(e))
            .waits(waits)
            .deadlines(deadlineSettings(e))
            // unset: every caller acts for the tenant "default", as before tenants were scoped
            .tenants(
                TenantSettings.parse(
                    e.get("OTC_TENANT_PRINCIPALS", null), e.get("OTC_PROBE_PRINCIPAL", null)))
            // unset: nobody may call the admin API (deny by default)
            .admins(
                AdminSettings.parse(
                    e.get("OTC_ADMIN_PRINCIPALS", null), e.get("OTC_PROBE_PRINCIPAL", null)))
            .build();
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

  private static DeadlineSettings deadlineSettings(Env e) {
    DeadlineSettings d = DeadlineSettings.DEFAULTS;
    return new DeadlineSettings(
        DeadlineSettings.parse(
            "OTC_RECEIPT_PERIOD", e.get("OTC_RECEIPT_PERIOD", null), d.receiptPeriod()),
        DeadlineSettings.parse(
            "OTC_RECEIPT_EXTENSION", e.get("OTC_RECEIPT_EXTENSION", null), d.receiptExtension()),
        DeadlineSettings.parse(
            "OTC_AFTER_SALE_WINDOW", e.get("OTC_AFTER_SALE_WINDOW", null), d.afterSaleWindow()),
        e.intValue("OTC_DEADLINE_BATCH", d.kindBatch()));
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
        e.intValue("OTC_STREAM_CONSUMER_SLOTS", 32),
        // One schedule starts one run a minute: each run reads until the next one has joined
        // (docs/concepts/architecture.md, coverage and the hand-over); more schedules reading at
        // once set their
        // count.
        e.intValue("OTC_STREAM_RUNS", 1));
  }

  public String mysqlUrl() {
    return database.url();
  }

  public String mysqlUser() {
    return database.user();
  }

  public String mysqlPassword() {
    return database.password();
  }

  public int dbPoolSize() {
    return database.poolSize();
  }

  public boolean migrateOnStart() {
    return database.migrateOnStart();
  }

  public String redisUri() {
    return redis.uri();
  }

  public boolean redisCluster() {
    return redis.cluster();
  }

  public String keyPrefix() {
    return redis.keyPrefix();
  }

  public int timerShards() {
    return redis.timerShards();
  }

  public int sweepBatch() {
    return sweep.batch();
  }

  public Duration claimLease() {
    return sweep.claimLease();
  }

  public Duration sweepPoll() {
    return sweep.poll();
  }

  /** A builder holding this configuration's values, to change some and validate again. */
  public Builder toBuilder() {
    return new Builder()
            .mysqlUrl(mysqlUrl())
            .mysqlUser(mysqlUser())
            .mysqlPassword(mysqlPassword())
            .dbPoolSize(dbPoolSize())
            .migrateOnStart(migrateOnStart())
            .redisUri(redisUri())
            .redisCluster(redisCluster())
            .keyPrefix(keyPrefix())
            .timerShards(timerShards())
            .sweepBatch(sweepBatch())
            .claimLease(claimLease())
            .sweepPoll(sweepPoll())
            .sweepRuns(sweep.runs())
            .sweepGather(sweep.gather())
            .defaultOrderTimeout(defaultOrderTimeout)
            .maxOrderTimeout(maxOrderTimeout)
            .invocationMargin(invocationMargin)
            .stream(stream)
            .waits(waits)
            .deadlines(deadlines)
            .tenants(tenants)
            .admins(admins)
            .userPayingLimit(userPayingLimit);
  }

  /** Every property, once, secrets masked: the init log line an operator reads after a deploy. */
  @Override
  public String toString() {
    return "OtcConfig["
        + database
        + ", "
        + redis
        + ", "
        + sweep
        + ", defaultOrderTimeout="
        + defaultOrderTimeout
        + ", maxOrderTimeout="
        + maxOrderTimeout
        + ", invocationMargin="
        + invocationMargin
        + ", "
        + stream
        + ", "
        + waits
        + ", "
        + deadlines
        + ", "
        + tenants
        + ", "
        + admins
        + ", userPayingLimit="
        + userPayingLimit
        + "]";
  }

  static void require(boolean ok, String message) {
    if (!ok) {
      throw new IllegalArgumentException("invalid configuration: " + message);
    }
  }

  /** Collects the flat values; {@link #build()} composes and validates the records. */
  public static final class Builder {
    // no defaults here: fromEnvironment is the one place they live, with the reason for each
    private String mysqlUrl;
    private String mysqlUser;
    private String mysqlPassword;
    private int dbPoolSize;
    private boolean migrateOnStart;
    private String redisUri;
    private boolean redisCluster;
    private String keyPrefix;
    private int timerShards;
    private int sweepBatch;
    private Duration claimLease;
    private Duration sweepPoll;
    // likewise below: configurations built in code sweep with one run at a time
    private int sweepRuns = 1;
    private Duration sweepGather = SweepSettings.DEFAULT_GATHER;
    private Duration defaultOrderTimeout;
    private Duration maxOrderTimeout;
    private Duration invocationMargin;
    private StreamSettings stream;
    private Waits waits;
    // the one exception to "no defaults here": configurations built in code before the deadlines
    // existed (tests, the bench) get DeadlineSettings.DEFAULTS, the values fromEnvironment falls
    // back to
    private DeadlineSettings deadlines = DeadlineSettings.DEFAULTS;
    // likewise: configurations built in code get the unset mapping (the default tenant only)
    private TenantSettings tenants = TenantSettings.UNSET;
    // and nobody may call the admin API
    private AdminSettings admins = AdminSettings.NOBODY;
    // and the USERPAYING limit fromEnvironment falls back to
    private Duration userPayingLimit = DEFAULT_USER_PAYING_LIMIT;

    public Builder mysqlUrl(String v) {
      mysqlUrl = v;
      return this;
    }

    public Builder mysqlUser(String v) {
      mysqlUser = v;
      return this;
    }

    public Builder mysqlPassword(String v) {
      mysqlPassword = v;
      return this;
    }

    public Builder dbPoolSize(int v) {
      dbPoolSize = v;
      return this;
    }

    public Builder migrateOnStart(boolean v) {
      migrateOnStart = v;
      return this;
    }

    public Builder redisUri(String v) {
      redisUri = v;
      return this;
    }

    public Builder redisCluster(boolean v) {
      redisCluster = v;
      return this;
    }

    public Builder keyPrefix(String v) {
      keyPrefix = v;
      return this;
    }

    public Builder timerShards(int v) {
      timerShards = v;
      return this;
    }

    public Builder sweepBatch(int v) {
      sweepBatch = v;
      return this;
    }

    public Builder claimLease(Duration v) {
      claimLease = v;
      return this;
    }

    public Builder sweepPoll(Duration v) {
      sweepPoll = v;
      return this;
    }

    public Builder sweepGather(Duration v) {
      sweepGather = v;
      return this;
    }

    public Builder sweepRuns(int v) {
      sweepRuns = v;
      return this;
    }

    public Builder defaultOrderTimeout(Duration v) {
      defaultOrderTimeout = v;
      return this;
    }

    public Builder maxOrderTimeout(Duration v) {
      maxOrderTimeout = v;
      return this;
    }

    public Builder invocationMargin(Duration v) {
      invocationMargin = v;
      return this;
    }

    public Builder stream(StreamSettings v) {
      stream = v;
      return this;
    }

    public Builder waits(Waits v) {
      waits = v;
      return this;
    }

    public Builder deadlines(DeadlineSettings v) {
      deadlines = v;
      return this;
    }

    public Builder tenants(TenantSettings v) {
      tenants = v;
      return this;
    }

    public Builder admins(AdminSettings v) {
      admins = v;
      return this;
    }

    public Builder userPayingLimit(Duration v) {
      userPayingLimit = v;
      return this;
    }

    /** The current stream settings, to derive changed ones: {@code b.stream(b.stream().with..)}. */
    public StreamSettings stream() {
      return stream;
    }

    /** The current waits, to derive changed ones: {@code b.waits(b.waits().withWeChatStep(..))}. */
    public Waits waits() {
      return waits;
    }

    public OtcConfig build() {
      return new OtcConfig(
          new DatabaseSettings(mysqlUrl, mysqlUser, mysqlPassword, dbPoolSize, migrateOnStart),
          new RedisSettings(redisUri, redisCluster, keyPrefix, timerShards),
          new SweepSettings(sweepBatch, claimLease, sweepPoll, sweepRuns, sweepGather),
          defaultOrderTimeout,
          maxOrderTimeout,
          invocationMargin,
          stream,
          waits,
          deadlines,
          tenants,
          admins,
          userPayingLimit);
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
