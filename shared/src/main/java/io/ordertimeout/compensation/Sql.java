package io.ordertimeout.compensation;

import io.ordertimeout.mysql.DbTime;
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
