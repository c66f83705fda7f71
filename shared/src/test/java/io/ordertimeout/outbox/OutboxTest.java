package io.ordertimeout.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.lettuce.core.Range;
import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.OrderRejected;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.payment.PaidTrade;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.util.Json;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The outbox written with each state change, and the relay to the Redis stream. */
class OutboxTest {
  private TestStack stack;

  @AfterEach
  void tearDown() {
    if (stack != null) {
      stack.close();
    }
  }

  private TestStack stack(String hint) {
    stack = TestStack.create(hint);
    stack.seedSku("sku-1", 1_000);
    return stack;
  }

  private void pay(String orderId) {
    stack
        .app()
        .payments()
        .apply(
            new PaidTrade("default", orderId, "tx-" + orderId, 100, null, PaidTrade.Source.NOTIFY));
  }

  /** The stream's documents, oldest first. */
  private List<JsonNode> streamed() {
    List<JsonNode> docs = new ArrayList<>();
    stack
        .app()
        .redis()
        .sync()
        .xrange(stack.app().stream().key(), Range.create("-", "+"))
        .forEach(m -> docs.add(read(m.getBody().get("e"))));
    return docs;
  }

  private static JsonNode read(String json) {
    try {
      return Json.MAPPER.readTree(json);
    } catch (Exception e) {
      throw new AssertionError(json, e);
    }
  }

  private List<String> outbox() {
    return stack.dump(
        "SELECT order_id, event_type, tenant_id, schema_version, payload,"
            + " streamed_at IS NULL AS unstreamed FROM outbox ORDER BY seq");
  }

  /** Per order, the event types in order of first appearance on the stream (dedup by id). */
  private Map<String, List<String>> firstDeliveries(List<JsonNode> docs) {
    Map<String, List<String>> byOrder = new LinkedHashMap<>();
    java.util.Set<String> seen = new java.util.HashSet<>();
    for (JsonNode d : docs) {
      if (seen.add(d.get("id").asText())) {
        byOrder
            .computeIfAbsent(d.get("orderId").asText(), k -> new ArrayList<>())
            .add(d.get("seq").asText());
      }
    }
    return byOrder;
  }

  @Test
  void everyStateChangeWritesItsEventInItsOwnTransactionAndNothingReachesRedisBeforeTheRelay() {
    stack("outbox-writes");
    stack.place("ob-place-01", "u1", 900, null, new OrderItem("sku-1", 1));
    stack.place("ob-paid-001", "u1", 900, null, new OrderItem("sku-1", 1));
    stack.place("ob-cancel-1", "u2", 900, null, new OrderItem("sku-1", 1));
    pay("ob-paid-001");
    assertThat(stack.app().cancels().request(TenantIds.DEFAULT, "ob-cancel-1").accepted()).isTrue();
    // a repeated cancel is accepted again but records nothing more
    assertThat(stack.app().cancels().request(TenantIds.DEFAULT, "ob-cancel-1").accepted()).isTrue();
    stack.app().closer().close(TenantIds.DEFAULT, List.of("ob-cancel-1"), CloseReason.USER_CANCEL);

    assertThat(outbox())
        .containsExactly(
            "ob-place-01|created|default|1|{\"amountFen\":100,\"expireAt\":"
                + expireAt("ob-place-01")
                + ",\"userId\":\"u1\"}|1|",
            "ob-paid-001|created|default|1|{\"amountFen\":100,\"expireAt\":"
                + expireAt("ob-paid-001")
                + ",\"userId\":\"u1\"}|1|",
            "ob-cancel-1|created|default|1|{\"amountFen\":100,\"expireAt\":"
                + expireAt("ob-cancel-1")
                + ",\"userId\":\"u2\"}|1|",
            "ob-paid-001|paid|default|1|{\"transactionId\":\"tx-ob-paid-001\"}|1|",
            "ob-cancel-1|cancel_requested|default|1|{\"userId\":\"u2\"}|1|",
            "ob-cancel-1|closed|default|1|{\"lagMs\":"
                + lag("ob-cancel-1")
                + ",\"reason\":\"USER_CANCEL\"}|1|");
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE cancel_requested_at IS NOT NULL"))
        .isEqualTo(1);
    assertThat(stack.count("SELECT COUNT(DISTINCT event_id) FROM outbox")).isEqualTo(6);
    assertThat(streamed()).isEmpty();
  }

  private String expireAt(String orderId) {
    return Long.toString(
        stack
            .app()
            .orders()
            .find(TenantIds.DEFAULT, orderId)
            .orElseThrow()
            .expireAt()
            .toEpochMilli());
  }

  private String lag(String orderId) {
    return Long.toString(
        stack.count(
            "SELECT TIMESTAMPDIFF(MICROSECOND, expire_at, closed_at) DIV 1000 FROM orders"
                + " WHERE order_id = ?",
            orderId));
  }

  @Test
  void aRolledBackChangeLeavesNoEventAndACancelOfAPaidOrderRecordsNothing() {
    stack("outbox-rollback");
    assertThatThrownBy(
            () -> stack.place("ob-nostock1", "u1", 900, null, new OrderItem("sku-1", 5_000)))
        .isInstanceOf(OrderRejected.class);
    stack.place("ob-paid-002", "u1", 900, null, new OrderItem("sku-1", 1));
    pay("ob-paid-002");
    assertThatThrownBy(() -> stack.app().cancels().request(TenantIds.DEFAULT, "ob-paid-002"))
        .isInstanceOf(OrderRejected.class);
    assertThatThrownBy(() -> stack.app().cancels().request(TenantIds.DEFAULT, "ob-unknown1"))
        .isInstanceOf(OrderRejected.class);

    assertThat(stack.dump("SELECT order_id, event_type FROM outbox ORDER BY seq"))
        .containsExactly("ob-paid-002|created|", "ob-paid-002|paid|");
  }

  @Test
  void aBatchsClosedEventsAreOnePerOrderInOrderEachWithItsLagAndItsOwnId() throws Exception {
    stack("outbox-closed");
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      String id = String.format("ob-cls-%04d", i);
      stack.place(id, "u1", 900, null, new OrderItem("sku-1", 1));
      ids.add(id);
    }
    stack.app().closer().close(TenantIds.DEFAULT, ids, CloseReason.USER_CANCEL);

    List<String> events =
        stack.dump(
            "SELECT order_id, event_id, payload, trace_id IS NULL FROM outbox"
                + " WHERE event_type = 'closed' ORDER BY seq");
    assertThat(events).hasSize(40);
    for (int i = 0; i < 40; i++) {
      String[] row = events.get(i).split("\\|");
      assertThat(row[0]).isEqualTo(ids.get(i));
      assertThat(row[1])
          .matches("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
      assertThat(Json.MAPPER.readTree(row[2]))
          .isEqualTo(
              Json.MAPPER.readTree(
                  "{\"lagMs\":" + lag(ids.get(i)) + ",\"reason\":\"USER_CANCEL\"}"));
      assertThat(row[3]).as("no trace id outside an invocation").isEqualTo("1");
    }
    assertThat(stack.count("SELECT COUNT(DISTINCT event_id) FROM outbox")).isEqualTo(80);
    assertThat(stack.count("SELECT COUNT(*) FROM outbox WHERE schema_version <> 1")).isZero();
  }

  @Test
  void theRelayMovesEveryRowToTheStreamInCommitOrderOnceAndMarksIt() {
    stack("outbox-relay");
    for (int i = 0; i < 30; i++) {
      stack.place(String.format("ob-rel-%04d", i), "u1", 900, null, new OrderItem("sku-1", 1));
    }
    pay("ob-rel-0003");
    stack.app().cancels().request(TenantIds.DEFAULT, "ob-rel-0004");
    OutboxRelay relay = stack.app().newRelay(RelaySettings.defaults().withBatch(7), null);

    int moved = 0;
    for (int pass = 0; pass < 5; pass++) {
      moved += relay.relayOnce();
    }

    assertThat(moved).isEqualTo(32);
    List<JsonNode> docs = streamed();
    assertThat(docs).extracting(d -> d.get("seq").asLong()).isSorted().hasSize(32);
    assertThat(docs.get(0).get("type").asText()).isEqualTo("created");
    assertThat(docs.get(0).get("v").asInt()).isEqualTo(1);
    assertThat(docs.get(0).get("tenantId").asText()).isEqualTo("default");
    assertThat(docs.get(0).get("userId").asText()).isEqualTo("u1");
    assertThat(stack.count("SELECT COUNT(*) FROM outbox WHERE streamed_at IS NULL")).isZero();
    assertThat(stack.count("SELECT COUNT(*) FROM outbox WHERE bridged_at IS NULL")).isEqualTo(32);
    // the consumers' parser reads the relayed documents
    docs.forEach(d -> io.ordertimeout.stream.OrderEvent.parse(d.toString()));
  }

  @Test
  void aRelayKilledBetweenDeliveryAndMarkLosesNothingAndItsSuccessorDeliversAgain() {
    stack("outbox-killed");
    for (int i = 0; i < 12; i++) {
      stack.place(String.format("ob-kil-%04d", i), "u1", 900, null, new OrderItem("sku-1", 1));
    }
    StreamPublisher real = new StreamPublisher(stack.app().stream());
    Publisher dying =
        new Publisher() {
          @Override
          public Destination destination() {
            return Destination.STREAM;
          }

          @Override
          public List<Long> publish(List<OutboxRow> rows) {
            real.publish(rows.subList(0, 5));
            throw new IllegalStateException("relay killed after 5 of " + rows.size());
          }
        };
    RelaySettings settings = RelaySettings.defaults().withLease(Duration.ofSeconds(1));
    OutboxRelay killed =
        new OutboxRelay(stack.app().outbox(), List.of(dying), settings, stack.app().metrics());

    assertThat(killed.relayOnce()).isZero();
    assertThat(stack.count("SELECT COUNT(*) FROM outbox WHERE streamed_at IS NULL")).isEqualTo(12);
    // its lease runs out (the process is gone); a successor delivers everything
    OutboxRelay successor = stack.app().newRelay(settings, null);
    await(() -> successor.relayOnce() > 0);

    List<JsonNode> docs = streamed();
    assertThat(docs).hasSize(17);
    assertThat(docs.stream().map(d -> d.get("id").asText()).distinct()).hasSize(12);
    assertThat(stack.count("SELECT COUNT(*) FROM outbox WHERE streamed_at IS NULL")).isZero();
    assertThat(stack.app().metrics().counter("outbox_relay_failures")).isEqualTo(1);
  }

  @Test
  void twoRelaysAtOnceKeepEachOrdersFirstDeliveriesInCommitOrder() throws Exception {
    stack("outbox-two-relays");
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      String id = String.format("ob-two-%04d", i);
      ids.add(id);
      stack.place(id, "u1", 900, null, new OrderItem("sku-1", 1));
    }
    // Relay A reads a batch, then stalls past its lease before delivering it.
    RelaySettings settings =
        RelaySettings.defaults().withLease(Duration.ofSeconds(1)).withBatch(50);
    CountDownLatch read = new CountDownLatch(1);
    CountDownLatch resume = new CountDownLatch(1);
    StreamPublisher real = new StreamPublisher(stack.app().stream());
    Publisher stalling =
        new Publisher() {
          @Override
          public Destination destination() {
            return Destination.STREAM;
          }

          @Override
          public List<Long> publish(List<OutboxRow> rows) {
            read.countDown();
            try {
              resume.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
            return real.publish(rows);
          }
        };
    OutboxRelay a =
        new OutboxRelay(stack.app().outbox(), List.of(stalling), settings, stack.app().metrics());
    Thread stalled = new Thread(a::relayOnce);
    stalled.start();
    assertThat(read.await(10, TimeUnit.SECONDS)).isTrue();
    // Meanwhile the orders change on: paid and cancelled-then-closed events commit.
    for (int i = 0; i < 40; i += 2) {
      pay(ids.get(i));
    }
    for (int i = 1; i < 40; i += 2) {
      stack.app().cancels().request(TenantIds.DEFAULT, ids.get(i));
    }
    stack.app().closer().close(TenantIds.DEFAULT, ids, CloseReason.USER_CANCEL);
    // B takes over once A's lease ran out and delivers everything.
    OutboxRelay b = stack.app().newRelay(settings, null);
    await(() -> b.relayOnce() > 0);
    while (b.relayOnce() > 0) {
      // drain
    }
    resume.countDown();
    stalled.join(10_000);

    List<JsonNode> docs = streamed();
    // 100 events (40 created, 20 paid, 20 cancel_requested, 20 closed) and A's 40 late duplicates
    assertThat(docs).hasSize(140);
    assertThat(docs.stream().map(d -> d.get("id").asText()).distinct()).hasSize(100);
    Map<String, List<String>> first = firstDeliveries(docs);
    assertThat(first).hasSize(40);
    for (String id : ids) {
      List<String> expected =
          stack.dump("SELECT seq FROM outbox WHERE order_id = '" + id + "' ORDER BY seq").stream()
              .map(seq -> seq.replace("|", ""))
              .toList();
      assertThat(first.get(id)).as(id).containsExactlyElementsOf(expected);
    }
  }

  @Test
  void retentionDeletesOnlyOldRelayedRowsInBoundedBatches() {
    stack("outbox-retention");
    for (int i = 0; i < 25; i++) {
      stack.place(String.format("ob-ret-%04d", i), "u1", 900, null, new OrderItem("sku-1", 1));
    }
    stack.app().newRelay(RelaySettings.defaults(), null).relayOnce();
    // 20 rows are 8 days old: 15 relayed, 5 not; 5 recent rows are relayed.
    stack.update(
        "UPDATE outbox SET committed_at = committed_at - INTERVAL 8 DAY ORDER BY seq LIMIT 20");
    stack.update(
        "UPDATE outbox SET streamed_at = NULL WHERE seq IN (SELECT seq FROM (SELECT seq FROM"
            + " outbox ORDER BY seq LIMIT 5) s)");
    RelaySettings settings = RelaySettings.defaults().withRetention(Duration.ofDays(7), 4);
    OutboxStore store = stack.app().outbox();

    assertThat(store.deleteDelivered(settings.retention(), List.of(Destination.STREAM), 4))
        .isEqualTo(4);
    int deleted =
        new OutboxRetention(store, List.of(Destination.STREAM), settings, stack.app().metrics())
            .deleteOld();

    assertThat(deleted).isEqualTo(11);
    assertThat(stack.count("SELECT COUNT(*) FROM outbox")).isEqualTo(10);
    assertThat(
            stack.count(
                "SELECT COUNT(*) FROM outbox WHERE committed_at < NOW(3) - INTERVAL 7 DAY"
                    + " AND streamed_at IS NOT NULL"))
        .isZero();
    assertThat(stack.count("SELECT COUNT(*) FROM outbox WHERE streamed_at IS NULL")).isEqualTo(5);
    // with EventBridge among the destinations, nothing here was bridged: nothing goes
    assertThat(
            store.deleteDelivered(
                Duration.ofHours(1), List.of(Destination.STREAM, Destination.EVENTBRIDGE), 100))
        .isZero();
  }

  @Test
  void theLagMetricIsTheAgeOfTheOldestUnrelayedRow() {
    stack("outbox-lag");
    stack.place("ob-lag-0001", "u1", 900, null, new OrderItem("sku-1", 1));
    stack.update("UPDATE outbox SET committed_at = NOW(3) - INTERVAL 90 SECOND");
    OutboxStore store = stack.app().outbox();

    assertThat(store.oldestPendingAgeMillis(Destination.STREAM)).isBetween(90_000L, 120_000L);
    assertThat(store.pendingCount(Destination.STREAM)).isEqualTo(1);
    stack.app().newRelay(RelaySettings.defaults(), null).relayOnce();
    assertThat(store.oldestPendingAgeMillis(Destination.STREAM)).isZero();
  }

  static void await(java.util.function.BooleanSupplier condition) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("condition not met within 20 s");
      }
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }
}
