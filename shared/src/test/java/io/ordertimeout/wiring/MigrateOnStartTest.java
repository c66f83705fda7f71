package io.ordertimeout.wiring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ordertimeout.config.OtcConfig;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.PlaceOrderCommand;
import io.ordertimeout.testing.TestStack;
import java.util.List;
import org.flywaydb.core.api.exception.FlywayValidateException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The start of the admin function, which runs Flyway (OTC_MIGRATE_ON_START=true), over a schema the
 * migrations already built: the test stacks start without it, as the other five functions do. An
 * empty schema migrated at start is SecretsEmulatorTest's case.
 */
class MigrateOnStartTest {
  private static final String HISTORY =
      "SELECT installed_rank, version, checksum, success FROM flyway_schema_history"
          + " ORDER BY installed_rank";

  private TestStack stack;

  @BeforeEach
  void setUp() {
    stack = TestStack.create("migrate-start");
  }

  @AfterEach
  void tearDown() {
    stack.close();
  }

  private OtcConfig migrating() {
    return stack.app().config().toBuilder().migrateOnStart(true).build();
  }

  @Test
  void aStartThatMigratesAMigratedSchemaAppliesNothingAndServes() {
    List<String> history = stack.dump(HISTORY);

    try (Components admin = new Components(migrating())) {
      assertThat(stack.dump(HISTORY)).isEqualTo(history);
      assertThat(history).hasSizeGreaterThanOrEqualTo(11).allMatch(row -> row.endsWith("|1|"));
      stack.seedSku("sku-tea-500g", 5);
      admin
          .placeOrders()
          .place(
              new PlaceOrderCommand(
                  "wx-migrate-1",
                  "default",
                  "user-1",
                  List.of(new OrderItem("sku-tea-500g", 2)),
                  null,
                  100,
                  900));
    }
    assertThat(stack.dump("SELECT status FROM orders WHERE order_id = 'wx-migrate-1'"))
        .containsExactly("UNPAID|");
    assertThat(stack.dump("SELECT available, reserved FROM stock")).containsExactly("3|2|");
  }

  @Test
  void aStartThatMigratesRefusesAHistoryThatNoLongerMatchesTheMigrations() {
    stack.update("UPDATE flyway_schema_history SET checksum = checksum + 1 WHERE version = '2'");
    List<String> history = stack.dump(HISTORY);

    assertThatThrownBy(() -> new Components(migrating()).close())
        .isInstanceOf(FlywayValidateException.class)
        .hasMessageContaining("checksum mismatch")
        .hasMessageContaining("2");
    assertThat(stack.dump(HISTORY)).isEqualTo(history);
    assertThat(stack.count("SELECT COUNT(*) FROM orders")).isZero();
  }
}
