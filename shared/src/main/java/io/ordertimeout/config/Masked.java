package io.ordertimeout.config;

import java.util.regex.Pattern;

/**
 * Connection strings with their credentials masked, for the one init log line (and any message that
 * names an endpoint). Masking parses rather than guesses at a password's characters: a password may
 * hold {@code / @ : % ? #} unencoded, so everything between {@code //} and the last {@code @} is
 * the user information, whatever it holds. A string with an {@code @} later (in a path or a query)
 * loses its host too: masking too much is safe, too little is a leak.
 */
public final class Masked {
  static final String MASK = "***";

  /**
   * A JDBC or driver property whose name holds "password" (password, password1..3,
   * trustStorePassword, clientCertificateKeyStorePassword...), up to the next separator.
   */
  private static final Pattern PASSWORD_PROPERTY =
      Pattern.compile("(?i)([?&;,(]\\s*[A-Za-z0-9_.]*password[A-Za-z0-9_.]*\\s*=)[^&;,)]*");

  private Masked() {}

  /**
   * {@code scheme://user:password@host/...?password=...} with {@code user:password} and every
   * password property masked (properties first: a password in the query may hold an {@code @}).
   */
  public static String uri(String uri) {
    return uri == null ? null : userInfo(PASSWORD_PROPERTY.matcher(uri).replaceAll("$1" + MASK));
  }

  /** A JDBC URL with its user information and every password property masked. */
  public static String jdbcUrl(String url) {
    return uri(url);
  }

  private static String userInfo(String uri) {
    int start = uri.indexOf("//");
    int at = uri.lastIndexOf('@');
    if (start < 0 || at < start + 2) {
      return uri;
    }
    return uri.substring(0, start + 2) + MASK + uri.substring(at);
  }
}
