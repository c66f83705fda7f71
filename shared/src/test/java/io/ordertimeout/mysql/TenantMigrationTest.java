package io.ordertimeout.mysql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ordertimeout.embedded.EmbeddedServers;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Schema V8 puts the tenant into every key and keeps the rows of a database at V7 as tenant {@code
 * default}; afterwards a statement that names no tenant fails.
 */
class TenantMigrationTest {
  private final EmbeddedServers servers = EmbeddedServers.get();
  private final String schema = servers.createSchema("v8");

  @AfterEach
  void dropSchema() {
    servers.dropSchema(schema);
  }

  private Flyway flyway(String target) {
    var config =
        Flyway.configure()
            .dataSource(servers.jdbcUrl(schema), servers.mysqlUser(), servers.mysqlPassword())
            .locations("classpath:db/migration");
    return (target == null ? config : config.target(target)).load();
  }

  private Connection connect() throws SQLException {
    return DriverManager.getConnection(
        servers.jdbcUrl(schema), servers.mysqlUser(), servers.mysqlPassword());
  }

  private static List<String> column(Statement s, String sql) throws SQLException {
    List<String> out = new ArrayList<>();
    try (ResultSet rs = s.executeQuery(sql)) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    return out;
  }

  @Test
  void rowsOfAVersion7DatabaseBecomeTheDefaultTenantsAndKeepTheirIds() throws SQLException {
    flyway("7").migrate();
    try (Connection c = connect();
        Statement s = c.createStatement()) {
      s.executeUpdate(
          "INSERT INTO stock (sku_id, available, reserved, total) VALUES ('s1', 8, 2, 10)");
      s.executeUpdate(
          "INSERT INTO coupons (coupon_id, owner_user_id, status, locked_by_order)"
              + " VALUES ('c1', 'u1', 'LOCKED', 'o1')");
      s.executeUpdate(
          "INSERT INTO orders (order_id, user_id, status, amount_fen, coupon_id,"
              + " request_hash, created_at, expire_at) VALUES ('o1', 'u1', 'UNPAID', 100, 'c1',"
              + " REPEAT('a', 64), NOW(3), NOW(3) + INTERVAL 15 MINUTE)");
      s.executeUpdate(
          "INSERT INTO order_items (order_id, sku_id, quantity) VALUES ('o1', 's1', 2)");
      s.executeUpdate(
          "INSERT INTO stock_movements (order_id, sku_id, kind, quantity)"
              + " VALUES ('o1', 's1', 'RESERVE', 2)");
      s.executeUpdate(
          "INSERT INTO order_snapshots (order_id, snapshot, checksum)"
              + " VALUES ('o1', '{}', REPEAT('b', 64))");
      s.executeUpdate(
          "INSERT INTO compensation_flags (kind, subject, evidence)"
              + " VALUES ('STOCK_DRIFT', 's1', '{}')");
      s.executeUpdate(
          "INSERT INTO admin_actions (action, subject, operator, outcome)"
              + " VALUES ('force-close', 'o1', 'ops', '{}')");
      s.executeUpdate(
          "INSERT INTO dead_letters (stream_key, entry_id, event_type, order_id,"
              + " payload, deliveries, errors) VALUES ('k', '1-0', 'close_due', 'o1', '{}', 5, '[]')");
    }

    flyway(null).migrate();

    try (Connection c = connect();
        Statement s = c.createStatement()) {
      assertThat(column(s, "SELECT tenant_id FROM tenants")).containsExactly("default");
      for (String table :
          List.of(
              "stock",
              "coupons",
              "orders",
              "order_items",
              "stock_movements",
              "order_snapshots",
              "compensation_flags",
              "admin_actions",
              "dead_letters")) {
        assertThat(column(s, "SELECT DISTINCT tenant_id FROM " + table))
            .as(table)
            .containsExactly("default");
      }
      assertThat(column(s, "SELECT CONCAT(order_id, '/', coupon_id) FROM orders"))
          .containsExactly("o1/c1");
      // the same ids for another tenant are other rows now
      s.executeUpdate("INSERT INTO tenants (tenant_id) VALUES ('shop-a')");
      s.executeUpdate(
          "INSERT INTO stock (tenant_id, sku_id, available, total)"
              + " VALUES ('shop-a', 's1', 1, 1)");
      s.executeUpdate(
          "INSERT INTO orders (tenant_id, order_id, user_id, status, amount_fen,"
              + " request_hash, created_at, expire_at) VALUES ('shop-a', 'o1', 'u9', 'UNPAID', 5,"
              + " REPEAT('c', 64), NOW(3), NOW(3) + INTERVAL 15 MINUTE)");
      assertThat(column(s, "SELECT tenant_id FROM orders WHERE order_id = 'o1' ORDER BY 1"))
          .containsExactly("default", "shop-a");
      // a statement that names no tenant is refused, not written into the default tenant
      assertThatThrownBy(
              () ->
                  s.executeUpdate(
                      "INSERT INTO order_items (order_id, sku_id, quantity) VALUES ('o1', 's2', 1)"))
          .hasMessageContaining("tenant_id");
      // and a tenant that was never onboarded owns nothing
      assertThatThrownBy(
              () ->
                  s.executeUpdate(
                      "INSERT INTO stock (tenant_id, sku_id, available, total)"
                          + " VALUES ('ghost', 's1', 1, 1)"))
          .hasMessageContaining("foreign key");
    }
  }
}
