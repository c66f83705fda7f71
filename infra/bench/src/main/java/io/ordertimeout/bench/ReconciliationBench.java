package io.ordertimeout.bench;

import io.ordertimeout.config.OtcConfig;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.BulkSeeder;
import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.embedded.wechat.TradeBillWriter;
import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import io.ordertimeout.reconcile.Reconciler;
import io.ordertimeout.reconcile.ReconciliationReport;
import io.ordertimeout.wechat.GatewaySettings;
import io.ordertimeout.wechat.MerchantCredentials;
import io.ordertimeout.wechat.StaticMerchantDirectory;
import io.ordertimeout.wechat.WeChatPayGateway;
import io.ordertimeout.wiring.Components;
import java.io.BufferedWriter;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The cost of one day's reconciliation: a trade bill of N lines (default 100,000) in WeChat's
 * format, written by the simulator's {@link TradeBillWriter} and planted as yesterday's bill,
 * reconciled by the production {@link Reconciler} through the SDK (tradebill, gzip download, SHA1)
 * against N seeded orders on the embedded MariaDB. Of the lines, 1% are payments whose notification
 * was lost (UNPAID orders the paid path settles), 0.1% trades of no order; as many PAID orders as
 * those have no line. Then the same day again (nothing left to do). Prints wall time, the
 * allocations of every thread of this JVM (the simulator's, which gzips the bill, included) and the
 * heap's peak; checks the report's counts (exit 1 when they are wrong).
 *
 * <p>Run: {@code ./mvnw -q -pl infra/bench -am verify -DskipTests -Pbench
 * -Dbench.main=ReconciliationBench -Dbench.args="--lines 100000"}
 */
public final class ReconciliationBench {
  private ReconciliationBench() {}

  public static void main(String[] args) throws Exception {
    int lines = intArg(args, "--lines", 100_000);
    int lost = lines / 100;
    int stray = lines / 1_000;
    EmbeddedServers servers = EmbeddedServers.get();
    String schema = servers.createSchema("bench-recon");
    LocalDate day = LocalDate.now(Reconciler.SHANGHAI).minusDays(1);
    Instant paidAt = day.atTime(12, 0).atZone(Reconciler.SHANGHAI).toInstant();
    Path bill = Files.createTempFile("bench-tradebill-", ".csv");
    boolean ok;
    try (WeChatPaySimulator wechat = WeChatPaySimulator.start();
        Components app = new Components(config(servers, schema), null, gateway(wechat))) {
      long t = System.nanoTime();
      Map<String, Long> amounts = seed(app, wechat.mchid(), lines, lost, paidAt);
      System.out.printf("seeded %,d orders in %,d ms%n", amounts.size(), millisSince(t));
      t = System.nanoTime();
      long written = writeBill(bill, wechat, amounts, stray, paidAt);
      System.out.printf(
          "wrote a %,d-line bill (%,d bytes) in %,d ms%n",
          written, Files.size(bill), millisSince(t));
      wechat.tradeBills().plant(day, bill);
      ReconciliationReport first = measure("first run", app, day);
      ReconciliationReport again = measure("re-run", app, day);
      Map<String, Long> expected = new HashMap<>();
      expected.put("MATCHED", (long) lines - stray - lost);
      expected.put("APPLIED", (long) lost);
      expected.put("NO_ORDER", (long) stray);
      expected.put("NOT_IN_BILL", (long) stray);
      ok = first.counts().equals(expected) && again.counts().equals(first.counts());
      System.out.println(ok ? "counts as expected" : "WRONG COUNTS, expected " + expected);
    } finally {
      Files.deleteIfExists(bill);
      servers.dropSchema(schema);
    }
    System.exit(ok ? 0 : 1);
  }

  private static ReconciliationReport measure(String what, Components app, LocalDate day) {
    System.gc();
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      pool.resetPeakUsage();
    }
    long heapBefore = usedHeap();
    JvmMeter meter = JvmMeter.start();
    long t = System.nanoTime();
    ReconciliationReport report = app.reconciler().reconcile(TenantIds.DEFAULT, day);
    long wall = millisSince(t);
    JvmMeter.Figures f = meter.read();
    System.out.printf(
        "%s: %,d lines in %,d ms (%,.0f lines/s); allocated %,d MB (%,d B/line); GCs %d (%d ms);"
            + " heap used before %,d MB, peak of the heap pools %,d MB; counts %s, flags %d%n",
        what,
        report.billLines(),
        wall,
        report.billLines() * 1000.0 / Math.max(1, wall),
        f.allocatedBytes() >> 20,
        f.allocatedBytes() / Math.max(1, report.billLines()),
        f.gcCount(),
        f.gcMillis(),
        heapBefore >> 20,
        peakHeap() >> 20,
        report.counts(),
        report.flags());
    return report;
  }

  /**
   * N orders: the first {@code lost} UNPAID (their payment's notification was lost), the rest PAID
   * at {@code paidAt} by SQL (the reconciler reads orders and bindings only; the paid path's ledger
   * rows of these are not written), each bound to its id as out_trade_no. Answers id -> amount.
   */
  private static Map<String, Long> seed(
      Components app, String mchid, int orders, int lost, Instant paidAt) throws SQLException {
    try (Connection c = app.dataSource().getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO stock (tenant_id, sku_id, available, total)"
                    + " VALUES ('default', 'sku-1', 10000000, 10000000)")) {
      ps.executeUpdate();
    }
    for (int from = 0; from < orders; from += 20_000) {
      Map<String, BulkSeeder.Line> chunk = new LinkedHashMap<>();
      for (int i = from; i < Math.min(orders, from + 20_000); i++) {
        chunk.put(id(i), new BulkSeeder.Line("sku-1", 1));
      }
      BulkSeeder.seedUnpaid(app.dataSource(), chunk, Duration.ofHours(2));
    }
    try (Connection c = app.dataSource().getConnection()) {
      sql(
          c,
          "UPDATE orders SET status = 'PAID', paid_at = ?,"
              + " transaction_id = CONCAT('42', LPAD(SUBSTRING(order_id, 7), 26, '0'))"
              + " WHERE order_id >= ?",
          paidAt.toString().replace("T", " ").replace("Z", ""),
          id(lost));
      sql(
          c,
          "INSERT INTO wechat_trades (tenant_id, order_id, mchid, out_trade_no)"
              + " SELECT tenant_id, order_id, ?, order_id FROM orders",
          mchid);
      Map<String, Long> amounts = new LinkedHashMap<>();
      try (PreparedStatement ps =
              c.prepareStatement("SELECT order_id, amount_fen FROM orders ORDER BY order_id");
          ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          amounts.put(rs.getString(1), rs.getLong(2));
        }
      }
      return amounts;
    }
  }

  /** One line per order but the last {@code stray} ones, and {@code stray} trades of no order. */
  private static long writeBill(
      Path file, WeChatPaySimulator wechat, Map<String, Long> amounts, int stray, Instant paidAt)
      throws IOException {
    try (BufferedWriter out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      TradeBillWriter bill = new TradeBillWriter(out, wechat.appid(), wechat.mchid());
      int n = 0;
      int billed = amounts.size() - stray;
      for (Map.Entry<String, Long> order : amounts.entrySet()) {
        if (n++ == billed) {
          break;
        }
        String id = order.getKey();
        bill.payment(
            paidAt,
            "42" + "0".repeat(26 - (id.length() - 6)) + id.substring(6),
            id,
            "openid",
            order.getValue(),
            "bench");
      }
      for (int i = 0; i < stray; i++) {
        bill.payment(
            paidAt, "43" + String.format("%026d", i), "stray-" + i, "openid", 100, "stray");
      }
      return bill.finish();
    }
  }

  private static String id(int i) {
    return String.format("recon-%08d", i);
  }

  private static void sql(Connection c, String sql, String... args) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setString(i + 1, args[i]);
      }
      ps.executeUpdate();
    }
  }

  private static WeChatPayGateway gateway(WeChatPaySimulator wechat) {
    MerchantCredentials merchant =
        new MerchantCredentials(
            wechat.mchid(),
            wechat.appid(),
            wechat.merchantSerialNumber(),
            wechat.merchantPrivateKeyPem(),
            wechat.apiV3Key(),
            wechat.platformPublicKeyId(),
            wechat.platformPublicKeyPem(),
            "https://mall.example.com/wechatpay/notify");
    return new WeChatPayGateway(
        new StaticMerchantDirectory(Map.of(TenantIds.DEFAULT, merchant)),
        Clock.systemUTC(),
        GatewaySettings.production()
            .withReadTimeout(Duration.ofSeconds(60))
            .withBaseUrl(wechat.baseUrl()));
  }

  private static OtcConfig config(EmbeddedServers servers, String schema) {
    Map<String, String> env = new HashMap<>();
    env.put("OTC_MYSQL_URL", servers.jdbcUrl(schema));
    env.put("OTC_MYSQL_USER", servers.mysqlUser());
    env.put("OTC_MYSQL_PASSWORD", servers.mysqlPassword());
    env.put("OTC_DB_POOL_SIZE", "4");
    env.put("OTC_REDIS_URI", servers.redisUri());
    env.put("OTC_KEY_PREFIX", servers.newKeyPrefix("bench-recon"));
    env.put("OTC_MIGRATE_ON_START", "true");
    return OtcConfig.fromEnvironment(env);
  }

  private static long usedHeap() {
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  /** The sum of the heap pools' peaks since the reset: an upper bound of the heap's own peak. */
  private static long peakHeap() {
    long peak = 0;
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP) {
        peak += pool.getPeakUsage().getUsed();
      }
    }
    return peak;
  }

  private static long millisSince(long nanos) {
    return (System.nanoTime() - nanos) / 1_000_000;
  }

  private static int intArg(String[] args, String name, int fallback) {
    for (int i = 0; i + 1 < args.length; i++) {
      if (args[i].equals(name)) {
        return Integer.parseInt(args[i + 1]);
      }
    }
    return fallback;
  }
}
