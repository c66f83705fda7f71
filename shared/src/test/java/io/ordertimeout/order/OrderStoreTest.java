package io.ordertimeout.order;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.testing.TestStack;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class OrderStoreTest {
  private final TestStack stack = TestStack.create("order-store");

  @AfterEach
  void tearDown() {
    stack.assertInvariants();
    stack.close();
  }

  @Test
  void aPlacedOrderReadsBackWithItsItemsAndUtcTimes() {
    stack.seedSku("a", 10);
    stack.seedSku("b", 10);
    stack.seedCoupon("cpn-1", "u1");
    stack.place("ord_store1", "u1", 600, "cpn-1", new OrderItem("b", 1), new OrderItem("a", 3));

    Order order = stack.app().orders().find("ord_store1").orElseThrow();

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
    Instant dbNow = stack.sql(OrderStore::dbNow);
    assertThat(Duration.between(order.createdAt(), dbNow).abs()).isLessThan(Duration.ofMinutes(1));
  }

  @Test
  void unknownIdsAreAbsentAndBatchesLoadInTwoQueries() {
    stack.seedSku("a", 100);
    List<String> ids =
        stack.bulkPlace("batch-", 3, Duration.ofMinutes(5), i -> new OrderItem("a", i + 1));

    assertThat(stack.app().orders().find("ord_missing")).isEmpty();
    List<Order> none = stack.sql(c -> OrderStore.findAll(c, List.of()));
    assertThat(none).isEmpty();
    List<Order> found =
        stack.sql(c -> OrderStore.findAll(c, List.of(ids.get(0), "ord_missing", ids.get(2))));

    assertThat(found)
        .extracting(Order::orderId, o -> o.items().get(0).quantity())
        .containsExactlyInAnyOrder(
            org.assertj.core.groups.Tuple.tuple(ids.get(0), 1),
            org.assertj.core.groups.Tuple.tuple(ids.get(2), 3));
  }

  @Test
  void placeholdersAndTimestampsRoundTrip() {
    Instant t = Instant.parse("2025-03-01T12:34:56.789Z");

    assertThat(OrderStore.placeholders(3)).isEqualTo("?,?,?");
    assertThat(OrderStore.timestamp(t).toLocalDateTime().toString())
        .isEqualTo("2025-03-01T12:34:56.789");
  }
}
