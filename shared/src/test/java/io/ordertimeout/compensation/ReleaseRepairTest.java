package io.ordertimeout.compensation;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.compensation.CompensationReport.Finding;
import io.ordertimeout.compensation.LedgerAudit.Missing;
import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.mysql.Tx;
import io.ordertimeout.testing.TestStack;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The ledger repair writes its RELEASE rows before it locks the stock row (the lock order of every
 * writer), so a re-check under the stock lock that refuses must take them back.
 */
class ReleaseRepairTest {
  private TestStack stack;
  private Tx tx;

  @BeforeEach
  void setUp() {
    stack = TestStack.create("release-repair");
    tx = new Tx(stack.app().dataSource());
    stack.seedSku("sku-a", 100);
    stack.place("rr-0001", "u1", 600, null, new OrderItem("sku-a", 2));
    stack.app().closer().close(TenantIds.DEFAULT, List.of("rr-0001"), CloseReason.USER_CANCEL);
    // The close's RELEASE row and stock move were lost: reserved is exactly 2 too high.
    stack.update("DELETE FROM stock_movements WHERE order_id = 'rr-0001' AND kind = 'RELEASE'");
    stack.update(
        "UPDATE stock SET available = available - 2, reserved = reserved + 2 WHERE sku_id = 'sku-a'");
  }

  @AfterEach
  void tearDown() {
    stack.close();
  }

  private CompensationReport repair() {
    Tally tally = new Tally(10, 10);
    new ReleaseRepair(tx)
        .repair(
            tally,
            TenantIds.DEFAULT,
            "sku-a",
            List.of(new Missing(TenantIds.DEFAULT, "rr-0001", "sku-a", 2)),
            new Flags(tx));
    return tally.report(Instant.now(), 0);
  }

  @Test
  void aCertainRepairInsertsTheReleaseAndMovesTheStock() {
    CompensationReport report = repair();

    assertThat(report.repairs()).extracting(Finding::kind).containsExactly("RELEASE_INSERTED");
    assertThat(stack.dump("SELECT kind, quantity FROM stock_movements ORDER BY kind"))
        .containsExactly("RELEASE|2|", "RESERVE|2|");
    assertThat(stack.dump("SELECT available, reserved, sold FROM stock"))
        .containsExactly("100|0|0|");
    stack.assertInvariants();
  }

  @Test
  void aRepairRefusedUnderTheStockLockLeavesNoReleaseRowBehind() {
    // Stock moved again between the audit and the repair: no longer exactly 2 stranded.
    stack.update(
        "UPDATE stock SET available = available - 1, reserved = reserved + 1 WHERE sku_id = 'sku-a'");

    CompensationReport report = repair();

    assertThat(report.repairs()).isEmpty();
    assertThat(report.flags())
        .extracting(Finding::kind, Finding::subject)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(LedgerAudit.MISSING_RELEASE, "rr-0001"));
    assertThat(report.flags().get(0).evidence())
        .containsEntry("refused", "reserved - demand != 2")
        .containsEntry("reserved", 3L);
    assertThat(stack.dump("SELECT kind FROM stock_movements")).containsExactly("RESERVE|");
    assertThat(stack.dump("SELECT available, reserved, sold FROM stock"))
        .containsExactly("97|3|0|");
  }
}
