package io.ordertimeout.mysql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.PlaceOrderCommand;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.embedded.InvariantChecker;
import io.ordertimeout.testing.MigratedSchema;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.wiring.Components;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A password rotation in the middle of a run on the real MariaDB: ALTER USER, then the secret (as
 * Secrets Manager's rotation orders them), then every pooled connection retired. The pool re-reads
 * the login on MySQL's error 1045 and the run completes.
 */
class PasswordRotationTest {
  private static final int ORDERS = 120;

  private final EmbeddedServers servers = EmbeddedServers.get();
  private final String user = "rot_" + UUID.randomUUID().toString().substring(0, 8);
  private String schema;

  @BeforeEach
  void createUser() throws SQLException {
    schema = MigratedSchema.create(servers, "rotation");
    for (String host : new String[] {"localhost", "%"}) {
      asRoot("CREATE USER '" + user + "'@'" + host + "' IDENTIFIED BY 'first-pw'");
      asRoot("GRANT ALL ON `" + schema + "`.* TO '" + user + "'@'" + host + "'");
    }
  }

  @AfterEach
  void dropUser() throws SQLException {
    asRoot("DROP USER IF EXISTS '" + user + "'@'localhost', '" + user + "'@'%'");
    servers.dropSchema(schema);
  }

  private void asRoot(String sql) throws SQLException {
    try (Connection c =
            DriverManager.getConnection(
                servers.jdbcUrl(schema), servers.mysqlUser(), servers.mysqlPassword());
        Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  private void alterPassword(String password) throws SQLException {
    for (String host : new String[] {"localhost", "%"}) {
      asRoot("ALTER USER '" + user + "'@'" + host + "' IDENTIFIED BY '" + password + "'");
    }
  }

  @Test
  void placementsAndClosesCarryOnThroughARotation() throws Exception {
    AtomicReference<DbLogin> secret = new AtomicReference<>(new DbLogin(user, "first-pw"));
    var config =
        TestStack.testConfig(servers, schema, servers.newKeyPrefix("rotation")).toBuilder()
            .mysqlUser(user)
            .mysqlPassword("first-pw")
            .build();
    try (Components app = new Components(config, null, null, secret::get)) {
      new Tx(app.dataSource())
          .inTransaction(
              "seed",
              c ->
                  c.createStatement()
                      .executeUpdate(
                          "INSERT INTO stock (tenant_id, sku_id, available, total) VALUES ('default', 'sku-r', 1000, 1000)"));
      List<Throwable> errors = new CopyOnWriteArrayList<>();
      AtomicInteger done = new AtomicInteger();
      // each order is placed; every second one is cancelled (closed) right after
      CompletableFuture<Void> run =
          CompletableFuture.runAsync(
              () -> {
                for (int i = 0; i < ORDERS; i++) {
                  String id = String.format("rot-%04d", i);
                  try {
                    app.placeOrders()
                        .place(
                            new PlaceOrderCommand(
                                id,
                                "default",
                                "u-" + i,
                                List.of(new OrderItem("sku-r", 2)),
                                null,
                                100,
                                600));
                    if (i % 2 == 1) {
                      app.closer().close(TenantIds.DEFAULT, List.of(id), CloseReason.USER_CANCEL);
                    }
                  } catch (RuntimeException e) {
                    errors.add(e);
                  }
                  done.incrementAndGet();
                }
              });
      await(() -> done.get() >= ORDERS / 3);

      alterPassword("second-pw");
      secret.set(new DbLogin(user, "second-pw"));
      // every connection from now on is new, as when maxLifetime retires them after a rotation
      app.dataSource().getHikariPoolMXBean().softEvictConnections();

      run.get(60, TimeUnit.SECONDS);
      assertThat(errors).isEmpty();
      assertThat(done.get()).isEqualTo(ORDERS);
      RotatingDataSource logins = Database.logins(app.dataSource());
      assertThat(logins.login().password()).isEqualTo("second-pw");
      assertThat(logins.reloads()).isPositive();
      assertThat(count(app, "SELECT COUNT(*) FROM orders WHERE status = 'UNPAID'"))
          .isEqualTo(ORDERS / 2);
      assertThat(
              count(
                  app,
                  "SELECT COUNT(*) FROM orders WHERE status = 'CLOSED'"
                      + " AND close_reason = 'USER_CANCEL' AND MOD(CAST(SUBSTRING(order_id, 5)"
                      + " AS UNSIGNED), 2) = 1"))
          .isEqualTo(ORDERS / 2);
      assertThat(count(app, "SELECT reserved FROM stock WHERE sku_id = 'sku-r'"))
          .isEqualTo(ORDERS / 2 * 2);
      new InvariantChecker(app.dataSource()).assertHolds();
      // the pooled connections are the new password's: the old one is refused by the server
      assertThatThrownBy(
              () -> DriverManager.getConnection(servers.jdbcUrl(schema), user, "first-pw").close())
          .isInstanceOfSatisfying(
              SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(1045));
    }
  }

  @Tag("integration")
  @Test
  void aPoolWithAFixedLoginCannotConnectAfterTheRotation() throws SQLException {
    DbLogin first = new DbLogin(user, "first-pw");
    try (HikariDataSource pool =
        Database.pool(
            servers.jdbcUrl(schema), first, LoginSource.fixed(first), 2, "fixed", 2, true)) {
      alterPassword("second-pw");
      pool.getHikariPoolMXBean().softEvictConnections();

      assertThatThrownBy(() -> pool.getConnection().close())
          .isInstanceOf(SQLException.class)
          .satisfies(e -> assertThat(RotatingDataSource.isAccessDenied((SQLException) e)).isTrue());
      assertThat(Database.logins(pool).reloads())
          .as("re-read (at most once a second); the source still held the refused login")
          .isPositive();
    }
  }

  private static long count(Components app, String sql) {
    return new Tx(app.dataSource())
        .read(
            sql,
            c -> {
              try (var rs = c.createStatement().executeQuery(sql)) {
                rs.next();
                return rs.getLong(1);
              }
            });
  }

  private static void await(java.util.function.BooleanSupplier condition)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("condition within 60 s").isLessThan(deadline);
      Thread.sleep(10);
    }
  }
}
