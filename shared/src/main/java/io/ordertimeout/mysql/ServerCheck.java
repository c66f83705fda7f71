package io.ordertimeout.mysql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDateTime;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * Refuses, at init, a MySQL server or session this code would silently get wrong: an unsupported
 * server version, a session whose NOW(3) is not UTC, or a driver that loses milliseconds.
 *
 * <p>Supported: MariaDB 10.11 and later (10.11 LTS, 11.x), as the migrations declare; MySQL 8.0.19
 * and later (8.0, 8.4, 9.x; 8.0.16 is the first to enforce the schema's CHECK constraints and
 * 8.0.19 the first to accept the migrations' {@code ALTER TABLE ... DROP CONSTRAINT}), which covers
 * RDS for MySQL 8 and Aurora MySQL 3. The suite runs on MariaDB 11.4 (embedded) and was run on
 * MariaDB 10.11.19 (Debian 12, infra/external-servers.sh); MySQL itself is not run here.
 */
public final class ServerCheck {
  /** A server's version as {@code SELECT VERSION()} tells it, e.g. {@code 10.11.19-MariaDB-0}. */
  record Version(String text, boolean mariaDb, int major, int minor, int patch) {
    boolean atLeast(int major, int minor, int patch) {
      if (this.major != major) {
        return this.major > major;
      }
      if (this.minor != minor) {
        return this.minor > minor;
      }
      return this.patch >= patch;
    }

    String product() {
      return mariaDb ? "MariaDB" : "MySQL";
    }
  }

  /** Thrown at init; the message names the server's version or the session's zone. */
  public static final class UnsupportedServerException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    UnsupportedServerException(String message) {
      super(message);
    }
  }

  static final String SUPPORTED = "MariaDB 10.11+ or MySQL 8.0.19+";

  /**
   * Major.minor.patch at the start; the handshake's {@code 5.5.5-} prefix of MariaDB 10.x is
   * skipped. A version without a patch number (Aurora's {@code 8.0.mysql_aurora.3.05.2}) is judged
   * by major.minor alone.
   */
  private static final Pattern VERSION =
      Pattern.compile("^(?:5\\.5\\.5-)?(\\d+)\\.(\\d+)(?:\\.(\\d+))?");

  /** A time with milliseconds that must come back as bound: the driver keeps fractions. */
  private static final LocalDateTime PROBE = LocalDateTime.of(2000, 1, 2, 3, 4, 5, 114_000_000);

  private ServerCheck() {}

  /**
   * Checks the server behind {@code dataSource} on one connection; returns its version text.
   *
   * @throws UnsupportedServerException what is wrong and what to change
   */
  public static String verify(DataSource dataSource) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT VERSION() AS version, @@session.time_zone AS zone,"
                    + " TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(), NOW()) AS offset_s,"
                    + " CAST(? AS DATETIME(3)) AS probe")) {
      DbTime.bind(ps, 1, PROBE);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        String version = rs.getString("version");
        requireSupported(version);
        long offsetSeconds = rs.getLong("offset_s");
        if (offsetSeconds != 0) {
          throw new UnsupportedServerException(
              "the MySQL session's time zone is '"
                  + rs.getString("zone")
                  + "' (NOW() is "
                  + offsetSeconds
                  + " s from UTC) on "
                  + version
                  + ": every DATETIME column holds UTC; keep connectionTimeZone=UTC and"
                  + " forceConnectionTimeZoneToSession=true in OTC_MYSQL_URL");
        }
        LocalDateTime probe = DbTime.utc(rs, "probe");
        if (!PROBE.equals(probe)) {
          throw new UnsupportedServerException(
              "a time bound as "
                  + DbTime.literal(PROBE)
                  + " came back as "
                  + probe
                  + " from "
                  + version
                  + ": the driver or server drops milliseconds");
        }
        return version;
      }
    } catch (SQLException e) {
      throw new DataAccessException("could not check the MySQL server's version", e, false);
    }
  }

  /** Throws unless {@code versionText} (as {@code SELECT VERSION()} answers) is supported. */
  static Version requireSupported(String versionText) {
    Version v = parse(versionText);
    boolean supported = v != null && (v.mariaDb() ? v.atLeast(10, 11, 0) : v.atLeast(8, 0, 19));
    if (!supported) {
      throw new UnsupportedServerException(
          "unsupported MySQL server "
              + (v == null ? "" : v.product() + " ")
              + "'"
              + versionText
              + "': order-timeout needs "
              + SUPPORTED);
    }
    return v;
  }

  static Version parse(String versionText) {
    if (versionText == null) {
      return null;
    }
    Matcher m = VERSION.matcher(versionText);
    if (!m.find()) {
      return null;
    }
    return new Version(
        versionText,
        versionText.toLowerCase(java.util.Locale.ROOT).contains("mariadb"),
        Integer.parseInt(m.group(1)),
        Integer.parseInt(m.group(2)),
        m.group(3) == null ? Integer.MAX_VALUE : Integer.parseInt(m.group(3)));
  }
}
