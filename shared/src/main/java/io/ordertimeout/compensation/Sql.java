package io.ordertimeout.compensation;

import io.ordertimeout.mysql.DbTime;
import io.ordertimeout.mysql.Statements;
import io.ordertimeout.mysql.Tx;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDateTime;
import java.util.Collection;
import java.util.Collections;
import java.util.List;

/** Small JDBC helpers of the compensation package. */
final class Sql {
  private Sql() {}

  /** Reads one row of a result. */
  @FunctionalInterface
  interface Rows {
    void read(ResultSet rs) throws SQLException;
  }

  /**
   * Runs {@code sql} (its IN list written as %s) over {@code values} in as many statements as keep
   * each under RDS Proxy's 16 KB (mysql.Statements), in the order given; a page of 1,000 ids of 32
   * characters would be ~35 KB in one. Inside a {@link #snapshot} every part reads the same
   * snapshot.
   */
  static void selectIn(Connection c, String sql, List<String> values, Rows rows)
      throws SQLException {
    selectIn(c, sql, null, values, rows);
  }

  /**
   * As {@link #selectIn(Connection, String, List, Rows)} with {@code tenantId} bound first (the
   * statement's {@code tenant_id = ?} before its IN list); null binds nothing.
   */
  static void selectIn(Connection c, String sql, String tenantId, List<String> values, Rows rows)
      throws SQLException {
    for (List<String> part : Statements.inLists(sql, values)) {
      try (PreparedStatement ps =
          c.prepareStatement(String.format(sql, placeholders(part.size())))) {
        int first = 1;
        if (tenantId != null) {
          ps.setString(first++, tenantId);
        }
        bind(ps, first, part);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            rows.read(rs);
          }
        }
      }
    }
  }

  static String placeholders(int n) {
    return String.join(",", Collections.nCopies(n, "?"));
  }

  static int bind(PreparedStatement ps, int from, Collection<String> values) throws SQLException {
    int i = from;
    for (String v : values) {
      ps.setString(i++, v);
    }
    return i;
  }

  /**
   * Runs reads in one REPEATABLE READ transaction: every statement sees the same snapshot, so an
   * order's status, its ledger rows and the stock rows are compared as one commit left them, never
   * half-way through a concurrent close (which would look like drift).
   */
  static <T> T snapshot(Tx tx, String what, Tx.Work<T> work) {
    return tx.inTransaction(
        what,
        c -> {
          c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
          return work.run(c);
        });
  }

  /** The database's now minus {@code millis}: windows are measured on the DB clock. */
  static LocalDateTime dbNowMinus(Connection c, long millis) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT TIMESTAMPADD(MICROSECOND, ?, NOW(3)) AS t")) {
      ps.setLong(1, -millis * 1_000);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return DbTime.utc(rs, "t");
      }
    }
  }

  static List<String> strings(List<?> values) {
    return values.stream().map(String::valueOf).toList();
  }
}
