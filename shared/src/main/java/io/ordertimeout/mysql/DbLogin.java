package io.ordertimeout.mysql;

import java.util.Objects;

/** A database user and password; toString masks the password. */
public record DbLogin(String user, String password) {
  public DbLogin {
    Objects.requireNonNull(user, "user");
    Objects.requireNonNull(password, "password");
  }

  @Override
  public String toString() {
    return "DbLogin[user=" + user + ", password=***]";
  }
}
