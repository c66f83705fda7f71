package io.ordertimeout.aws;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.testing.TestStack;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/** The CRaC hooks on the real pool and Redis connection (a CRaC JVM is not needed to call them). */
class SnapStartHooksTest {

  @Test
  void checkpointLeavesNoIdleConnectionAndRestoreReconnects() throws SQLException {
    try (TestStack stack = TestStack.create("snapstart")) {
      var app = stack.app();
      var hooks = new SnapStartHooks(app.dataSource(), app.redis().sync());
      stack.seedSku("sku-snap", 5);

      hooks.beforeCheckpoint(null);

      assertThat(app.dataSource().getHikariPoolMXBean().getIdleConnections()).isZero();

      hooks.afterRestore(null);

      assertThat(app.dataSource().getHikariPoolMXBean().getTotalConnections())
          .as("one connection opened at restore")
          .isPositive();
      try (Connection c = app.dataSource().getConnection();
          ResultSet rs =
              c.createStatement()
                  .executeQuery("SELECT available FROM stock WHERE sku_id = 'sku-snap'")) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getLong(1)).isEqualTo(5);
      }
      assertThat(app.redis().sync().ping()).isEqualTo("PONG");
    }
  }
}
