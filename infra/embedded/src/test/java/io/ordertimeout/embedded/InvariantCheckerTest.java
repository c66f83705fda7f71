package io.ordertimeout.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

@ExtendWith(EmbeddedServersExtension.class)
class InvariantCheckerTest {

  /**
   * A consistent shop. SKU-A: total 100, U1 reserves 2, P1 sold 3, X1 released 4 -> available 95.
   * SKU-B: total 10, P1 sold 1, X2 released 1, U2 reserves 1 -> available 8, reserved 1, sold 1.
   * Coupons: C1 locked by U1, C2 used by P1, C3 back to AVAILABLE after X1 closed, C4 released by
   * X2 and now locked by U2, C5 never used.
   */
  private static final List<String> CONSISTENT =
      List.of(
          "INSERT INTO stock (sku_id, available, reserved, sold, total) VALUES ('SKU-A', 95, 2, 3, 100), ('SKU-B', 8, 1, 1, 10)",
          "INSERT INTO coupons (coupon_id, owner_user_id, status, locked_by_order) VALUES"
              + " ('C1', 'u1', 'LOCKED', 'U1'), ('C2', 'u1', 'USED', 'P1'), ('C3', 'u1', 'AVAILABLE', NULL),"
              + " ('C4', 'u2', 'LOCKED', 'U2'), ('C5', 'u2', 'AVAILABLE', NULL)",
          "INSERT INTO orders (order_id, user_id, status, amount_fen, coupon_id, request_hash, created_at, expire_at,"
              + " paid_at, closed_at, close_reason) VALUES"
              + " ('U1', 'u1', 'UNPAID', 100, 'C1', REPEAT('a', 64), '2025-01-01 00:00:00', '2025-01-01 00:15:00', NULL, NULL, NULL),"
              + " ('P1', 'u1', 'PAID', 100, 'C2', REPEAT('b', 64), '2025-01-01 00:00:00', '2025-01-01 00:15:00', '2025-01-01 00:05:00', NULL, NULL),"
              + " ('X1', 'u1', 'CLOSED', 100, 'C3', REPEAT('c', 64), '2025-01-01 00:00:00', '2025-01-01 00:15:00', NULL, '2025-01-01 00:15:00.050', 'TIMEOUT'),"
              + " ('X2', 'u2', 'CLOSED', 100, 'C4', REPEAT('d', 64), '2025-01-01 00:00:00', '2025-01-01 00:15:00', NULL, '2025-01-01 00:03:00', 'CANCELLED'),"
              + " ('U2', 'u2', 'UNPAID', 100, 'C4', REPEAT('e', 64), '2025-01-01 00:04:00', '2025-01-01 00:19:00', NULL, NULL, NULL)",
          "INSERT INTO order_items (order_id, sku_id, quantity) VALUES"
              + " ('U1', 'SKU-A', 2), ('P1', 'SKU-A', 3), ('P1', 'SKU-B', 1), ('X1', 'SKU-A', 4), ('X2', 'SKU-B', 1), ('U2', 'SKU-B', 1)",
          "INSERT INTO stock_movements (order_id, sku_id, kind, quantity) VALUES"
              + " ('U1', 'SKU-A', 'RESERVE', 2),"
              + " ('P1', 'SKU-A', 'RESERVE', 3), ('P1', 'SKU-A', 'SELL', 3), ('P1', 'SKU-B', 'RESERVE', 1), ('P1', 'SKU-B', 'SELL', 1),"
              + " ('X1', 'SKU-A', 'RESERVE', 4), ('X1', 'SKU-A', 'RELEASE', 4),"
              + " ('X2', 'SKU-B', 'RESERVE', 1), ('X2', 'SKU-B', 'RELEASE', 1),"
              + " ('U2', 'SKU-B', 'RESERVE', 1)");

  private final EmbeddedServers servers;
  private V1Schema schema;
  private InvariantChecker checker;

  InvariantCheckerTest(EmbeddedServers servers) {
    this.servers = servers;
  }

  @BeforeEach
  void createConsistentShop() {
    schema = new V1Schema(servers, "invariants");
    schema.execute(CONSISTENT);
    checker = new InvariantChecker(schema::connect);
  }

  @AfterEach
  void dropSchema() {
    schema.close();
  }

  @Test
  void consistentDataHasNoViolations() {
    assertThat(checker.violations()).isEmpty();
    checker.assertHolds();
  }

  @Test
  void summaryCountsOrdersCouponsAndStock() {
    InvariantChecker.Summary summary = checker.summary();

    assertThat(summary.ordersByStatus())
        .containsOnly(
            org.assertj.core.api.Assertions.entry("UNPAID", 2L),
            org.assertj.core.api.Assertions.entry("PAID", 1L),
            org.assertj.core.api.Assertions.entry("CLOSED", 2L));
    assertThat(summary.orders()).isEqualTo(5);
    assertThat(summary.couponsByStatus())
        .containsEntry("LOCKED", 2L)
        .containsEntry("AVAILABLE", 2L)
        .containsEntry("USED", 1L);
    assertThat(summary.skus())
        .containsExactly(
            new InvariantChecker.SkuTotals("SKU-A", 95, 2, 3, 100),
            new InvariantChecker.SkuTotals("SKU-B", 8, 1, 1, 10));
  }

  static Stream<Arguments> violations() {
    return Stream.of(
        broken(
            "stock does not add up",
            "UPDATE stock SET available = 94 WHERE sku_id = 'SKU-A'",
            "invariant 1: SKU SKU-A available 94 + reserved 2 + sold 3 = 99, total is 100"),
        broken(
            "reserved differs from unpaid items",
            "UPDATE stock SET available = 7, reserved = 2 WHERE sku_id = 'SKU-B'",
            "invariant 2: SKU SKU-B reserved 2 but UNPAID orders hold 1"),
        broken(
            "item without stock row",
            "INSERT INTO order_items VALUES ('U1', 'SKU-Z', 1)",
            "invariant 2: order U1 item SKU SKU-Z (quantity 1) has no stock row"),
        broken(
            "closed order without release",
            "DELETE FROM stock_movements WHERE order_id = 'X1' AND kind = 'RELEASE'",
            "invariant 3: order X1 (CLOSED) SKU SKU-A quantity 4 has RESERVE 4, RELEASE none, SELL none"),
        broken(
            "closed order released the wrong quantity",
            "UPDATE stock_movements SET quantity = 3 WHERE order_id = 'X1' AND kind = 'RELEASE'",
            "invariant 3: order X1 (CLOSED) SKU SKU-A quantity 4 has RESERVE 4, RELEASE 3, SELL none"),
        broken(
            "closed order also sold",
            "INSERT INTO stock_movements (order_id, sku_id, kind, quantity) VALUES ('X1', 'SKU-A', 'SELL', 4)",
            "invariant 3: order X1 (CLOSED) SKU SKU-A quantity 4 has RESERVE 4, RELEASE 4, SELL 4"),
        broken(
            "paid order also released",
            "INSERT INTO stock_movements (order_id, sku_id, kind, quantity) VALUES ('P1', 'SKU-B', 'RELEASE', 1)",
            "invariant 3: order P1 (PAID) SKU SKU-B quantity 1 has RESERVE 1, RELEASE 1, SELL 1"),
        broken(
            "paid order without sell",
            "DELETE FROM stock_movements WHERE order_id = 'P1' AND sku_id = 'SKU-A' AND kind = 'SELL'",
            "invariant 3: order P1 (PAID) SKU SKU-A quantity 3 has RESERVE 3, RELEASE none, SELL none"),
        broken(
            "order without reserve",
            "DELETE FROM stock_movements WHERE order_id = 'U1'",
            "invariant 3: order U1 (UNPAID) SKU SKU-A quantity 2 has RESERVE none, RELEASE none, SELL none"),
        broken(
            "unpaid order already released",
            "INSERT INTO stock_movements (order_id, sku_id, kind, quantity) VALUES ('U1', 'SKU-A', 'RELEASE', 2)",
            "invariant 3: order U1 (UNPAID) SKU SKU-A quantity 2 has RESERVE 2, RELEASE 2, SELL none"),
        broken(
            "movement for no item",
            "INSERT INTO stock_movements (order_id, sku_id, kind, quantity) VALUES ('GHOST', 'SKU-A', 'RESERVE', 5)",
            "invariant 3: RESERVE movement of 5 for order GHOST SKU SKU-A matches no order item"),
        broken(
            "closed order without closed_at",
            "UPDATE orders SET closed_at = NULL WHERE order_id = 'X2'",
            "invariant 3: order X2 is CLOSED with paid_at null, closed_at null, close_reason CANCELLED"),
        broken(
            "paid order without paid_at",
            "UPDATE orders SET paid_at = NULL WHERE order_id = 'P1'",
            "invariant 3: order P1 is PAID with paid_at null, closed_at null, close_reason null"),
        broken(
            "timeout close before the deadline",
            "UPDATE orders SET closed_at = '2025-01-01 00:14:59.999' WHERE order_id = 'X1'",
            "invariant 4: order X1 closed by TIMEOUT at 2025-01-01 00:14:59.999, before its expire_at 2025-01-01 00:15:00"),
        broken(
            "unpaid order's coupon not locked",
            "UPDATE coupons SET status = 'AVAILABLE', locked_by_order = NULL WHERE coupon_id = 'C1'",
            "invariant 5: order U1 (UNPAID) has coupon C1 AVAILABLE, locked_by_order null (1 UNPAID/PAID orders hold it)"),
        broken(
            "paid order's coupon still locked",
            "UPDATE coupons SET status = 'LOCKED' WHERE coupon_id = 'C2'",
            "invariant 5: coupon C2 is LOCKED, locked_by_order P1, but that order is PAID with coupon C2"),
        broken(
            "closed order's coupon still locked",
            "UPDATE coupons SET status = 'LOCKED', locked_by_order = 'X1' WHERE coupon_id = 'C3'",
            "invariant 5: order X1 (CLOSED) has coupon C3 LOCKED, locked_by_order X1 (0 UNPAID/PAID orders hold it)"),
        broken(
            "closed order's coupon marked used",
            "UPDATE coupons SET status = 'USED', locked_by_order = NULL WHERE coupon_id = 'C3'",
            "invariant 5: order X1 (CLOSED) has coupon C3 USED, locked_by_order null (0 UNPAID/PAID orders hold it)"),
        broken(
            "locked coupon without an order",
            "UPDATE coupons SET status = 'LOCKED', locked_by_order = 'GHOST' WHERE coupon_id = 'C5'",
            "invariant 5: coupon C5 is LOCKED, locked_by_order GHOST, but that order does not exist"),
        broken(
            "order names a missing coupon",
            "UPDATE orders SET coupon_id = 'C9' WHERE order_id = 'P1'",
            "invariant 5: order P1 (PAID) names coupon C9, which does not exist"),
        broken(
            "coupon held by two unpaid orders",
            "UPDATE orders SET coupon_id = 'C1' WHERE order_id = 'U2'",
            "invariant 5: coupon C1 is held by 2 UNPAID/PAID orders"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource
  void violations(String description, String breakingSql, String expected) {
    schema.execute(List.of(breakingSql));

    List<String> violations = checker.violations();

    assertThat(violations).as(description).contains(expected);
    assertThatThrownBy(checker::assertHolds)
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining(violations.size() + " invariant violation(s)")
        .hasMessageContaining(expected);
  }

  @Test
  void assertHoldsListsFiftyAndCountsAll() {
    schema.execute(
        IntStream.range(0, 60)
            .mapToObj(
                i -> "INSERT INTO stock (sku_id, available, total) VALUES ('BAD-" + i + "', 1, 2)")
            .toList());

    assertThat(checker.violations()).hasSize(60);
    assertThatThrownBy(checker::assertHolds)
        .hasMessageStartingWith("60 invariant violation(s), first 50:")
        .satisfies(
            error ->
                assertThat(error.getMessage().lines().filter(l -> l.startsWith("  - ")))
                    .hasSize(50));
  }

  private static Arguments broken(String description, String sql, String expected) {
    return Arguments.of(description, sql, expected);
  }
}
