package io.ordertimeout.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
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
          "INSERT INTO stock (tenant_id, sku_id, available, reserved, sold, total) VALUES ('default', 'SKU-A', 95, 2, 3, 100), ('default', 'SKU-B', 8, 1, 1, 10)",
          "INSERT INTO coupons (tenant_id, coupon_id, owner_user_id, status, locked_by_order) VALUES"
              + " ('default', 'C1', 'u1', 'LOCKED', 'U1'), ('default', 'C2', 'u1', 'USED', 'P1'), ('default', 'C3', 'u1', 'AVAILABLE', NULL),"
              + " ('default', 'C4', 'u2', 'LOCKED', 'U2'), ('default', 'C5', 'u2', 'AVAILABLE', NULL)",
          "INSERT INTO orders (tenant_id, order_id, user_id, status, amount_fen, coupon_id, request_hash, created_at, expire_at,"
              + " paid_at, closed_at, close_reason) VALUES"
              + " ('default', 'U1', 'u1', 'UNPAID', 100, 'C1', REPEAT('a', 64), '2025-01-01 00:00:00', '2025-01-01 00:15:00', NULL, NULL, NULL),"
              + " ('default', 'P1', 'u1', 'PAID', 100, 'C2', REPEAT('b', 64), '2025-01-01 00:00:00', '2025-01-01 00:15:00', '2025-01-01 00:05:00', NULL, NULL),"
              + " ('default', 'X1', 'u1', 'CLOSED', 100, 'C3', REPEAT('c', 64), '2025-01-01 00:00:00', '2025-01-01 00:15:00', NULL, '2025-01-01 00:15:00.050', 'TIMEOUT'),"
              + " ('default', 'X2', 'u2', 'CLOSED', 100, 'C4', REPEAT('d', 64), '2025-01-01 00:00:00', '2025-01-01 00:15:00', NULL, '2025-01-01 00:03:00', 'CANCELLED'),"
              + " ('default', 'U2', 'u2', 'UNPAID', 100, 'C4', REPEAT('e', 64), '2025-01-01 00:04:00', '2025-01-01 00:19:00', NULL, NULL, NULL)",
          "INSERT INTO order_items (tenant_id, order_id, sku_id, quantity) VALUES"
              + " ('default', 'U1', 'SKU-A', 2), ('default', 'P1', 'SKU-A', 3), ('default', 'P1', 'SKU-B', 1), ('default', 'X1', 'SKU-A', 4), ('default', 'X2', 'SKU-B', 1), ('default', 'U2', 'SKU-B', 1)",
          "INSERT INTO stock_movements (tenant_id, order_id, sku_id, kind, quantity) VALUES"
              + " ('default', 'U1', 'SKU-A', 'RESERVE', 2),"
              + " ('default', 'P1', 'SKU-A', 'RESERVE', 3), ('default', 'P1', 'SKU-A', 'SELL', 3), ('default', 'P1', 'SKU-B', 'RESERVE', 1), ('default', 'P1', 'SKU-B', 'SELL', 1),"
              + " ('default', 'X1', 'SKU-A', 'RESERVE', 4), ('default', 'X1', 'SKU-A', 'RELEASE', 4),"
              + " ('default', 'X2', 'SKU-B', 'RESERVE', 1), ('default', 'X2', 'SKU-B', 'RELEASE', 1),"
              + " ('default', 'U2', 'SKU-B', 'RESERVE', 1)");

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
            "INSERT INTO order_items VALUES ('default', 'U1', 'SKU-Z', 1)",
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
            "INSERT INTO stock_movements (tenant_id, order_id, sku_id, kind, quantity) VALUES ('default', 'X1', 'SKU-A', 'SELL', 4)",
            "invariant 3: order X1 (CLOSED) SKU SKU-A quantity 4 has RESERVE 4, RELEASE 4, SELL 4"),
        broken(
            "paid order also released",
            "INSERT INTO stock_movements (tenant_id, order_id, sku_id, kind, quantity) VALUES ('default', 'P1', 'SKU-B', 'RELEASE', 1)",
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
            "INSERT INTO stock_movements (tenant_id, order_id, sku_id, kind, quantity) VALUES ('default', 'U1', 'SKU-A', 'RELEASE', 2)",
            "invariant 3: order U1 (UNPAID) SKU SKU-A quantity 2 has RESERVE 2, RELEASE 2, SELL none"),
        broken(
            "movement for no item",
            "INSERT INTO stock_movements (tenant_id, order_id, sku_id, kind, quantity) VALUES ('default', 'GHOST', 'SKU-A', 'RESERVE', 5)",
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
                i ->
                    "INSERT INTO stock (tenant_id, sku_id, available, total) VALUES ('default', 'BAD-"
                        + i
                        + "', 1, 2)")
            .toList());

    assertThat(checker.violations()).hasSize(60);
    assertThatThrownBy(checker::assertHolds)
        .hasMessageStartingWith("60 invariant violation(s), first 50:")
        .satisfies(
            error ->
                assertThat(error.getMessage().lines().filter(l -> l.startsWith("  - ")))
                    .hasSize(50));
  }

  /**
   * The shop above plus orders living after payment, consistent with a receipt period of 10 days
   * and an after-sale window of 7 days. S1 shipped 01-02, due to be received 01-12. R1 received
   * AUTO 20 ms after its 01-12 deadline, due to complete 01-19. A1 confirmed by the user 01-05, an
   * after-sale open since 01-06. K1 extended once (due 01-12 -> 01-15), confirmed 01-05, an
   * after-sale open 01-06 to 01-07 (one day, so due 01-12 -> 01-13), completed 30 ms after 01-13.
   * Coupons: C6 EXPIRED by the sweep 10 ms after its validity, C7 AVAILABLE past its validity (the
   * sweep has not run), C8 valid for ever after, C9 locked by X3 past its validity and EXPIRED when
   * X3 closed.
   */
  @Nested
  class AfterPayment {
    private static final String SHIPPED =
        "'2025-01-02 00:00:00', 'SF', 'SF1001', '2025-01-12 00:00:00'";

    @BeforeEach
    void addLifecycle() {
      schema.execute(
          List.of(
              "INSERT INTO coupons (tenant_id, coupon_id, owner_user_id, status, locked_by_order, valid_until, expired_at) VALUES"
                  + " ('default', 'C6', 'u3', 'EXPIRED', NULL, '2025-01-03 00:00:00', '2025-01-03 00:00:00.010'),"
                  + " ('default', 'C7', 'u3', 'AVAILABLE', NULL, '2025-01-03 00:00:00', NULL),"
                  + " ('default', 'C8', 'u3', 'AVAILABLE', NULL, '2999-01-01 00:00:00', NULL),"
                  + " ('default', 'C9', 'u3', 'EXPIRED', NULL, '2025-01-03 00:10:00', '2025-01-03 00:15:00.050')",
              "INSERT INTO orders (tenant_id, order_id, user_id, status, amount_fen, coupon_id, request_hash, created_at, expire_at,"
                  + " paid_at, closed_at, close_reason) VALUES"
                  + " ('default', 'X3', 'u3', 'CLOSED', 100, 'C9', REPEAT('f', 64), '2025-01-03 00:00:00', '2025-01-03 00:15:00', NULL, '2025-01-03 00:15:00.050', 'TIMEOUT')",
              "INSERT INTO orders (tenant_id, order_id, user_id, status, amount_fen, request_hash, created_at, expire_at, paid_at,"
                  + " shipped_at, carrier, tracking_no, receive_due_at, receipt_extended_at, received_at, received_by,"
                  + " complete_due_at, after_sale_opened_at, after_sales, completed_at) VALUES"
                  + " ('default', 'S1', 'u3', 'SHIPPED', 100, REPEAT('1', 64), '2025-01-01 00:00:00', '2025-01-01 00:15:00', '2025-01-01 00:05:00',"
                  + SHIPPED
                  + ", NULL, NULL, NULL, NULL, NULL, 0, NULL),"
                  + " ('default', 'R1', 'u3', 'RECEIVED', 100, REPEAT('2', 64), '2025-01-01 00:00:00', '2025-01-01 00:15:00', '2025-01-01 00:05:00',"
                  + SHIPPED
                  + ", NULL, '2025-01-12 00:00:00.020', 'AUTO', '2025-01-19 00:00:00.020', NULL, 0, NULL),"
                  + " ('default', 'A1', 'u3', 'AFTER_SALE', 100, REPEAT('3', 64), '2025-01-01 00:00:00', '2025-01-01 00:15:00', '2025-01-01 00:05:00',"
                  + SHIPPED
                  + ", NULL, '2025-01-05 00:00:00', 'USER', '2025-01-12 00:00:00', '2025-01-06 00:00:00', 1, NULL),"
                  + " ('default', 'K1', 'u3', 'COMPLETED', 100, REPEAT('4', 64), '2025-01-01 00:00:00', '2025-01-01 00:15:00', '2025-01-01 00:05:00',"
                  + " '2025-01-02 00:00:00', 'SF', 'SF1004', '2025-01-15 00:00:00', '2025-01-03 00:00:00', '2025-01-05 00:00:00', 'USER',"
                  + " '2025-01-13 00:00:00', NULL, 1, '2025-01-13 00:00:00.030')",
              "INSERT INTO outbox (event_id, order_id, tenant_id, event_type, schema_version, payload, committed_at) VALUES"
                  + event("S1", "shipped", "{}", "2025-01-02 00:00:00")
                  + ","
                  + event("R1", "shipped", "{}", "2025-01-02 00:00:00")
                  + ","
                  + event(
                      "R1",
                      "received",
                      "{\"receivedBy\":\"AUTO\",\"receiveDueAt\":1736640000000,\"completeDueAt\":1737244800020}",
                      "2025-01-12 00:00:00.021")
                  + ","
                  + event("A1", "shipped", "{}", "2025-01-02 00:00:00")
                  + ","
                  + event("A1", "received", "{\"receivedBy\":\"USER\"}", "2025-01-05 00:00:00")
                  + ","
                  + event("A1", "after_sale_opened", "{}", "2025-01-06 00:00:00")
                  + ","
                  + event("K1", "shipped", "{}", "2025-01-02 00:00:00")
                  + ","
                  + event("K1", "receipt_extended", "{}", "2025-01-03 00:00:00")
                  + ","
                  + event("K1", "received", "{\"receivedBy\":\"USER\"}", "2025-01-05 00:00:00")
                  + ","
                  + event("K1", "after_sale_opened", "{}", "2025-01-06 00:00:00.001")
                  + ","
                  + event("K1", "after_sale_resolved", "{}", "2025-01-07 00:00:00.002")
                  + ","
                  + event(
                      "K1",
                      "completed",
                      "{\"completeDueAt\":1736726400000}",
                      "2025-01-13 00:00:00.031")));
    }

    @Test
    void consistentLifeHasNoViolations() {
      assertThat(checker.violations()).isEmpty();
      assertThat(checker.withAfterSaleWindow(Duration.ofDays(7)).violations()).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.ordertimeout.embedded.InvariantCheckerTest#lifecycleViolations")
    void violations(String description, String breakingSql, String expected) {
      schema.execute(List.of(breakingSql));

      List<String> violations = checker.violations();

      assertThat(violations).as(description).contains(expected);
      assertThatThrownBy(checker::assertHolds).hasMessageContaining(expected);
    }

    /**
     * K1's resolution did not move its deadline: due 7 days after receipt although a request stayed
     * open one day. Only a checker that knows the window sees it.
     */
    @Test
    void suspensionIgnoredIsSeenWithTheWindow() {
      schema.execute(
          List.of(
              "UPDATE orders SET complete_due_at = '2025-01-12 00:00:00',"
                  + " completed_at = '2025-01-12 00:00:00.030' WHERE order_id = 'K1'",
              "UPDATE outbox SET payload = '{\"completeDueAt\":1736640000000}',"
                  + " committed_at = '2025-01-12 00:00:00.031' WHERE order_id = 'K1' AND event_type = 'completed'"));

      assertThat(checker.violations()).isEmpty();
      assertThat(checker.withAfterSaleWindow(Duration.ofDays(7)).violations())
          .containsExactly(
              "invariant 8: order K1 (COMPLETED) received at 2025-01-05 00:00:00 is due to complete at"
                  + " 2025-01-12 00:00:00, 604800000 ms later, but the window 604800000 ms + 1 after-sale"
                  + " request(s) stayed open 86400001 ms");
    }

    /** Without the window, open time longer than all the time granted is still caught. */
    @Test
    void suspensionShorterThanTheOpenTimeIsSeenWithoutTheWindow() {
      schema.execute(
          List.of(
              "UPDATE outbox SET committed_at = '2025-01-20 00:00:00.001'"
                  + " WHERE order_id = 'K1' AND event_type = 'after_sale_resolved'"));

      assertThat(checker.violations())
          .containsExactly(
              "invariant 8: order K1 (COMPLETED) received at 2025-01-05 00:00:00 is due to complete at"
                  + " 2025-01-13 00:00:00, 691200000 ms later, but 1 after-sale request(s) stayed open"
                  + " 1209600000 ms");
    }

    @Test
    void unexpiredCouponsOnlyWhenAsked() {
      assertThat(checker.violations()).isEmpty();
      assertThat(checker.unexpiredCoupons(Duration.ofMinutes(1)))
          .singleElement(org.assertj.core.api.InstanceOfAssertFactories.STRING)
          .startsWith("invariant 10: coupon C7 is still AVAILABLE ")
          .endsWith(" ms after its valid_until 2025-01-03 00:00:00 (grace 60000 ms)");
      // a grace longer than the time since C7's validity ended (2025-01-03) hides it
      assertThat(checker.unexpiredCoupons(Duration.ofDays(365L * 100))).isEmpty();
    }
  }

  static Stream<Arguments> lifecycleViolations() {
    return Stream.of(
        broken(
            "shipped twice",
            "INSERT INTO outbox (event_id, order_id, tenant_id, event_type, schema_version, payload, committed_at) VALUES"
                + event("S1", "shipped", "{}", "2025-01-02 00:00:01"),
            "invariant 6: order S1 (SHIPPED, after_sales 0) has outbox events shipped 2, receipt_extended 0,"
                + " received 0, after_sale_opened 0, after_sale_resolved 0, completed 0"),
        broken(
            "extended twice",
            "INSERT INTO outbox (event_id, order_id, tenant_id, event_type, schema_version, payload, committed_at) VALUES"
                + event("K1", "receipt_extended", "{}", "2025-01-04 00:00:00"),
            "invariant 6: order K1 (COMPLETED, after_sales 1) has outbox events shipped 1, receipt_extended 2,"
                + " received 1, after_sale_opened 1, after_sale_resolved 1, completed 1"),
        broken(
            "received twice",
            "INSERT INTO outbox (event_id, order_id, tenant_id, event_type, schema_version, payload, committed_at) VALUES"
                + event("R1", "received", "{\"receivedBy\":\"USER\"}", "2025-01-12 00:00:01"),
            "invariant 6: order R1 (RECEIVED, after_sales 0) has outbox events shipped 1, receipt_extended 0,"
                + " received 2, after_sale_opened 0, after_sale_resolved 0, completed 0"),
        broken(
            "completed twice",
            "INSERT INTO outbox (event_id, order_id, tenant_id, event_type, schema_version, payload, committed_at) VALUES"
                + event("K1", "completed", "{}", "2025-01-13 00:00:01"),
            "invariant 6: order K1 (COMPLETED, after_sales 1) has outbox events shipped 1, receipt_extended 1,"
                + " received 1, after_sale_opened 1, after_sale_resolved 1, completed 2"),
        broken(
            "after_sales column ahead of the openings",
            "UPDATE orders SET after_sales = 2 WHERE order_id = 'K1'",
            "invariant 6: order K1 (COMPLETED, after_sales 2) has outbox events shipped 1, receipt_extended 1,"
                + " received 1, after_sale_opened 1, after_sale_resolved 1, completed 1"),
        broken(
            "resolved without an opening",
            "INSERT INTO outbox (event_id, order_id, tenant_id, event_type, schema_version, payload, committed_at) VALUES"
                + event("R1", "after_sale_resolved", "{}", "2025-01-13 00:00:00"),
            "invariant 6: order R1 (RECEIVED, after_sales 0) has outbox events shipped 1, receipt_extended 0,"
                + " received 1, after_sale_opened 0, after_sale_resolved 1, completed 0"),
        broken(
            "received automatically before the deadline",
            "UPDATE orders SET received_at = '2025-01-11 23:59:59.999' WHERE order_id = 'R1'",
            "invariant 7: order R1 (RECEIVED) received AUTO at 2025-01-11 23:59:59.999, before its"
                + " receive_due_at 2025-01-12 00:00:00"),
        broken(
            "automatic receipt event before the deadline",
            "UPDATE outbox SET committed_at = '2025-01-11 23:59:59' WHERE order_id = 'R1' AND event_type = 'received'",
            "invariant 7: order R1's AUTO received event (seq 3) committed at 1736639999000 ms, 1000 ms"
                + " before its receiveDueAt 1736640000000"),
        broken(
            "completed before the deadline",
            "UPDATE orders SET completed_at = '2025-01-12 23:59:59.999' WHERE order_id = 'K1'",
            "invariant 7: order K1 completed at 2025-01-12 23:59:59.999, before its complete_due_at"
                + " 2025-01-13 00:00:00"),
        broken(
            "completed event before the deadline",
            "UPDATE outbox SET committed_at = '2025-01-12 23:59:59.500' WHERE order_id = 'K1' AND event_type = 'completed'",
            "invariant 7: order K1's completed event (seq 12) committed at 1736726399500 ms, 500 ms before"
                + " its completeDueAt 1736726400000"),
        broken(
            "completed with an after-sale open (columns)",
            "UPDATE orders SET after_sale_opened_at = '2025-01-06 00:00:00' WHERE order_id = 'K1'",
            "invariant 9: order K1 is COMPLETED with after_sale_opened_at set"),
        broken(
            "completed with an after-sale open (events)",
            "DELETE FROM outbox WHERE order_id = 'K1' AND event_type = 'after_sale_resolved'",
            "invariant 8: order K1 completed (seq 12) after 1 after-sale openings but 0 resolutions"),
        broken(
            "shipped without a tracking number",
            "UPDATE orders SET tracking_no = NULL WHERE order_id = 'S1'",
            "invariant 9: order S1 is SHIPPED with tracking_no missing"),
        broken(
            "shipped without a receipt deadline",
            "UPDATE orders SET receive_due_at = NULL WHERE order_id = 'S1'",
            "invariant 9: order S1 is SHIPPED with receive_due_at missing"),
        broken(
            "shipped order already received",
            "UPDATE orders SET received_at = '2025-01-03 00:00:00', received_by = 'USER' WHERE order_id = 'S1'",
            "invariant 9: order S1 is SHIPPED with received_at set, received_by set"),
        broken(
            "received without a completion deadline",
            "UPDATE orders SET complete_due_at = NULL WHERE order_id = 'R1'",
            "invariant 9: order R1 is RECEIVED with complete_due_at missing"),
        broken(
            "received order with completed_at",
            "UPDATE orders SET completed_at = '2025-01-20 00:00:00' WHERE order_id = 'R1'",
            "invariant 9: order R1 is RECEIVED with completed_at set"),
        broken(
            "after-sale without its opening time",
            "UPDATE orders SET after_sale_opened_at = NULL WHERE order_id = 'A1'",
            "invariant 9: order A1 is AFTER_SALE with after_sale_opened_at missing"),
        broken(
            "completed without completed_at",
            "UPDATE orders SET completed_at = NULL WHERE order_id = 'K1'",
            "invariant 9: order K1 is COMPLETED with completed_at missing"),
        broken(
            "paid order with shipping columns",
            "UPDATE orders SET shipped_at = '2025-01-02 00:00:00', carrier = 'SF' WHERE order_id = 'P1'",
            "invariant 9: order P1 is PAID with shipped_at set, carrier set"),
        broken(
            "unpaid order extended",
            "UPDATE orders SET receipt_extended_at = '2025-01-02 00:00:00' WHERE order_id = 'U1'",
            "invariant 9: order U1 is UNPAID with receipt_extended_at set"),
        broken(
            "closed order with after-sales",
            "UPDATE orders SET after_sales = 1 WHERE order_id = 'X1'",
            "invariant 9: order X1 is CLOSED with after_sales 1"),
        broken(
            "coupon expired before its validity",
            "UPDATE coupons SET expired_at = '2025-01-02 23:59:59.999' WHERE coupon_id = 'C6'",
            "invariant 10: coupon C6 is EXPIRED with valid_until 2025-01-03 00:00:00, expired_at"
                + " 2025-01-02 23:59:59.999, locked_by_order null, held by 0 live order(s)"),
        broken(
            "coupon expired without a validity",
            "UPDATE coupons SET valid_until = NULL WHERE coupon_id = 'C6'",
            "invariant 10: coupon C6 is EXPIRED with valid_until null, expired_at 2025-01-03 00:00:00.010,"
                + " locked_by_order null, held by 0 live order(s)"),
        broken(
            "coupon expired while an unpaid order holds it",
            "UPDATE coupons SET status = 'EXPIRED', valid_until = '2025-01-01 00:00:00',"
                + " expired_at = '2025-01-01 00:01:00' WHERE coupon_id = 'C1'",
            "invariant 10: coupon C1 is EXPIRED with valid_until 2025-01-01 00:00:00, expired_at"
                + " 2025-01-01 00:01:00, locked_by_order U1, held by 1 live order(s)"),
        broken(
            "available coupon with expired_at",
            "UPDATE coupons SET expired_at = '2025-01-04 00:00:00' WHERE coupon_id = 'C8'",
            "invariant 10: coupon C8 is AVAILABLE with valid_until 2999-01-01 00:00:00, expired_at"
                + " 2025-01-04 00:00:00, locked_by_order null, held by 0 live order(s)"));
  }

  private static String event(String orderId, String type, String payload, String committedAt) {
    return String.format(
        " (UUID(), '%s', 'default', '%s', 1, '%s', '%s')", orderId, type, payload, committedAt);
  }

  private static Arguments broken(String description, String sql, String expected) {
    return Arguments.of(description, sql, expected);
  }
}
