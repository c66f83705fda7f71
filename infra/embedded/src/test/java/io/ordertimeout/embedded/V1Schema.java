package io.ordertimeout.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;

/** A fresh schema with the V1 tables, created by running shared's migration file over JDBC. */
final class V1Schema implements AutoCloseable {

  // Surefire runs with the module dir as working directory.
  private static final Path V1 =
      Path.of("../../shared/src/main/resources/db/migration/V1__orders_stock_coupons.sql");
  private static final Pattern STATEMENT_END = Pattern.compile(";\\s*$", Pattern.MULTILINE);

  private final EmbeddedServers servers;
  final String name;

  V1Schema(EmbeddedServers servers, String hint) {
    this.servers = servers;
    this.name = servers.createSchema(hint);
    execute(statements());
  }

  Connection connect() throws SQLException {
    return DriverManager.getConnection(
        servers.jdbcUrl(name), servers.mysqlUser(), servers.mysqlPassword());
  }

  void execute(List<String> sql) {
    try (Connection connection = connect();
        Statement statement = connection.createStatement()) {
      for (String each : sql) {
        statement.execute(each);
      }
    } catch (SQLException e) {
      throw new IllegalStateException("could not run " + sql + " in schema " + name, e);
    }
  }

  @Override
  public void close() {
    servers.dropSchema(name);
  }

  private static List<String> statements() {
    try {
      return Arrays.stream(STATEMENT_END.split(Files.readString(V1)))
          .filter(chunk -> !chunk.replaceAll("(?m)^\\s*--.*$", "").isBlank())
          .toList();
    } catch (IOException e) {
      throw new UncheckedIOException("could not read " + V1.toAbsolutePath(), e);
    }
  }
}
