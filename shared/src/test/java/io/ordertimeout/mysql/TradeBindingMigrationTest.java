package io.ordertimeout.mysql;

import static org.assertj.core.api.Assertions.assertThat;

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
 * Schema V9 binds each WeChat trade to one (tenant, order): orders prepaid before it keep their
 * bare id as out_trade_no, without a recorded mchid.
 */
class TradeBindingMigrationTest {
  private final EmbeddedServers servers = EmbeddedServers.get();
  private final String schema = servers.createSchema("v9");

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

  @Test
  void ordersPrepaidBeforeVersion9AreBoundToTheirBareIdWithoutMchid() throws SQLException {
    flyway("8").migrate();
    try (Connection c =
            DriverManager.getConnection(
                servers.jdbcUrl(schema), servers.mysqlUser(), servers.mysqlPassword());
        Statement s = c.createStatement()) {
      s.executeUpdate("INSERT INTO tenants (tenant_id) VALUES ('shop-b')");
      String columns =
          "INSERT INTO orders (tenant_id, order_id, user_id, status, amount_fen, request_hash,"
              + " created_at, expire_at, prepaid_at, prepay_id) VALUES ";
      String due = ", 'u1', 'UNPAID', 100, REPEAT('a', 64), NOW(3), NOW(3) + INTERVAL 15 MINUTE";
      s.executeUpdate(columns + "('default', 'o-prepaid'" + due + ", NOW(3), NULL)");
      s.executeUpdate(columns + "('shop-b', 'o-prepaid'" + due + ", NOW(3), 'wx42')");
      s.executeUpdate(columns + "('default', 'o-plain'" + due + ", NULL, NULL)");

      flyway(null).migrate();

      List<String> rows = new ArrayList<>();
      try (ResultSet rs =
          s.executeQuery(
              "SELECT tenant_id, order_id, mchid, out_trade_no FROM wechat_trades"
                  + " ORDER BY tenant_id, order_id")) {
        while (rs.next()) {
          rows.add(
              rs.getString(1)
                  + "|"
                  + rs.getString(2)
                  + "|"
                  + rs.getString(3)
                  + "|"
                  + rs.getString(4));
        }
      }
      // both tenants' trades of the same bare id: told apart (or refused) in code, not by the key
      assertThat(rows)
          .containsExactly("default|o-prepaid|null|o-prepaid", "shop-b|o-prepaid|null|o-prepaid");
    }
  }
}
