package io.ordertimeout.compensation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ordertimeout.compensation.CompensationReport.Finding;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.testing.TestStack;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Snapshot and ledger checks that only flag, and the settings' validation. */
class CompensationChecksTest {

  @Test
  void tamperedSnapshotsAndLedgersAreFlaggedWithTheirEvidenceAndNothingIsChanged() {
    try (TestStack stack = TestStack.create("comp-checks")) {
      stack.seedSku("sku-a", 100);
      for (String id : new String[] {"amount-01", "checksum-1", "missing-01", "ledger-001"}) {
        stack.place(id, "u1", 600, null, new OrderItem("sku-a", 2));
      }
      stack.update("UPDATE orders SET amount_fen = 999 WHERE order_id = 'amount-01'");
      stack.update(
          "UPDATE order_snapshots SET snapshot = REPLACE(snapshot, '\"quantity\":2', '\"quantity\":3')"
              + " WHERE order_id = 'checksum-1'");
      stack.update("DELETE FROM order_snapshots WHERE order_id = 'missing-01'");
      stack.update(
          "UPDATE stock_movements SET quantity = 5 WHERE order_id = 'ledger-001' AND kind = 'RESERVE'");
      var before = stack.databaseState();

      CompensationReport report = stack.app().newCompensator(CompensationSettings.defaults()).run();

      assertThat(report.flags())
          .extracting(Finding::kind, Finding::subject)
          .containsExactlyInAnyOrder(
              org.assertj.core.groups.Tuple.tuple("SNAPSHOT_MISMATCH", "amount-01"),
              org.assertj.core.groups.Tuple.tuple("SNAPSHOT_CHECKSUM", "checksum-1"),
              org.assertj.core.groups.Tuple.tuple("SNAPSHOT_MISSING", "missing-01"),
              org.assertj.core.groups.Tuple.tuple("LEDGER_MISMATCH", "ledger-001"));
      assertThat(flag(report, "SNAPSHOT_MISMATCH").evidence().get("differences").toString())
          .contains("amountFen: snapshot 100, order 999");
      assertThat(flag(report, "LEDGER_MISMATCH").evidence().get("problems").toString())
          .contains("RESERVE of sku-a is 5, item 2");
      assertThat(report.repairs()).isEmpty();
      assertThat(stack.databaseState()).isEqualTo(before);
      assertThat(stack.count("SELECT COUNT(*) FROM compensation_flags WHERE resolved_at IS NULL"))
          .isEqualTo(4);

      stack.update(
          "UPDATE stock_movements SET quantity = 2 WHERE order_id = 'ledger-001' AND kind = 'RESERVE'");
      stack.assertInvariants();
    }
  }

  private static Finding flag(CompensationReport report, String kind) {
    return report.flags().stream().filter(f -> f.kind().equals(kind)).findFirst().orElseThrow();
  }

  @Test
  void settingsComeFromTheEnvironmentAndContradictionsFailFast() {
    CompensationSettings s =
        CompensationSettings.fromEnvironment(
            Map.of(
                "OTC_COMPENSATION_GRACE_MS", "30000",
                "OTC_COMPENSATION_PAGE_SIZE", "250",
                "OTC_COMPENSATION_PAGE_BUDGET", "7",
                "OTC_COMPENSATION_RECENT_WINDOW_MS", "60000",
                "OTC_COMPENSATION_CLOSED_WINDOW_MS", "120000",
                "OTC_COMPENSATION_NOTIFY_GRACE_MS", "5000",
                "OTC_COMPENSATION_WECHAT_BUDGET", "9",
                "OTC_COMPENSATION_STUCK_AFTER_MS", "1000",
                "OTC_COMPENSATION_PARK_FOR_MS", "2000"));

    assertThat(s)
        .isEqualTo(
            new CompensationSettings(
                Duration.ofSeconds(30),
                250,
                7,
                Duration.ofMinutes(1),
                Duration.ofMinutes(2),
                Duration.ofSeconds(5),
                9,
                Duration.ofSeconds(1),
                Duration.ofSeconds(2)));
    assertThat(CompensationSettings.fromEnvironment(Map.of()))
        .isEqualTo(CompensationSettings.defaults());
    assertThatThrownBy(
            () -> CompensationSettings.fromEnvironment(Map.of("OTC_COMPENSATION_PAGE_SIZE", "x")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("OTC_COMPENSATION_PAGE_SIZE");
    assertThatThrownBy(
            () -> CompensationSettings.fromEnvironment(Map.of("OTC_COMPENSATION_PAGE_SIZE", "0")))
        .hasMessageContaining("page size 0");
    assertThatThrownBy(() -> CompensationSettings.defaults().withGrace(Duration.ofSeconds(-1)))
        .hasMessageContaining("must not be negative");
    assertThatThrownBy(
            () ->
                CompensationSettings.fromEnvironment(
                    Map.of("OTC_COMPENSATION_WECHAT_BUDGET", "-1")))
        .hasMessageContaining("budgets");
  }

  @Test
  void aSpentPageBudgetIsReportedAndTheNextRunContinues() {
    try (TestStack stack = TestStack.create("comp-budget")) {
      stack.seedSku("sku-a", 100);
      var ids =
          stack.bulkPlace("budget", 5, Duration.ofMinutes(10), i -> new OrderItem("sku-a", 1));
      stack.app().timers().remove(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, ids);
      CompensationSettings tight =
          new CompensationSettings(
              Duration.ofSeconds(60),
              2,
              1,
              Duration.ofMinutes(30),
              Duration.ofMinutes(15),
              Duration.ofSeconds(60),
              0,
              Duration.ofMinutes(10),
              Duration.ofMinutes(5));

      CompensationReport report = stack.app().newCompensator(tight).run();

      assertThat(report.count("rescheduled")).isEqualTo(2);
      assertThat(report.exhausted()).contains("unpaid", "orders_audited");
      assertThat(stack.app().timers().size(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT))
          .isEqualTo(2);
      stack.assertInvariants();
    }
  }
}
