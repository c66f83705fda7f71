package io.ordertimeout.mysql;

import java.util.Locale;
import java.util.Map;

/**
 * The TLS a JDBC URL asks for, and the rule for it on AWS: the server's certificate is verified,
 * chain and host name. Without an {@code sslMode}, Connector/J uses PREFERRED (encrypts when the
 * server offers TLS, verifies nothing), so a host that answers for the database's name would get
 * the password and every order. RDS and RDS Proxy certificates chain to Amazon's root CAs, which
 * the JDK's trust store holds, so full verification needs no trust store of our own.
 *
 * <p>The local stack and the tests talk to a MariaDB on loopback without TLS: they are the
 * exception, because they are not on Lambda ({@code AWS_LAMBDA_FUNCTION_NAME} unset).
 */
public final class JdbcTransport {
  /** Connector/J's full verification (chain and host name). */
  static final String MYSQL_VERIFIED = "VERIFY_IDENTITY";

  /** MariaDB Connector/J's name for the same. */
  static final String MARIADB_VERIFIED = "verify-full";

  /**
   * Options, with the value that turns TLS or its verification off: Connector/J 5's names, which
   * 8.x maps onto sslMode when no sslMode is given, and MariaDB's trust-all switch. Refused even
   * beside sslMode, so a URL never reads as weaker than it connects (or the other way round).
   */
  private static final Map<String, String> WEAKENING =
      Map.of(
          "usessl", "false",
          "requiressl", "false",
          "verifyservercertificate", "false",
          "trustservercertificate", "true");

  private JdbcTransport() {}

  /**
   * The URL a function on AWS connects with: {@code sslMode=VERIFY_IDENTITY} (MariaDB: {@code
   * verify-full}) added when the URL names no mode; refused, naming the function, when it names a
   * weaker one or sets a legacy TLS option.
   */
  public static String requireVerified(String jdbcUrl, String functionName) {
    boolean mariadb = jdbcUrl.startsWith("jdbc:mariadb:");
    String wanted = mariadb ? MARIADB_VERIFIED : MYSQL_VERIFIED;
    String mode = null;
    for (String option : options(jdbcUrl)) {
      int eq = option.indexOf('=');
      String key = (eq < 0 ? option : option.substring(0, eq)).toLowerCase(Locale.ROOT);
      String value = eq < 0 ? "" : option.substring(eq + 1);
      if (key.equals("sslmode")) {
        mode = value;
      } else if (value.equalsIgnoreCase(WEAKENING.get(key))) {
        throw refused(functionName, option, wanted);
      }
    }
    if (mode == null) {
      return jdbcUrl + (jdbcUrl.indexOf('?') < 0 ? '?' : '&') + "sslMode=" + wanted;
    }
    if (!mode.equalsIgnoreCase(wanted)) {
      throw refused(functionName, "sslMode=" + mode, wanted);
    }
    return jdbcUrl;
  }

  private static String[] options(String jdbcUrl) {
    int q = jdbcUrl.indexOf('?');
    return q < 0 ? new String[0] : jdbcUrl.substring(q + 1).split("&");
  }

  private static IllegalArgumentException refused(
      String functionName, String option, String wanted) {
    return new IllegalArgumentException(
        "invalid configuration: the JDBC URL of Lambda function "
            + functionName
            + " sets "
            + option
            + ", which does not verify the database's certificate; on AWS the URL must use"
            + " sslMode="
            + wanted
            + " (or name no TLS option, and it is added): RDS and RDS Proxy certificates chain to"
            + " Amazon's root CAs in the JDK's trust store");
  }
}
