package io.ordertimeout.testing;

import com.zaxxer.hikari.HikariDataSource;
import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.embedded.SchemaTemplate;
import io.ordertimeout.mysql.Database;

/**
 * The migrated schema every {@link TestStack} starts from, made once per JVM: the migrations are
 * applied to one template schema by Flyway, and each test's fresh schema is a {@link
 * SchemaTemplate} copy of it (its tables, and the rows the migrations insert, Flyway's history
 * among them). Applying the migrations to each test's schema took 0.4 to 3 s on the 2-core machine,
 * most of a component test's time. The stacks start without Flyway (OTC_MIGRATE_ON_START=false, as
 * five of the six functions do); MigrateOnStartTest starts on a copy with it, as the admin function
 * does. Tests of the migrations themselves (TenantMigrationTest, TradeBindingMigrationTest) migrate
 * schemas of their own.
 */
public final class MigratedSchema {
  /** Set once the template is migrated. */
  private static SchemaTemplate template;

  private MigratedSchema() {}

  /** A fresh schema named for {@code hint}, holding the migrated tables and their rows. */
  public static String create(EmbeddedServers servers, String hint) {
    return template(servers).copy(hint);
  }

  /** Migrates the template schema on first use. */
  private static synchronized SchemaTemplate template(EmbeddedServers servers) {
    if (template != null) {
      return template;
    }
    String name = servers.createSchema("template");
    try (HikariDataSource pool =
        Database.pool(
            servers.jdbcUrl(name), servers.mysqlUser(), servers.mysqlPassword(), 1, name)) {
      Database.migrate(pool);
    }
    template = SchemaTemplate.of(servers, name);
    return template;
  }
}
