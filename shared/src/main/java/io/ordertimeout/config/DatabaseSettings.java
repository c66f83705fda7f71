package io.ordertimeout.config;

import java.util.Objects;

/**
 * The MySQL side: where, as whom, how many pooled connections, whether this function migrates the
 * schema at start. toString masks the password, and the URL's user information and password
 * properties (configuration is logged once at init).
 */
public record DatabaseSettings(
    String url, String user, String password, int poolSize, boolean migrateOnStart) {
  public DatabaseSettings {
    Objects.requireNonNull(url, "OTC_MYSQL_URL");
    Objects.requireNonNull(user, "OTC_MYSQL_USER");
    Objects.requireNonNull(password, "OTC_MYSQL_PASSWORD");
    OtcConfig.require(
        poolSize >= 1 && poolSize <= 64, "OTC_DB_POOL_SIZE must be 1..64, was " + poolSize);
  }

  @Override
  public String toString() {
    return "mysqlUrl="
        + Masked.jdbcUrl(url)
        + ", mysqlUser="
        + user
        + ", mysqlPassword="
        + (password.isEmpty() ? "<empty>" : "***")
        + ", dbPoolSize="
        + poolSize
        + ", migrateOnStart="
        + migrateOnStart;
  }
}
