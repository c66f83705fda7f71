package io.ordertimeout.mysql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.testing.TestStack;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A row lock held elsewhere ends the system's wait at the configured lock wait, not MySQL's 50 s:
 * three retried attempts must fit in a 10 s function.
 */
@Tag("integration")
class LockWaitBoundTest {
  private TestStack stack;

  @AfterEach
  void tearDown() {
    stack.close();
  }

  @Test
  void aCloseBlockedOnALockedOrderFailsWithinTheConfiguredBound() throws Exception {
    // Arrange: a 1 s lock wait (so a 2 s socket timeout, 3 attempts: at most ~6 s)
    stack = TestStack.withOverrides("lock-wait", Map.of("OTC_DB_LOCK_WAIT_SECONDS", "1"), null);
    stack.seedSku("sku-a", 10);
    stack.place("ord-lw-1", "u1", 600, null, new OrderItem("sku-a", 1));
    try (Connection holder = stack.app().dataSource().getConnection()) {
      holder.setAutoCommit(false);
      try (PreparedStatement ps =
          holder.prepareStatement("SELECT status FROM orders WHERE order_id = ? FOR UPDATE")) {
        ps.setString(1, "ord-lw-1");
        ps.executeQuery().close();
      }
      try {
        // Act: a user's cancel closes the order inline, and waits on the held row
        long started = System.nanoTime();
        Throwable failure =
            assertTimeoutPreemptively(
                Duration.ofSeconds(30),
                () ->
                    catchThrowable(
                        () ->
                            stack
                                .app()
                                .closer()
                                .close(
                                    TenantIds.DEFAULT,
                                    List.of("ord-lw-1"),
                                    CloseReason.USER_CANCEL)));
        long elapsedMillis = (System.nanoTime() - started) / 1_000_000;

        // Assert: MySQL's lock-wait error after Tx's retries, well inside a 10 s function (a
        // loose bound: the test must not assert timings tighter than a loaded machine keeps)
        assertThat(failure)
            .isInstanceOf(DataAccessException.class)
            .hasMessageContaining("error 1205")
            .hasMessageContaining("attempt 3");
        assertThat(elapsedMillis).isLessThan(10_000);
      } finally {
        holder.rollback();
      }
    }
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE status = 'UNPAID'")).isEqualTo(1);
  }
}
