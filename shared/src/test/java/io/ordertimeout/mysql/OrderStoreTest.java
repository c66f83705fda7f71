package io.ordertimeout.mysql;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.Order;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.OrderStatus;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.payment.PaidTrade;
import io.ordertimeout.testing.TestStack;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.TimeZone;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

// alone in its JVM while it runs (the fast tier runs classes in parallel): it captures the root
// logger's lines
@Isolated
class OrderStoreTest {
  private final TestStack stack = TestStack.create("order-store");

  /** The users' zone (UTC+8, no DST): the JVM zone of every host that is not Lambda. */
  private static final TimeZone SHANGHAI = TimeZone.getTimeZone("Asia/Shanghai");

  private final TimeZone jvmZone = TimeZone.getDefault();

  @AfterEach
  void tearDown() {
    TimeZone.setDefault(jvmZone);
    stack.assertInvariants();
    stack.close();
  }

  /**
   * On a JVM in Asia/Shanghai a deadline written in the JVM's zone is 8 hours early. The test sets
   * the zone itself, so it fails on such code even where the build runs in UTC.
   */
  @Test
  void deadlinesAreUtcWhateverTheJvmZone() {
    TimeZone.setDefault(SHANGHAI);
    stack.seedSku("a", 10);
    Order placed = stack.place("ord_tz1", "u1", 600, null, new OrderItem("a", 1)).order();

    Order read = stack.app().orders().find(TenantIds.DEFAULT, "ord_tz1").orElseThrow();
    Instant dbNow = stack.sql(DbTime::now);
    // By the database's own clock, in SQL: the deadline is 600 s after placing, less the few
    // seconds this test has run since (8 h early would be -28,200 s).
    long dueInMicros =
        stack.count(
            "SELECT TIMESTAMPDIFF(MICROSECOND, NOW(3), expire_at) FROM orders WHERE order_id = ?",
            "ord_tz1");
    long ageMicros =
        stack.count(
            "SELECT TIMESTAMPDIFF(MICROSECOND, created_at, NOW(3)) FROM orders WHERE order_id = ?",
            "ord_tz1");

    assertThat(dueInMicros).isBetween(570_000_000L, 600_000_000L);
    assertThat(ageMicros).isBetween(0L, 30_000_000L);
    assertThat(read.expireAt()).isEqualTo(placed.expireAt());
    assertThat(read.createdAt()).isEqualTo(placed.createdAt());
    assertThat(Duration.between(dbNow, read.expireAt()))
        .isBetween(Duration.ofSeconds(570), Duration.ofSeconds(600));
    assertThat(stack.app().timers().deadlineOf(TenantIds.DEFAULT, "ord_tz1"))
        .hasValue(placed.expireAt().toEpochMilli());
  }

  /**
   * MariaDB 10.x can store a deadline of .114 as .000 (Connector/J sends no fraction to a server
   * announcing 5.5.5-10.x) while the Redis timer keeps .114. Deadlines come from NOW(3), so their
   * milliseconds are whatever the clock says: place until one is not .000.
   */
  @Test
  void aDeadlineKeepsItsMillisecondsInMySqlAndInRedis() {
    stack.seedSku("a", 10);
    Order placed = null;
    for (int i = 0; i < 5 && (placed == null || placed.expireAt().getNano() == 0); i++) {
      placed = stack.place("ord_ms" + i, "u1", 600, null, new OrderItem("a", 1)).order();
    }
    String id = placed.orderId();
    long millis = placed.expireAt().toEpochMilli();

    assertThat(millis % 1000).isNotZero();
    assertThat(stack.app().orders().find(TenantIds.DEFAULT, id).orElseThrow().expireAt())
        .isEqualTo(placed.expireAt());
    assertThat(
            stack.count(
                "SELECT CAST(DATE_FORMAT(expire_at, '%f') AS UNSIGNED) FROM orders"
                    + " WHERE order_id = ?",
                id))
        .isEqualTo(millis % 1000 * 1000);
    assertThat(stack.app().timers().deadlineOf(TenantIds.DEFAULT, id)).hasValue(millis);
  }

  /** A time the application binds (WeChat's success_time here) keeps its zone and milliseconds. */
  @Test
  void aBoundTimeIsStoredAsTheSameUtcInstantToTheMillisecond() {
    TimeZone.setDefault(SHANGHAI);
    stack.seedSku("a", 10);
    stack.place("ord_paidms", "u1", 600, null, new OrderItem("a", 1));
    Instant success = Instant.parse("2026-01-02T03:04:05.114Z");

    stack
        .app()
        .payments()
        .apply(
            new PaidTrade(
                "default", "ord_paidms", "txn-ms", 100, success, PaidTrade.Source.NOTIFY));

    assertThat(stack.dump("SELECT DATE_FORMAT(paid_at, '%Y-%m-%d %H:%i:%s.%f') FROM orders"))
        .containsExactly("2026-01-02 03:04:05.114000|");
    assertThat(stack.app().orders().find(TenantIds.DEFAULT, "ord_paidms").orElseThrow().paidAt())
        .isEqualTo(success);
    assertThat(
            stack.count("SELECT COUNT(*) FROM orders WHERE paid_at = ?", "2026-01-02 03:04:05.114"))
        .isEqualTo(1);
  }

  @Test
  void aPlacedOrderReadsBackWithItsItemsAndUtcTimes() {
    stack.seedSku("a", 10);
    stack.seedSku("b", 10);
    stack.seedCoupon("cpn-1", "u1");
    stack.place("ord_store1", "u1", 600, "cpn-1", new OrderItem("b", 1), new OrderItem("a", 3));

    Order order = stack.app().orders().find(TenantIds.DEFAULT, "ord_store1").orElseThrow();

    assertThat(order.orderId()).isEqualTo("ord_store1");
    assertThat(order.tenantId()).isEqualTo("default");
    assertThat(order.userId()).isEqualTo("u1");
    assertThat(order.status()).isEqualTo(OrderStatus.UNPAID);
    assertThat(order.amountFen()).isEqualTo(100);
    assertThat(order.couponId()).isEqualTo("cpn-1");
    assertThat(order.prepaid()).isFalse();
    assertThat(order.items()).containsExactly(new OrderItem("a", 3), new OrderItem("b", 1));
    assertThat(Duration.between(order.createdAt(), order.expireAt()))
        .isEqualTo(Duration.ofSeconds(600));
    assertThat(order.paidAt()).isNull();
    assertThat(order.closedAt()).isNull();
    Instant dbNow = stack.sql(DbTime::now);
    assertThat(Duration.between(order.createdAt(), dbNow).abs()).isLessThan(Duration.ofMinutes(1));
  }

  @Test
  void unknownIdsAreAbsentAndBatchesLoadInTwoQueries() {
    stack.seedSku("a", 100);
    List<String> ids =
        stack.bulkPlace("batch-", 3, Duration.ofMinutes(5), i -> new OrderItem("a", i + 1));

    assertThat(stack.app().orders().find(TenantIds.DEFAULT, "ord_missing")).isEmpty();
    List<Order> none = stack.sql(c -> OrderStore.findAll(c, TenantIds.DEFAULT, List.of()));
    assertThat(none).isEmpty();
    List<Order> found =
        stack.sql(
            c ->
                OrderStore.findAll(
                    c, TenantIds.DEFAULT, List.of(ids.get(0), "ord_missing", ids.get(2))));

    assertThat(found)
        .extracting(Order::orderId, o -> o.items().get(0).quantity())
        .containsExactlyInAnyOrder(
            org.assertj.core.groups.Tuple.tuple(ids.get(0), 1),
            org.assertj.core.groups.Tuple.tuple(ids.get(2), 3));
  }

  @Test
  void placeholdersAndTimeLiterals() {
    TimeZone.setDefault(SHANGHAI);

    assertThat(OrderStore.placeholders(3)).isEqualTo("?,?,?");
    // UTC wall-clock time to the millisecond, whatever the JVM's zone; sub-milliseconds are cut.
    assertThat(DbTime.literal(java.time.LocalDateTime.parse("2025-03-01T12:34:56.789999")))
        .isEqualTo("2025-03-01 12:34:56.789");
  }
}
