package io.ordertimeout.aws;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The DB credentials secret, in the shape RDS and its rotation functions use: {@code
 * {"username","password","host","port","dbname"}}, the last three optional.
 */
public record DbCredentials(
    String username, String password, String host, Integer port, String dbname) {

  /** Parses the secret; {@code secretId} only names it in errors. */
  public static DbCredentials parse(String secretId, JsonNode json) {
    return new DbCredentials(
        Fields.required(secretId, json, "username"),
        Fields.required(secretId, json, "password"),
        Fields.optional(json, "host"),
        json.hasNonNull("port") ? json.get("port").asInt() : null,
        Fields.optional(json, "dbname"));
  }

  /**
   * A JDBC URL from host, port and dbname, for deployments that keep the endpoint in the secret.
   *
   * @throws SecretUnavailableException when the secret has no host or dbname
   */
  public String jdbcUrl(String secretId) {
    if (host == null || dbname == null) {
      throw new SecretUnavailableException(
          "OTC_MYSQL_URL is not set and secret " + secretId + " has no host and dbname");
    }
    return "jdbc:mysql://" + host + ":" + (port == null ? 3306 : port) + "/" + dbname;
  }

  @Override
  public String toString() {
    return "DbCredentials[username=" + username + ", host=" + host + ", dbname=" + dbname + "]";
  }
}
