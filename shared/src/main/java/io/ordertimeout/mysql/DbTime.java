package io.ordertimeout.mysql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;

/**
 * The one place where times cross JDBC. Every DATETIME(3) column holds UTC wall-clock time, and
 * every session runs in UTC (see {@link ServerCheck}), so {@code NOW(3)} is UTC too.
 *
 * <p>Why strings on the way in: Connector/J (9.4) converts a {@link java.sql.Timestamp} from the
 * JVM's default zone into the session zone, so a Timestamp made from a UTC wall-clock time lands 8
 * hours early on a JVM in Asia/Shanghai; and it drops the fraction of every {@link LocalDateTime},
 * Timestamp or {@link Instant} sent to a server whose handshake version is below 5.6.4, which is
 * every MariaDB 10.x (it announces itself as {@code 5.5.5-10.x}): a deadline of .114 was stored as
 * .000. A {@code 'yyyy-MM-dd HH:mm:ss.SSS'} string is converted by neither; the server parses it
 * into the DATETIME(3) column, or compares it as one, exactly.
 *
 * <p>Why {@link LocalDateTime} on the way out: {@code getObject(column, LocalDateTime.class)} is
 * the column's wall-clock value as stored, untouched by the JVM's or the session's zone.
 */
public final class DbTime {
  /**
   * Milliseconds, like the columns: the sub-millisecond part is cut, as {@link
   * Instant#toEpochMilli()} cuts it for the Redis timer scores, so MySQL and Redis agree.
   */
  private static final DateTimeFormatter LITERAL =
      DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss.SSS");

  private DbTime() {}

  /** Binds {@code instant} (null: SQL NULL) as its UTC wall-clock time. */
  public static void bind(PreparedStatement ps, int index, Instant instant) throws SQLException {
    bind(ps, index, instant == null ? null : LocalDateTime.ofInstant(instant, ZoneOffset.UTC));
  }

  /** Binds a UTC wall-clock time (null: SQL NULL), e.g. a keyset cursor read by {@link #utc}. */
  public static void bind(PreparedStatement ps, int index, LocalDateTime utc) throws SQLException {
    if (utc == null) {
      ps.setNull(index, Types.VARCHAR);
    } else {
      ps.setString(index, literal(utc));
    }
  }

  /** The SQL literal text of a UTC wall-clock time, without quotes. */
  public static String literal(LocalDateTime utc) {
    return utc.truncatedTo(ChronoUnit.MILLIS).format(LITERAL);
  }

  /** A DATETIME column as the instant it holds in UTC; null stays null. */
  public static Instant instant(ResultSet rs, String column) throws SQLException {
    LocalDateTime value = utc(rs, column);
    return value == null ? null : value.toInstant(ZoneOffset.UTC);
  }

  /** A DATETIME column's UTC wall-clock value as stored; null stays null. */
  public static LocalDateTime utc(ResultSet rs, String column) throws SQLException {
    return rs.getObject(column, LocalDateTime.class);
  }

  /** The database's clock, the one that decides deadlines (docs/concepts/design.md, clocks). */
  public static Instant now(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT NOW(3) AS now");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return instant(rs, "now");
    }
  }
}
