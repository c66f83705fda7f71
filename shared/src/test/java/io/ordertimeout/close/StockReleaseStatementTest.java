package io.ordertimeout.close;

import static io.ordertimeout.testing.Deadlines.expireNow;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.ClosedOrder;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.metrics.MetricNames;
import io.ordertimeout.testing.TestStack;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A close releases the whole batch's stock in one UPDATE (a CASE on sku_id picks each SKU's
 * quantity): every SKU gets back exactly its orders' quantities, a SKU with less reserved than that
 * fails the whole close with its name, and the table keeps no index that could lock its rows in
 * another order than the SKU order every writer keeps.
 */
class StockReleaseStatementTest {
  private TestStack stack;

  @BeforeEach
  void setUp() {
    stack = TestStack.create("stock-release");
    for (String sku : List.of("sku-a", "sku-b", "sku-c", "sku-d", "sku-e")) {
      stack.seedSku(sku, 100);
    }
  }

  @AfterEach
  void tearDown() {
    stack.assertInvariants();
    stack.close();
  }

  @Test
  void eachSkuGetsBackExactlyItsOrdersQuantitiesAndNoOtherSkuMoves() {
    stack.place("o-1", "u1", 1, null, new OrderItem("sku-a", 3), new OrderItem("sku-b", 2));
    stack.place("o-2", "u1", 1, null, new OrderItem("sku-a", 4));
    stack.place("o-3", "u1", 1, null, new OrderItem("sku-c", 7), new OrderItem("sku-d", 1));
    stack.place("o-4", "u1", 1, null, new OrderItem("sku-d", 5));
    stack.place("o-5", "u1", 600, null, new OrderItem("sku-e", 9)); // not due: keeps its stock
    for (String id : List.of("o-1", "o-2", "o-3", "o-4")) {
      expireNow(stack, id);
    }

    CloseResult result =
        stack
            .app()
            .closer()
            .close(
                TenantIds.DEFAULT, List.of("o-1", "o-2", "o-3", "o-4", "o-5"), CloseReason.TIMEOUT);

    assertThat(result.closed())
        .extracting(ClosedOrder::orderId)
        .containsExactlyInAnyOrder("o-1", "o-2", "o-3", "o-4");
    assertThat(result.notDue()).containsOnlyKeys("o-5");
    assertThat(stack.dump("SELECT sku_id, available, reserved, sold FROM stock ORDER BY sku_id"))
        .containsExactly(
            "sku-a|100|0|0|",
            "sku-b|100|0|0|",
            "sku-c|100|0|0|",
            "sku-d|100|0|0|",
            "sku-e|91|9|0|");
    assertThat(
            stack.dump(
                "SELECT order_id, sku_id, quantity FROM stock_movements WHERE kind = 'RELEASE'"
                    + " ORDER BY order_id, sku_id"))
        .containsExactly(
            "o-1|sku-a|3|",
            "o-1|sku-b|2|",
            "o-2|sku-a|4|",
            "o-3|sku-c|7|",
            "o-3|sku-d|1|",
            "o-4|sku-d|5|");
  }

  @Test
  void aSkuWithLessReservedThanItsOrdersFailsTheWholeCloseNamingItAndChangesNothing() {
    stack.place("o-1", "u1", 1, null, new OrderItem("sku-a", 3));
    stack.place("o-2", "u1", 1, null, new OrderItem("sku-b", 2), new OrderItem("sku-c", 1));
    expireNow(stack, "o-1");
    expireNow(stack, "o-2");
    // a row changed outside the system: one of sku-b's two reserved units handed back already
    stack.update(
        "UPDATE stock SET reserved = reserved - 1, available = available + 1"
            + " WHERE sku_id = 'sku-b'");
    List<String> stockBefore = stack.dump("SELECT * FROM stock ORDER BY sku_id");
    long failuresBefore = stack.app().metrics().counter(MetricNames.STOCK_RELEASE_FAILURES);

    assertThatThrownBy(
            () ->
                stack
                    .app()
                    .closer()
                    .close(TenantIds.DEFAULT, List.of("o-1", "o-2"), CloseReason.TIMEOUT))
        .hasStackTraceContaining(
            "releasing 2 of SKU default/sku-b for 2 orders found 1 reserved; nothing was closed");

    assertThat(stack.app().metrics().counter(MetricNames.STOCK_RELEASE_FAILURES))
        .isEqualTo(failuresBefore + 1);
    assertThat(stack.dump("SELECT order_id, status FROM orders ORDER BY order_id"))
        .containsExactly("o-1|UNPAID|", "o-2|UNPAID|");
    assertThat(stack.dump("SELECT * FROM stock ORDER BY sku_id")).isEqualTo(stockBefore);
    assertThat(stack.count("SELECT COUNT(*) FROM stock_movements WHERE kind = 'RELEASE'")).isZero();

    // put the unit back: the orders close as usual and the ledger holds again
    stack.update(
        "UPDATE stock SET reserved = reserved + 1, available = available - 1"
            + " WHERE sku_id = 'sku-b'");
    CloseResult retried =
        stack.app().closer().close(TenantIds.DEFAULT, List.of("o-1", "o-2"), CloseReason.TIMEOUT);
    assertThat(retried.closed()).hasSize(2);
  }

  @Test
  void aSkuWithoutAStockRowFailsTheCloseNamingIt() {
    stack.place("o-1", "u1", 1, null, new OrderItem("sku-a", 3), new OrderItem("sku-e", 1));
    expireNow(stack, "o-1");
    List<String> saved =
        stack.dump("SELECT available, reserved, sold, total FROM stock WHERE sku_id = 'sku-e'");
    stack.update("DELETE FROM stock WHERE sku_id = 'sku-e'");
    try {
      assertThatThrownBy(
              () ->
                  stack
                      .app()
                      .closer()
                      .close(TenantIds.DEFAULT, List.of("o-1"), CloseReason.TIMEOUT))
          .hasStackTraceContaining(
              "releasing 1 of SKU default/sku-e for 1 orders found no stock row; nothing was closed");
      assertThat(stack.dump("SELECT status FROM orders")).containsExactly("UNPAID|");
      assertThat(stack.dump("SELECT sku_id, available, reserved FROM stock WHERE sku_id = 'sku-a'"))
          .containsExactly("sku-a|97|3|");
    } finally {
      String[] v = saved.get(0).split("\\|");
      stack.update(
          "INSERT INTO stock (tenant_id, sku_id, available, reserved, sold, total)"
              + " VALUES ('default', 'sku-e', ?, ?, ?, ?)",
          Long.parseLong(v[0]),
          Long.parseLong(v[1]),
          Long.parseLong(v[2]),
          Long.parseLong(v[3]));
    }
  }

  @Test
  void stockHasNoIndexButItsPrimaryKeySoEveryPlanLocksRowsInSkuOrder() {
    assertThat(
            stack.dump(
                "SELECT DISTINCT index_name FROM information_schema.statistics"
                    + " WHERE table_schema = DATABASE() AND table_name = 'stock'"))
        .as("an index on stock other than (tenant_id, sku_id) could lock in another order")
        .containsExactly("PRIMARY|");
    assertThat(
            stack.dump(
                "SELECT column_name FROM information_schema.statistics"
                    + " WHERE table_schema = DATABASE() AND table_name = 'stock'"
                    + " AND index_name = 'PRIMARY' ORDER BY seq_in_index"))
        .containsExactly("tenant_id|", "sku_id|");
  }

  @Test
  void theStatementNamesEachSkuThreeTimesAndOrdersBySku() {
    assertThat(OrderCloser.stockReleaseSql(2))
        .isEqualTo(
            "UPDATE stock SET available = available + CASE sku_id WHEN ? THEN ? WHEN ? THEN ? END,"
                + " reserved = reserved - CASE sku_id WHEN ? THEN ? WHEN ? THEN ? END"
                + " WHERE tenant_id = ? AND sku_id IN (?,?)"
                + " AND reserved >= CASE sku_id WHEN ? THEN ? WHEN ? THEN ? END ORDER BY sku_id");
  }
}
