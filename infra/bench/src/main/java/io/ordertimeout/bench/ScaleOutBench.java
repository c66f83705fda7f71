package io.ordertimeout.bench;

import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.ordertimeout.config.OtcConfig;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.EmbeddedRedisCluster;
import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.embedded.InvariantChecker;
import io.ordertimeout.wiring.Components;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import javax.sql.DataSource;

/**
 * Scale-out: K sweeper processes ({@link ScaleOutSweeper}, each a child JVM wired as the
 * timeout-sweep function is) on an embedded 3-master Redis Cluster with {@code --shards} (64) timer
 * shards and the embedded MariaDB, for each K of {@code --processes} (1,2,4). Per K a fresh schema
 * and key prefix get {@code --orders} (200,000) UNPAID orders of {@code --skus} (1,000) SKUs due
 * evenly over {@code --spread-seconds} (10; 0: all due at once, a backlog) from t0; the K processes
 * start, wire up, and are released together before t0.
 *
 * <p>Per K: closes/s (closed / (last close - t0)), close lag p50/p99/max (closed_at - expire_at
 * from MariaDB), drain time, shards each process held (its last lease refresh, and the split of the
 * lease keys sampled every 250 ms), CPU of each sweeper, of MariaDB and of the Redis nodes, and the
 * load average before and after. Exits non-zero unless every order closed exactly once (one closed
 * event each, no timer left) and the invariants (stock released once) hold.
 *
 * <p>Run: {@code ./mvnw -q -pl infra/bench -am verify -DskipTests -Pbench
 * -Dbench.main=ScaleOutBench -Dbench.args="--orders 200000 --processes 1,2,4"}
 */
public final class ScaleOutBench {
  /** The sweep function's own job: each process takes every free shard lease. */
  static final String PRODUCTION = "production";

  /** Process i of K leases only shards s % K == i (PartitionedSweep): an even share. */
  static final String PARTITIONED = "partitioned";

  private ScaleOutBench() {}

  /** The run's options; see the class comment. */
  record Settings(
      int orders,
      int spreadSeconds,
      List<Integer> processes,
      int shards,
      int pool,
      int skus,
      long maxDrainMillis,
      List<String> leases,
      Path logDir) {
    static Settings parse(String[] args) {
      String counts = "1,2,4";
      String leases = "production,partitioned";
      String logDir = "bench-results";
      for (int i = 0; i + 1 < args.length; i++) {
        logDir = args[i].equals("--log-dir") ? args[i + 1] : logDir;
        counts = args[i].equals("--processes") ? args[i + 1] : counts;
        leases = args[i].equals("--leases") ? args[i + 1] : leases;
      }
      Settings settings =
          new Settings(
              SweepBench.intArg(args, "--orders", 200_000),
              SweepBench.intArg(args, "--spread-seconds", 10),
              Arrays.stream(counts.split(",")).map(String::trim).map(Integer::valueOf).toList(),
              SweepBench.intArg(args, "--shards", 64),
              SweepBench.intArg(args, "--pool", 2),
              SweepBench.intArg(args, "--skus", 1_000),
              SweepBench.intArg(args, "--max-drain-seconds", 600) * 1_000L,
              Arrays.stream(leases.split(",")).map(String::trim).toList(),
              Path.of(logDir));
      for (String mode : settings.leases()) {
        if (!mode.equals(PRODUCTION) && !mode.equals(PARTITIONED)) {
          throw new IllegalArgumentException("--leases: production or partitioned, not " + mode);
        }
      }
      return settings;
    }
  }

  public static void main(String[] args) {
    Settings settings = Settings.parse(args);
    boolean ok = true;
    try (EmbeddedRedisCluster cluster = EmbeddedRedisCluster.start(3)) {
      EmbeddedServers servers = EmbeddedServers.get();
      List<ScaleOutRun.Result> results = new ArrayList<>();
      for (String leases : settings.leases()) {
        for (int k : settings.processes()) {
          if (k == 1 && leases.equals(PARTITIONED) && settings.leases().contains(PRODUCTION)) {
            continue; // one process holds every shard either way
          }
          ScaleOutRun.Result r = new ScaleOutRun(settings, servers, cluster, k, leases).run();
          results.add(r);
          // each row as soon as it is measured: a later K that fails must not take it along
          System.out.print(ScaleOutRun.table(List.of(r)));
          ok &= r.exactlyOnce();
        }
      }
      System.out.print(ScaleOutRun.table(results));
    } catch (Exception | Error e) {
      // as FairnessBench: exec:java would wait for the embedded MariaDB's watcher thread forever
      e.printStackTrace();
      System.exit(2);
      return;
    }
    System.out.println(ok ? "exactly once: OK" : "exactly once: FAILED");
    System.exit(ok ? 0 : 1);
  }

  /** The deployment's environment for a K's schema and key prefix, cluster mode, 64 shards. */
  static Map<String, String> environment(
      Settings s, EmbeddedServers servers, EmbeddedRedisCluster cluster, String schema) {
    Map<String, String> env = new LinkedHashMap<>();
    env.put("OTC_MYSQL_URL", servers.jdbcUrl(schema));
    env.put("OTC_MYSQL_USER", servers.mysqlUser());
    env.put("OTC_MYSQL_PASSWORD", servers.mysqlPassword());
    env.put("OTC_DB_POOL_SIZE", Integer.toString(s.pool()));
    env.put("OTC_REDIS_URI", cluster.uri());
    env.put("OTC_REDIS_CLUSTER", "true");
    env.put("OTC_TIMER_SHARDS", Integer.toString(s.shards()));
    env.put("OTC_KEY_PREFIX", servers.newKeyPrefix("scale"));
    // the sweep function's Timeout (template.yaml), as FairnessBench
    env.put("OTC_FUNCTION_TIMEOUT_MS", "150000");
    return env;
  }

  /** The orders, due evenly over the spread (offset ms from t0), SKUs round-robin. */
  static List<Scenario.Order> orders(Settings s) {
    List<Scenario.Order> out = new ArrayList<>(s.orders());
    long spreadMs = s.spreadSeconds() * 1_000L;
    for (int i = 0; i < s.orders(); i++) {
      out.add(
          new Scenario.Order(
              String.format("so-%08d", i),
              "sku-" + (i % s.skus()),
              1,
              spreadMs * i / s.orders(),
              Scenario.Fate.ABANDONED,
              -1));
    }
    return out;
  }

  /** Schedules the orders' timers at t0 + offset, 50,000 a call as FairnessBench does. */
  static void schedule(Components app, List<Scenario.Order> orders, long t0) {
    Map<String, Long> chunk = new HashMap<>();
    for (Scenario.Order o : orders) {
      chunk.put(o.id(), t0 + o.dueOffsetMillis());
      if (chunk.size() == 50_000) {
        app.timers().scheduleAll(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, chunk);
        chunk.clear();
      }
    }
    if (!chunk.isEmpty()) {
      app.timers().scheduleAll(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, chunk);
    }
  }

  /** t0: after the move and the scheduling (2 s plus 30 us per order), as FairnessBench. */
  static long moveToT0(DataSource ds, int orders) throws Exception {
    long t0 =
        BenchSeeder.dbNow(ds)
            .plusNanos((2_000 + orders * 30L / 1_000) * 1_000_000)
            .toInstant(ZoneOffset.UTC)
            .toEpochMilli();
    BenchSeeder.moveTo(
        ds,
        LocalDateTime.ofEpochSecond(t0 / 1_000, (int) (t0 % 1_000) * 1_000_000, ZoneOffset.UTC));
    return t0;
  }

  /**
   * How many shards each lease holder has now: the lease keys' values (tokens), counted per token,
   * largest first; "free" counts the shards nobody holds.
   */
  static String split(Components app) {
    RedisClusterCommands<String, String> redis = app.redis().sync();
    Map<String, Integer> perToken = new TreeMap<>();
    int free = 0;
    for (int shard = 0; shard < app.timers().shards(); shard++) {
      String token = redis.get(app.timers().leaseKey(shard));
      if (token == null) {
        free++;
      } else {
        perToken.merge(token, 1, Integer::sum);
      }
    }
    List<Integer> counts = new ArrayList<>(perToken.values());
    counts.sort((a, b) -> b - a);
    StringBuilder out = new StringBuilder();
    counts.forEach(c -> out.append(out.length() == 0 ? "" : "/").append(c));
    return (out.length() == 0 ? "-" : out) + (free > 0 ? " (+" + free + " free)" : "");
  }

  /** Where the children's logs go: {@code --log-dir}/scaleout-{leases}-K{k}-{i}.log. */
  static Path logOf(Settings s, String leases, int k, int i) throws java.io.IOException {
    Files.createDirectories(s.logDir());
    return s.logDir().resolve("scaleout-" + leases + "-K" + k + "-" + i + ".log");
  }

  static OtcConfig config(Map<String, String> env) {
    Map<String, String> parent = new HashMap<>(env);
    // the bench's own environment makes the schema; the sweepers start against it
    parent.put("OTC_MIGRATE_ON_START", "true");
    return OtcConfig.fromEnvironment(parent);
  }

  /** Counts in a row of InvariantChecker-style output, for the table. */
  static String violationText(List<String> violations) {
    return violations.isEmpty() ? "OK" : "FAILED (" + violations.get(0) + ")";
  }

  static List<String> check(DataSource ds) {
    return new InvariantChecker(ds).violations();
  }
}
