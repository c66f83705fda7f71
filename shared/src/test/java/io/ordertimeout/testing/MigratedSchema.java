package io.ordertimeout.testing;

import com.zaxxer.hikari.HikariDataSource;
import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.mysql.Database;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * The migrated schema every {@link TestStack} starts from, made once per JVM: the migrations are
 * applied to one template schema by Flyway, and each test's fresh schema gets its tables (as {@code
 * SHOW CREATE TABLE} gives them: columns, keys, CHECK constraints and foreign keys) and its rows
 * (Flyway's history, the rows the migrations insert). Applying the nine migrations to each test's
 * schema took 0.4 to 3 s on the 2-core machine, most of a component test's time; the copy takes a
 * few tens of ms. The stack still runs Flyway at its start (OTC_MIGRATE_ON_START), which validates
 * the copied history against the migrations on the classpath and applies none. Tests of the
 * migrations themselves (TenantMigrationTest, TradeBindingMigrationTest) migrate schemas of their
 * own.
 */
final class MigratedSchema {
  /** One table of the template: its DDL, and whether it holds rows to copy. */
  private record Table(String name, String ddl, boolean hasRows) {}

  /** The template's name and tables, set once it is migrated. */
  private static String templateName;

  private static List<Table> tables;

  private MigratedSchema() {}

  /** A fresh schema named for {@code hint}, holding the migrated tables and their rows. */
  static String create(EmbeddedServers servers, String hint) {
    List<Table> template = template(servers);
    String schema = servers.createSchema(hint);
    try (Connection c =
            DriverManager.getConnection(
                servers.jdbcUrl(schema), servers.mysqlUser(), servers.mysqlPassword());
        Statement s = c.createStatement()) {
      // the tables come in name order; a foreign key is checked once all of them are there
      s.execute("SET SESSION foreign_key_checks = 0");
      for (Table t : template) {
        s.execute(t.ddl());
      }
      for (Table t : template) {
        if (t.hasRows()) {
          s.execute(
              "INSERT INTO `"
                  + t.name()
                  + "` SELECT * FROM "
                  + templateName
                  + ".`"
                  + t.name()
                  + "`");
        }
      }
      s.execute("SET SESSION foreign_key_checks = 1");
    } catch (SQLException e) {
      servers.dropSchema(schema);
      throw new IllegalStateException("could not copy the migrated schema into " + schema, e);
    }
    return schema;
  }

  /** Migrates the template schema on first use; it is dropped when the JVM exits. */
  private static synchronized List<Table> template(EmbeddedServers servers) {
    if (tables != null) {
      return tables;
    }
    String name = servers.createSchema("template");
    Runtime.getRuntime()
        .addShutdownHook(new Thread(() -> dropQuietly(servers, name), "otc-template-schema-drop"));
    try (HikariDataSource pool =
        Database.pool(
            servers.jdbcUrl(name), servers.mysqlUser(), servers.mysqlPassword(), 1, name)) {
      Database.migrate(pool);
      tables = read(servers, name);
      templateName = name;
      return tables;
    } catch (SQLException e) {
      throw new IllegalStateException("could not read the migrated template schema " + name, e);
    }
  }

  private static List<Table> read(EmbeddedServers servers, String schema) throws SQLException {
    List<Table> read = new ArrayList<>();
    try (Connection c =
            DriverManager.getConnection(
                servers.jdbcUrl(schema), servers.mysqlUser(), servers.mysqlPassword());
        Statement s = c.createStatement()) {
      List<String> names = new ArrayList<>();
      try (ResultSet rs =
          s.executeQuery(
              "SELECT table_name FROM information_schema.tables WHERE table_schema = '"
                  + schema
                  + "' AND table_type = 'BASE TABLE' ORDER BY table_name")) {
        while (rs.next()) {
          names.add(rs.getString(1));
        }
      }
      for (String name : names) {
        String ddl;
        try (ResultSet rs = s.executeQuery("SHOW CREATE TABLE `" + name + "`")) {
          rs.next();
          ddl = rs.getString(2);
        }
        boolean hasRows;
        try (ResultSet rs = s.executeQuery("SELECT EXISTS (SELECT 1 FROM `" + name + "`)")) {
          rs.next();
          hasRows = rs.getBoolean(1);
        }
        read.add(new Table(name, ddl, hasRows));
      }
    }
    return read;
  }

  private static void dropQuietly(EmbeddedServers servers, String schema) {
    try {
      servers.dropSchema(schema);
    } catch (RuntimeException e) {
      // the server may have stopped first (the embedded one is deleted with its data anyway)
    }
  }
}
