package io.ordertimeout.aws;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The Redis secret's shape, {@code {"username":"otc-app","password":"..."}}: an ElastiCache RBAC
 * user, or without a username the {@code default} user. Read by {@link RedisSecretCredentials} at
 * each handshake and by {@code ./ops preflight}; {@link #toString()} never prints the password.
 *
 * @param username null for the default user
 */
public record RedisLogin(String username, String password) {
  /** Validates the secret's JSON; errors name the secret and the field, never a value. */
  public static RedisLogin parse(String secretId, JsonNode json) {
    String username = Fields.optional(json, "username");
    String password = Fields.required(secretId, json, "password");
    return new RedisLogin(username == null || username.isBlank() ? null : username, password);
  }

  @Override
  public String toString() {
    return "RedisLogin[username=" + (username == null ? "(default)" : username) + "]";
  }
}
