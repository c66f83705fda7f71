package io.ordertimeout.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A fresh schema with every migration of shared applied in version order (V1 to the latest) over
 * JDBC: the checker reads the V7 lifecycle columns and the V5 outbox. The migrations run once per
 * JVM, into a {@link SchemaTemplate} that each schema copies. (The name is from when V1 was all
 * there was.)
 */
final class V1Schema implements AutoCloseable {
  /** Set once the migrations have run. */
  private static SchemaTemplate template;

  // Surefire runs with the module dir as working directory.
  private static final Path MIGRATIONS = Path.of("../../shared/src/main/resources/db/migration");
  private static final Pattern VERSIONED = Pattern.compile("V(\\d+)__.*\\.sql");
  private static final Pattern STATEMENT_END = Pattern.compile(";\\s*$", Pattern.MULTILINE);

  private final EmbeddedServers servers;
  final String name;

  V1Schema(EmbeddedServers servers, String hint) {
    this.servers = servers;
    this.name = template(servers).copy(hint);
  }

  private static synchronized SchemaTemplate template(EmbeddedServers servers) {
    if (template == null) {
      String migrated = servers.createSchema("v1template");
      try (Connection connection =
              DriverManager.getConnection(
                  servers.jdbcUrl(migrated), servers.mysqlUser(), servers.mysqlPassword());
          Statement statement = connection.createStatement()) {
        for (String each : statements()) {
          statement.execute(each);
        }
      } catch (SQLException e) {
        throw new IllegalStateException("could not migrate the template schema " + migrated, e);
      }
      template = SchemaTemplate.of(servers, migrated);
    }
    return template;
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

  private static int version(Path file) {
    var m = VERSIONED.matcher(file.getFileName().toString());
    if (!m.matches()) {
      throw new IllegalArgumentException("not a versioned migration: " + file);
    }
    return Integer.parseInt(m.group(1));
  }

  private static List<String> statements() {
    try (Stream<Path> files = Files.list(MIGRATIONS)) {
      List<Path> ordered =
          files
              .filter(f -> VERSIONED.matcher(f.getFileName().toString()).matches())
              .sorted(Comparator.comparingInt(V1Schema::version))
              .toList();
      List<String> statements = new ArrayList<>();
      for (Path file : ordered) {
        Arrays.stream(STATEMENT_END.split(Files.readString(file)))
            .filter(chunk -> !chunk.replaceAll("(?m)^\\s*--.*$", "").isBlank())
            .forEach(statements::add);
      }
      return statements;
    } catch (IOException e) {
      throw new UncheckedIOException("could not read " + MIGRATIONS.toAbsolutePath(), e);
    }
  }
}
