package io.ordertimeout.bench;

import io.ordertimeout.compensation.CompensationReport;
import io.ordertimeout.compensation.CompensationSettings;
import io.ordertimeout.config.OtcConfig;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.BulkSeeder;
import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.embedded.InvariantChecker;
import io.ordertimeout.wiring.Components;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * How long one compensation pass takes over N open orders (default 100,000 UNPAID orders due in 30
 * minutes, 100 SKUs plus a hot one with 30% of the orders), on the embedded Redis and MariaDB, with
 * no payment gateway. Two passes: the steady state (every timer present, every snapshot and ledger
 * consistent) and after Redis lost every timer (each order rescheduled). Prints figures; asserts
 * nothing but the invariants.
 *
 * <p>Run: {@code ./mvnw -q -pl infra/bench -am verify -DskipTests -Pbench
 * -Dbench.main=CompensationBench -Dbench.args="--orders 100000"}
 */
public final class CompensationBench {
  private CompensationBench() {}

  public static void main(String[] args) throws Exception {
    int orders = intArg(args, "--orders", 100_000);
    EmbeddedServers servers = EmbeddedServers.get();
    String schema = servers.createSchema("bench-comp");
    try (Components app = new Components(config(servers, schema))) {
      long seeded = System.nanoTime();
      seed(app, orders);
      System.out.printf(
          "seeded %,d orders in %,d ms%n", orders, (System.nanoTime() - seeded) / 1_000_000);
      CompensationSettings settings = CompensationSettings.defaults();
      report("steady state (all timers present)", app.newCompensator(settings).run());
      deleteTimers(app);
      report("after Redis lost every timer", app.newCompensator(settings).run());
      System.out.printf(
          "timers after the pass: %,d%n",
          app.timers().size(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT));
      new InvariantChecker(app.dataSource()).assertHolds();
      System.out.println("invariants hold");
    } finally {
      servers.dropSchema(schema);
    }
    System.exit(0);
  }

  private static OtcConfig config(EmbeddedServers servers, String schema) {
    Map<String, String> env = new HashMap<>();
    env.put("OTC_MYSQL_URL", servers.jdbcUrl(schema));
    env.put("OTC_MYSQL_USER", servers.mysqlUser());
    env.put("OTC_MYSQL_PASSWORD", servers.mysqlPassword());
    env.put("OTC_DB_POOL_SIZE", "4");
    env.put("OTC_REDIS_URI", servers.redisUri());
    env.put("OTC_KEY_PREFIX", servers.newKeyPrefix("bench-comp"));
    env.put("OTC_MIGRATE_ON_START", "true");
    return OtcConfig.fromEnvironment(env);
  }

  private static void seed(Components app, int orders) throws SQLException {
    try (Connection c = app.dataSource().getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO stock (tenant_id, sku_id, available, total) VALUES ('default', ?, ?, ?)")) {
      for (int i = 0; i <= 100; i++) {
        ps.setString(1, i == 100 ? "hot" : "sku-" + i);
        ps.setLong(2, 1_000_000);
        ps.setLong(3, 1_000_000);
        ps.addBatch();
      }
      ps.executeBatch();
    }
    // 20,000 orders per seeding transaction keep each one's undo log small
    for (int from = 0; from < orders; from += 20_000) {
      Map<String, BulkSeeder.Line> lines = new LinkedHashMap<>();
      for (int i = from; i < Math.min(orders, from + 20_000); i++) {
        String sku = i % 10 < 3 ? "hot" : "sku-" + (i % 100);
        lines.put(String.format("bench-%08d", i), new BulkSeeder.Line(sku, 1 + i % 3));
      }
      app.timers()
          .scheduleAll(
              TenantIds.DEFAULT,
              DeadlineKind.PAYMENT_TIMEOUT,
              BulkSeeder.seedUnpaid(app.dataSource(), lines, Duration.ofMinutes(30)));
    }
  }

  private static void deleteTimers(Components app) {
    var redis = app.redis().sync();
    for (int shard = 0; shard < app.timers().shards(); shard++) {
      redis.del(app.timers().timersKey(TenantIds.DEFAULT, shard, DeadlineKind.PAYMENT_TIMEOUT));
    }
  }

  private static void report(String label, CompensationReport report) {
    System.out.printf(
        "%s: one pass %,d ms, %,d pages; counts %s; flags %d, repairs %d, failures %s%n",
        label,
        report.durationMs(),
        report.pagesScanned(),
        report.counts(),
        report.flags().size(),
        report.repairs().size(),
        List.copyOf(report.failures()));
  }

  static int intArg(String[] args, String name, int fallback) {
    for (int i = 0; i + 1 < args.length; i++) {
      if (args[i].equals(name)) {
        return Integer.parseInt(args[i + 1]);
      }
    }
    return fallback;
  }
}
