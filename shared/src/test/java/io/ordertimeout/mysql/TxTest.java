package io.ordertimeout.mysql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import io.ordertimeout.embedded.EmbeddedServers;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Tx against the real MariaDB: what commits, what rolls back, which failures are retried. */
class TxTest {
  private final EmbeddedServers servers = EmbeddedServers.get();
  private String schema;
  private HikariDataSource pool;
  private Tx tx;

  @BeforeEach
  void setUp() throws SQLException {
    schema = servers.createSchema("tx");
    pool =
        Database.pool(
            servers.jdbcUrl(schema), servers.mysqlUser(), servers.mysqlPassword(), 2, "tx-test");
    tx = new Tx(pool);
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement()) {
      s.execute("CREATE TABLE notes (id INT PRIMARY KEY, body VARCHAR(20)) ENGINE=InnoDB");
    }
  }

  @AfterEach
  void tearDown() {
    pool.close();
    servers.dropSchema(schema);
  }

  private static int insert(Connection c, int id) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("INSERT INTO notes (id, body) VALUES (?, 'x')")) {
      ps.setInt(1, id);
      return ps.executeUpdate();
    }
  }

  private long rows() {
    return tx.read(
        "count notes",
        c -> {
          try (Statement s = c.createStatement();
              ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM notes")) {
            rs.next();
            return rs.getLong(1);
          }
        });
  }

  @Test
  void workCommitsAndTheConnectionGoesBackInAutocommit() {
    int inserted = tx.inTransaction("insert note 1", c -> insert(c, 1));

    assertThat(inserted).isEqualTo(1);
    assertThat(rows()).isEqualTo(1);
    assertThat(tx.read("autocommit", Connection::getAutoCommit)).isTrue();
    assertThat(tx.dataSource()).isSameAs(pool);
  }

  @Test
  void aRuntimeFailureRollsBackEverythingTheWorkWrote() {
    assertThatThrownBy(
            () ->
                tx.inTransaction(
                    "insert then fail",
                    c -> {
                      insert(c, 1);
                      throw new IllegalStateException("order ord_1 in state PAID");
                    }))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("order ord_1 in state PAID");

    assertThat(rows()).isZero();
  }

  @Test
  void aDeadlockIsRetriedAndTheRetryCommitsOnce() {
    AtomicInteger attempts = new AtomicInteger();

    int inserted =
        tx.inTransaction(
            "insert note 2",
            c -> {
              insert(c, 2);
              if (attempts.incrementAndGet() == 1) {
                throw new SQLException("Deadlock found when trying to get lock", "40001", 1213);
              }
              return 1;
            });

    assertThat(inserted).isEqualTo(1);
    assertThat(attempts).hasValue(2);
    assertThat(rows()).isEqualTo(1);
  }

  @Test
  void aLockWaitTimeoutThatPersistsFailsAfterThreeAttemptsAsTransient() {
    AtomicInteger attempts = new AtomicInteger();

    assertThatThrownBy(
            () ->
                tx.inTransaction(
                    "reserve sku hot",
                    c -> {
                      insert(c, 10 + attempts.incrementAndGet());
                      throw new SQLException("Lock wait timeout exceeded", "HY000", 1205);
                    }))
        .isInstanceOfSatisfying(
            DataAccessException.class, e -> assertThat(e.isTransient()).isTrue())
        .hasMessageContaining("reserve sku hot failed (attempt 3, SQLState HY000, error 1205)");

    assertThat(attempts).hasValue(3);
    assertThat(rows()).isZero();
  }

  @Test
  void aConstraintViolationIsNotRetriedNorTransient() {
    tx.inTransaction("insert note 1", c -> insert(c, 1));
    AtomicInteger attempts = new AtomicInteger();

    assertThatThrownBy(
            () ->
                tx.inTransaction(
                    "insert duplicate",
                    c -> {
                      attempts.incrementAndGet();
                      insert(c, 5);
                      return insert(c, 1);
                    }))
        .isInstanceOfSatisfying(
            DataAccessException.class, e -> assertThat(e.isTransient()).isFalse())
        .hasMessageContaining("insert duplicate failed (attempt 1, SQLState 23000");

    assertThat(attempts).hasValue(1);
    assertThat(rows()).isEqualTo(1);
  }

  @Test
  void readWrapsSqlFailuresAndFlagsConnectionFailuresTransient() {
    assertThatThrownBy(
            () ->
                tx.read(
                    "load missing table",
                    c -> c.createStatement().executeQuery("SELECT * FROM nope")))
        .isInstanceOfSatisfying(
            DataAccessException.class, e -> assertThat(e.isTransient()).isFalse())
        .hasMessageStartingWith("load missing table failed (SQLState 42S02)");
    assertThatThrownBy(
            () ->
                tx.read(
                    "ping",
                    c -> {
                      throw new SQLTransientConnectionException("link down", "08S01");
                    }))
        .isInstanceOfSatisfying(
            DataAccessException.class, e -> assertThat(e.isTransient()).isTrue());
  }

  @Test
  void failureClassificationFollowsMySqlCodesAndSqlStates() {
    assertThat(Tx.isRetryable(new SQLException("x", "HY000", 1213))).isTrue();
    assertThat(Tx.isRetryable(new SQLException("x", "40001", 0))).isTrue();
    assertThat(Tx.isRetryable(new SQLException("x", "23000", 1062))).isFalse();
    assertThat(Tx.isConnectionFailure(new SQLException("x", "08003"))).isTrue();
    assertThat(Tx.isConnectionFailure(new SQLException("x", (String) null))).isFalse();
  }
}
