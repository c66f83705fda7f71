package io.ordertimeout.mysql;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.close.CloseResult;
import io.ordertimeout.compensation.CompensationReport;
import io.ordertimeout.compensation.CompensationSettings;
import io.ordertimeout.config.OtcConfig;
import io.ordertimeout.config.Waits;
import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.BulkSeeder;
import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.embedded.InvariantChecker;
import io.ordertimeout.testing.MigratedSchema;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.wiring.Components;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * What a 500-order close batch over 400 SKUs and a compensation pass over those orders send, read
 * from MariaDB's general log (written to a table for the test): no statement text above RDS Proxy's
 * 16 KB pinning threshold, and no SET but of the session variables RDS Proxy tracks without pinning
 * (AWS, "Avoiding pinning an RDS Proxy": What RDS Proxy tracks for RDS for MariaDB and RDS for
 * MySQL databases). The lock wait comes from the server, as behind the proxy (its initialization
 * query or the parameter group), so the pool runs with OTC_DB_SET_LOCK_WAIT=false.
 */
// alone in its JVM while it runs (the fast tier runs classes in parallel): it sets server globals
// (general log, lock wait)
@Isolated
class RdsProxyPinningTest {
  /** The variables the AWS page lists as tracked; setting them at session scope does not pin. */
  private static final Set<String> TRACKED =
      Set.of(
          "autocommit",
          "auto_increment_increment",
          "character_set_client",
          "character_set_database",
          "character_set_filesystem",
          "character_set_connection",
          "character_set_results",
          "character_set_server",
          "collation_connection",
          "collation_database",
          "collation_server",
          "interactive_timeout",
          "net_write_timeout",
          "query_cache_type",
          "session_track_schema",
          "sql_mode",
          "time_zone",
          "transaction_isolation",
          "tx_isolation",
          "transaction_read_only",
          "tx_read_only",
          "wait_timeout");

  private static final Pattern ASSIGNED =
      Pattern.compile("(?:@@session\\.|@@|session\\s+|local\\s+)?([a-z_]+)\\s*=");

  private final EmbeddedServers servers = EmbeddedServers.get();
  private final String user = "pin_" + UUID.randomUUID().toString().substring(0, 8);
  private String schema;
  private long lockWaitBefore;

  @BeforeEach
  void setUp() throws SQLException {
    schema = MigratedSchema.create(servers, "pinning");
    for (String host : new String[] {"localhost", "%"}) {
      asRoot("CREATE USER '" + user + "'@'" + host + "' IDENTIFIED BY 'pin-pw'");
      asRoot("GRANT ALL ON `" + schema + "`.* TO '" + user + "'@'" + host + "'");
    }
    lockWaitBefore = longAsRoot("SELECT @@GLOBAL.innodb_lock_wait_timeout");
    // what the proxy's initialization query or the parameter group provides on AWS
    asRoot("SET GLOBAL innodb_lock_wait_timeout = 2");
  }

  @AfterEach
  void tearDown() throws SQLException {
    try {
      asRoot("SET GLOBAL general_log = 0");
      asRoot("SET GLOBAL log_output = 'FILE'");
      asRoot("SET GLOBAL innodb_lock_wait_timeout = " + lockWaitBefore);
    } finally {
      asRoot("DROP USER IF EXISTS '" + user + "'@'localhost', '" + user + "'@'%'");
      servers.dropSchema(schema);
    }
  }

  /** The stack as behind the proxy: the test's own user, the lock wait left to the server. */
  private OtcConfig config() {
    OtcConfig base = TestStack.testConfig(servers, schema, servers.newKeyPrefix("pinning"));
    Waits w = base.waits();
    return base.toBuilder()
        .mysqlUser(user)
        .mysqlPassword("pin-pw")
        .waits(
            new Waits(
                w.functionTimeout(),
                2,
                w.socketTimeout(),
                false,
                w.weChatConnectTimeout(),
                w.weChatReadTimeout(),
                w.weChatStep()))
        .build();
  }

  private static void seedSkus(Components app) {
    new Tx(app.dataSource())
        .inTransaction(
            "seed",
            c -> {
              try (Statement s = c.createStatement()) {
                for (int k = 0; k < SKUS; k++) {
                  s.executeUpdate(
                      "INSERT INTO stock (tenant_id, sku_id, available, total) VALUES ('default', '"
                          + sku(k)
                          + "', 10000, 10000)");
                }
              }
              return null;
            });
  }

  /**
   * A steady-state sweep's batch (a few dozen orders, a line each): its closing transaction is
   * eight round trips, each a statement of its own (a closing transaction costs mostly per
   * statement: docs/benchmarks/sweep-profile.md).
   */
  @Test
  void aSteadyStateCloseBatchIsEightRoundTrips() throws SQLException {
    try (Components app = new Components(config())) {
      seedSkus(app);
      Map<String, BulkSeeder.Line> orders = new LinkedHashMap<>();
      for (int i = 0; i < 33; i++) {
        orders.put(String.format("steady%08d", i), new BulkSeeder.Line(sku(i), 2));
      }
      BulkSeeder.seedUnpaid(app.dataSource(), orders, Duration.ofMinutes(-1));
      app.dataSource().getHikariPoolMXBean().softEvictConnections();
      asRoot("SET GLOBAL log_output = 'TABLE'");
      asRoot("TRUNCATE TABLE mysql.general_log");
      asRoot("SET GLOBAL general_log = 1");

      CloseResult result =
          app.closer()
              .close(TenantIds.DEFAULT, new ArrayList<>(orders.keySet()), CloseReason.TIMEOUT);

      asRoot("SET GLOBAL general_log = 0");
      assertThat(result.closed()).hasSize(33);
      List<String> sent = logged();
      int begin = sent.indexOf("SET autocommit=0");
      assertThat(begin).as("the transaction's start in %s", sent).isGreaterThanOrEqualTo(0);
      assertThat(sent.subList(begin, sent.size()))
          .as("the closing transaction, statement by statement")
          .satisfiesExactly(
              q -> assertThat(q).isEqualTo("SET autocommit=0"),
              q -> assertThat(q).startsWith("SELECT order_id, status").endsWith("FOR UPDATE"),
              q -> assertThat(q).startsWith("UPDATE orders SET status = 'CLOSED'"),
              q -> assertThat(q).startsWith("SELECT order_id, sku_id, quantity FROM order_items"),
              q -> assertThat(q).startsWith("INSERT INTO stock_movements"),
              q -> assertThat(q).startsWith("INSERT INTO outbox"),
              q -> assertThat(q).startsWith("UPDATE stock SET available"),
              q ->
                  assertThat(q)
                      .as("the commit, going back to autocommit")
                      .isEqualTo("SET autocommit=1"));
      assertThat(
              firstRow(
                  app,
                  "SELECT COUNT(*), SUM(quantity) FROM stock_movements WHERE kind = 'RELEASE'"))
          .as("RELEASE rows, released")
          .containsExactly(33L, 66L);
      new InvariantChecker(app.dataSource()).assertHolds();
    }
  }

  @Test
  void aFiveHundredOrderCloseAndACompensationPassSendNoStatementOver16KbAndOnlyTrackedSets()
      throws SQLException {
    try (Components app = new Components(config())) {
      seedSkus(app);
      // 32-character order ids (the column's width) and 64-character SKU ids: the widest rows
      Map<String, BulkSeeder.Line> orders = new LinkedHashMap<>();
      for (int i = 0; i < 500; i++) {
        orders.put(
            String.format("wx2026113012345678901234%08d", i),
            new BulkSeeder.Line(sku(i % SKUS), 3));
      }
      BulkSeeder.seedUnpaid(app.dataSource(), orders, Duration.ofMinutes(-1));
      List<String> ids = new ArrayList<>(orders.keySet());
      // new connections from here on, so their setup statements are logged too
      app.dataSource().getHikariPoolMXBean().softEvictConnections();
      asRoot("SET GLOBAL log_output = 'TABLE'");
      asRoot("TRUNCATE TABLE mysql.general_log");
      asRoot("SET GLOBAL general_log = 1");

      CloseResult result = app.closer().close(TenantIds.DEFAULT, ids, CloseReason.TIMEOUT);
      // and a compensation pass, whose ledger audit reads the 500 orders' rows by id
      CompensationReport audit = app.newCompensator(CompensationSettings.defaults()).run();

      asRoot("SET GLOBAL general_log = 0");
      assertThat(result.closed()).hasSize(500);
      assertThat(audit.count("orders_audited")).isEqualTo(500);
      assertThat(audit.flags()).isEmpty();
      assertThat(audit.failures()).isEmpty();
      List<String> sent = logged();
      assertThat(sent).as("the close's statements were logged").isNotEmpty();
      assertThat(sent.stream().mapToInt(Statements::utf8).max().orElseThrow())
          .as("longest statement text, bytes")
          .isLessThanOrEqualTo(Statements.MAX_BYTES);
      assertThat(sent.stream().filter(q -> q.contains("FOR UPDATE")).count())
          .as("the 500 ids' locking read, in parts")
          .isGreaterThan(1);
      assertThat(sent.stream().filter(q -> q.contains("'RELEASE'")).count())
          .as("the RELEASE rows, in parts")
          .isGreaterThan(1);
      assertThat(sent.stream().filter(q -> q.startsWith("INSERT INTO outbox")).count())
          .as("the closed events, in parts")
          .isGreaterThan(1);
      List<String> stockReleases =
          sent.stream().filter(q -> q.startsWith("UPDATE stock SET available")).toList();
      assertThat(stockReleases)
          .as("the 400 SKUs' release: a statement per part under 16 KB, not one per SKU")
          .hasSizeBetween(2, 20);
      assertThat(stockReleases.stream().mapToInt(q -> q.split(" WHEN ", -1).length - 1).sum())
          .as("three WHENs per SKU over the parts")
          .isEqualTo(3 * SKUS);
      assertThat(sent)
          .as(
              "the driver's read-only check before each batch, a round trip each (useLocalSessionState)")
          .noneMatch(q -> q.contains("transaction_read_only") || q.contains("tx_read_only"));
      List<String> sets =
          sent.stream().filter(q -> q.toLowerCase(Locale.ROOT).startsWith("set ")).toList();
      assertThat(sets).as("the connections' session settings").isNotEmpty();
      for (String set : sets) {
        assertThat(tracked(set)).as("SET that RDS Proxy tracks: %s", set).isTrue();
      }
      assertThat(firstRow(app, "SELECT COUNT(*) FROM stock_movements WHERE kind = 'RELEASE'"))
          .containsExactly(500L);
      assertThat(
              firstRow(
                  app, "SELECT COUNT(DISTINCT event_id) FROM outbox WHERE event_type = 'closed'"))
          .as("a closed event per order, each its own id")
          .containsExactly(500L);
      new InvariantChecker(app.dataSource()).assertHolds();
    }
  }

  /** The first row of {@code sql}'s answer, every column as a number, read through the pool. */
  private static long[] firstRow(Components app, String sql) throws SQLException {
    try (Connection c = app.dataSource().getConnection();
        ResultSet rs = c.createStatement().executeQuery(sql)) {
      assertThat(rs.next()).as("a row of %s", sql).isTrue();
      long[] row = new long[rs.getMetaData().getColumnCount()];
      for (int i = 0; i < row.length; i++) {
        row[i] = rs.getLong(i + 1);
      }
      return row;
    }
  }

  /** SKUs of the close: enough of the widest ids that their release needs several statements. */
  private static final int SKUS = 400;

  private static String sku(int k) {
    return String.format("sku-%060d", k);
  }

  /** SET NAMES, SET SESSION TRANSACTION ..., or assignments of tracked variables only. */
  static boolean tracked(String set) {
    String s = set.toLowerCase(Locale.ROOT).replaceAll("\\s+", " ").trim();
    if (s.startsWith("set names ") || s.startsWith("set character set ")) {
      return true;
    }
    if (s.startsWith("set session transaction ")) {
      return true; // session scope: tracked (next-transaction scope, plain SET TRANSACTION, pins)
    }
    Matcher m = ASSIGNED.matcher(s.substring(4));
    boolean any = false;
    while (m.find()) {
      any = true;
      if (!TRACKED.contains(m.group(1))) {
        return false;
      }
    }
    return any;
  }

  /** The pool user's statements, leading driver comments removed. */
  private List<String> logged() throws SQLException {
    List<String> out = new ArrayList<>();
    try (Connection c = rootConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT CONVERT(argument USING utf8mb4) FROM mysql.general_log"
                    + " WHERE command_type IN ('Query', 'Execute') AND user_host LIKE ?"
                    + " ORDER BY event_time")) {
      ps.setString(1, user + "[%");
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(rs.getString(1).replaceFirst("^\\s*(/\\*.*?\\*/\\s*)+", ""));
        }
      }
    }
    return out;
  }

  private Connection rootConnection() throws SQLException {
    return DriverManager.getConnection(
        servers.jdbcUrl(schema), servers.mysqlUser(), servers.mysqlPassword());
  }

  private void asRoot(String sql) throws SQLException {
    try (Connection c = rootConnection();
        Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  private long longAsRoot(String sql) throws SQLException {
    try (Connection c = rootConnection();
        ResultSet rs = c.createStatement().executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
