package io.ordertimeout.embedded;

import java.util.Map;

/**
 * Where the test servers come from, read once from the environment and validated up front.
 *
 * <p>With neither {@code OTC_REDIS_URI} nor {@code OTC_MYSQL_URL} set, both servers run embedded.
 * Each variable switches one server to an external instance; the two are independent so a developer
 * can, say, point at a local MySQL 8 while keeping the embedded Redis.
 *
 * @param redisUri external Redis URI, or null for the embedded server
 * @param mysqlUrl external JDBC URL of the server (no schema), or null for the embedded MariaDB
 * @param mysqlUser user for the external server (ignored when embedded)
 * @param mysqlPassword password for the external server (ignored when embedded)
 */
record EmbeddedConfig(String redisUri, String mysqlUrl, String mysqlUser, String mysqlPassword) {

  static final String REDIS_URI = "OTC_REDIS_URI";
  static final String MYSQL_URL = "OTC_MYSQL_URL";
  static final String MYSQL_USER = "OTC_MYSQL_USER";
  static final String MYSQL_PASSWORD = "OTC_MYSQL_PASSWORD";

  EmbeddedConfig {
    if (redisUri != null && !redisUri.matches("rediss?://.+")) {
      throw new IllegalArgumentException(
          REDIS_URI + " must look like redis://host:port, got '" + redisUri + "'");
    }
    if (mysqlUrl != null && !mysqlUrl.startsWith("jdbc:mysql://")) {
      throw new IllegalArgumentException(
          MYSQL_URL + " must be a jdbc:mysql:// URL, got '" + mysqlUrl + "'");
    }
    if (mysqlUrl == null && (mysqlUser != null || mysqlPassword != null)) {
      // A user without a URL means someone expected an external MySQL and would silently get the
      // embedded one.
      throw new IllegalArgumentException(
          MYSQL_USER + "/" + MYSQL_PASSWORD + " are set but " + MYSQL_URL + " is not");
    }
  }

  static EmbeddedConfig fromEnvironment(Map<String, String> env) {
    return new EmbeddedConfig(
        blankToNull(env.get(REDIS_URI)),
        blankToNull(env.get(MYSQL_URL)),
        blankToNull(env.get(MYSQL_USER)),
        env.get(MYSQL_PASSWORD));
  }

  boolean externalRedis() {
    return redisUri != null;
  }

  boolean externalMysql() {
    return mysqlUrl != null;
  }

  private static String blankToNull(String value) {
    return value == null || value.isBlank() ? null : value.trim();
  }
}
