package io.ordertimeout.consume;

import static io.ordertimeout.testing.Deadlines.expireNow;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.groups.Tuple.tuple;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import io.lettuce.core.Consumer;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.XReadArgs;
import io.ordertimeout.close.CloseResult;
import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.stream.EventStream;
import io.ordertimeout.stream.EventType;
import io.ordertimeout.stream.OrderEvent;
import io.ordertimeout.testing.Await;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.util.Json;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class StreamConsumerTest {
  private static final ExecutorService THREADS = Executors.newCachedThreadPool();

  private TestStack stack;

  @AfterEach
  void tearDown() {
    if (stack != null) {
      stack.close();
    }
  }

  /** A stack whose consumers retry after 200 ms and dead-letter at the 5th failed delivery. */
  private static TestStack quickRetries(String hint) {
    return TestStack.create(
        hint,
        c ->
            c.toBuilder().stream(
                    c.stream().withVisibility(Duration.ofMillis(200)).withMaxDeliveries(5))
                .build(),
        null);
  }

  /**
   * Runs one consumer invocation in the background until {@code until} holds (failing after 30 s,
   * the invocation's budget) and returns its stats.
   */
  static ConsumerStats consumeUntil(TestStack s, BooleanSupplier until) {
    long deadline = System.currentTimeMillis() + 30_000;
    try (StreamConsumer consumer = s.app().newStreamConsumer()) {
      CompletableFuture<ConsumerStats> run =
          CompletableFuture.supplyAsync(
              () -> consumer.run(() -> deadline - System.currentTimeMillis()), THREADS);
      try {
        Await.until("the consumer's awaited outcome", until);
      } finally {
        consumer.terminate();
      }
      return run.join();
    }
  }

  private long pending() {
    return stack
        .app()
        .redis()
        .sync()
        .xpending(stack.app().stream().key(), EventStream.GROUP)
        .getCount();
  }

  private String status(String orderId) {
    return stack
        .dump("SELECT status, close_reason FROM orders WHERE order_id = '" + orderId + "'")
        .get(0);
  }

  @Test
  void aConsumerKilledAfterTheCommitAndBeforeTheAckIsRedeliveredAndClosesOnce() {
    stack = quickRetries("killed-consumer");
    stack.seedSku("sku-1", 10);
    stack.seedCoupon("cp-1", "u1");
    stack.place("kill-000001", "u1", 900, "cp-1", new OrderItem("sku-1", 2));
    stack.app().events().cancelRequested("kill-000001", "default", "u1");
    var redis = stack.app().redis().sync();
    stack.app().stream().ensureGroup();
    // The doomed consumer (a name outside the pool): reads, closes, commits, then dies unacked.
    List<StreamMessage<String, String>> read =
        redis.xreadgroup(
            Consumer.from(EventStream.GROUP, "killed-1"),
            XReadArgs.StreamOffset.lastConsumed(stack.app().stream().key()));
    List<String> ids =
        read.stream()
            .map(m -> OrderEvent.parse(m.getBody().get(EventStream.FIELD)))
            .filter(e -> e.type() == EventType.CANCEL_REQUESTED)
            .map(OrderEvent::orderId)
            .toList();
    CloseResult first = stack.app().closer().close(TenantIds.DEFAULT, ids, CloseReason.USER_CANCEL);
    assertThat(first.closed()).hasSize(1);
    assertThat(pending()).isEqualTo(read.size());

    ConsumerStats stats = consumeUntil(stack, () -> pending() == 0);

    assertThat(stats.claimed()).isGreaterThanOrEqualTo(1);
    assertThat(stats.closed()).isZero();
    assertThat(pending()).isZero();
    assertThat(status("kill-000001")).isEqualTo("CLOSED|USER_CANCEL|");
    assertThat(stack.count("SELECT COUNT(*) FROM stock_movements WHERE kind = 'RELEASE'"))
        .isEqualTo(1);
    assertThat(stack.dump("SELECT available, reserved FROM stock")).containsExactly("10|0|");
    assertThat(stack.dump("SELECT status FROM coupons")).containsExactly("AVAILABLE|");
    stack.assertInvariants();
  }

  @Test
  void anUnparseableEntryIsDeadLetteredAfterFiveDeliveriesWithItsHistory() throws Exception {
    stack = quickRetries("poison-payload");
    stack.seedSku("sku-1", 10);
    stack.place("good-000001", "u1", 900, null, new OrderItem("sku-1", 1));
    String key = stack.app().stream().key();
    var redis = stack.app().redis().sync();
    String poison = redis.xadd(key, EventStream.FIELD, "{\"v\":1,\"type\":\"cancel_requested\",");
    stack.app().events().cancelRequested("good-000001", "default", "u1");

    ConsumerStats stats =
        consumeUntil(stack, () -> stack.count("SELECT COUNT(*) FROM dead_letters") > 0);

    assertThat(stats.deadLettered()).isEqualTo(1);
    assertThat(stack.app().metrics().counter("dead_letters")).isEqualTo(1);
    assertThat(pending()).isZero();
    assertThat(status("good-000001")).isEqualTo("CLOSED|USER_CANCEL|");
    assertThat(stack.dump("SELECT entry_id, event_type, order_id, deliveries FROM dead_letters"))
        .containsExactly(poison + "|null|null|5|");
    JsonNode errors =
        Json.MAPPER.readTree(stack.dump("SELECT errors FROM dead_letters").get(0).replace("|", ""));
    assertThat(errors).hasSize(5);
    errors.forEach(e -> assertThat(e.asText()).contains("event payload is not JSON"));
    assertThat(redis.exists(stack.app().stream().errorsKey(poison))).isZero();
    stack.assertInvariants();
  }

  @Test
  void anOrderWhoseCloseAlwaysFailsIsDeadLetteredAndDoesNotHoldBackItsBatch() throws Exception {
    stack = quickRetries("poison-order");
    stack.seedSku("sku-1", 10);
    stack.place("good-000001", "u1", 900, null, new OrderItem("sku-1", 1));
    stack.place("good-000002", "u2", 900, null, new OrderItem("sku-1", 1));
    // A corrupt order: its item names a SKU without a stock row, so releasing it always fails.
    stack.update(
        "INSERT INTO orders (tenant_id, order_id, user_id, status, amount_fen, request_hash, created_at,"
            + " expire_at) VALUES ('default', 'bad-0000001', 'u3', 'UNPAID', 100, REPEAT('0', 64), NOW(3),"
            + " NOW(3))");
    stack.update(
        "INSERT INTO order_items (tenant_id, order_id, sku_id, quantity) VALUES ('default', 'bad-0000001', 'ghost', 1)");
    for (String id : List.of("good-000001", "bad-0000001", "good-000002")) {
      stack.app().events().cancelRequested(id, "default", "u");
    }

    ConsumerStats stats =
        consumeUntil(stack, () -> stack.count("SELECT COUNT(*) FROM dead_letters") > 0);

    assertThat(stats.deadLettered()).isEqualTo(1);
    assertThat(stats.failed()).isEqualTo(5);
    assertThat(status("good-000001")).isEqualTo("CLOSED|USER_CANCEL|");
    assertThat(status("good-000002")).isEqualTo("CLOSED|USER_CANCEL|");
    assertThat(status("bad-0000001")).isEqualTo("UNPAID|null|");
    assertThat(stack.dump("SELECT event_type, order_id, deliveries FROM dead_letters"))
        .containsExactly("cancel_requested|bad-0000001|5|");
    JsonNode errors =
        Json.MAPPER.readTree(stack.dump("SELECT errors FROM dead_letters").get(0).replace("|", ""));
    assertThat(errors).hasSize(5);
    errors.forEach(e -> assertThat(e.asText()).contains("ghost"));
    assertThat(pending()).isZero();
    // The corrupt order was made outside the system; remove it before checking the invariants.
    stack.update("DELETE FROM order_items WHERE order_id = 'bad-0000001'");
    stack.update("DELETE FROM orders WHERE order_id = 'bad-0000001'");
    stack.assertInvariants();
  }

  @Test
  void aBatchTheSweepFailsToCloseIsHandedToTheStreamAndClosedOrDeadLetteredThere() {
    stack = quickRetries("sweep-hand-off");
    stack.seedSku("sku-1", 10);
    stack.place("due-0000001", "u1", 1, null, new OrderItem("sku-1", 1));
    stack.update(
        "INSERT INTO orders (tenant_id, order_id, user_id, status, amount_fen, request_hash, created_at,"
            + " expire_at) VALUES ('default', 'bad-0000002', 'u3', 'UNPAID', 100, REPEAT('0', 64), NOW(3),"
            + " NOW(3))");
    stack.update(
        "INSERT INTO order_items (tenant_id, order_id, sku_id, quantity) VALUES ('default', 'bad-0000002', 'ghost', 1)");
    stack
        .app()
        .timers()
        .schedule(
            TenantIds.DEFAULT,
            DeadlineKind.PAYMENT_TIMEOUT,
            "bad-0000002",
            stack.app().time().nowMillis());
    expireNow(stack, "due-0000001");

    long until = System.currentTimeMillis() + 1_000;
    var swept = stack.app().newSweeper().run(() -> until - System.currentTimeMillis());

    assertThat(swept.handedOff()).isGreaterThanOrEqualTo(1);
    assertThat(stack.app().timers().deadlineOf(TenantIds.DEFAULT, "bad-0000002")).isPresent();
    ConsumerStats stats =
        consumeUntil(stack, () -> stack.count("SELECT COUNT(*) FROM dead_letters") > 0);
    assertThat(status("due-0000001")).isEqualTo("CLOSED|TIMEOUT|");
    assertThat(stats.deadLettered()).isEqualTo(1);
    assertThat(stack.dump("SELECT event_type, order_id FROM dead_letters"))
        .containsExactly("close_due|bad-0000002|");
    stack.update("DELETE FROM order_items WHERE order_id = 'bad-0000002'");
    stack.update("DELETE FROM orders WHERE order_id = 'bad-0000002'");
    stack.assertInvariants();
  }

  @Test
  void theGroupIsCreatedOnAFreshRedisAndRecreatedAfterTheStreamWasLost() {
    // the first creation is what every fresh Redis sees (INFO); the loss under a reader is a WARN
    Logger logger = (Logger) LoggerFactory.getLogger(StreamConsumer.class);
    ListAppender<ILoggingEvent> log = new ListAppender<>();
    log.start();
    logger.addAppender(log);
    Level level = logger.getLevel();
    logger.setLevel(Level.INFO);
    try {
      createdThenRecreated();
    } finally {
      logger.setLevel(level);
      logger.detachAppender(log);
    }
    assertThat(log.list)
        .filteredOn(e -> e.getFormattedMessage().contains("closers"))
        .extracting(
            e -> e.getLevel().toString(),
            e -> e.getFormattedMessage().replaceAll("\\S+:\\{events\\}", "S"))
        .containsExactly(
            tuple("INFO", "stream S had no group closers yet; created it"),
            tuple("WARN", "stream S or group closers was missing; recreated"));
  }

  private void createdThenRecreated() {
    stack = quickRetries("lost-stream");
    stack.seedSku("sku-1", 10);
    stack.place("lost-000001", "u1", 900, null, new OrderItem("sku-1", 1));
    stack.place("lost-000002", "u2", 900, null, new OrderItem("sku-1", 1));
    var redis = stack.app().redis().sync();
    String key = stack.app().stream().key();
    // Fresh Redis: the stream exists (created by appends) but no group; the first event is before
    // the group, and must not be skipped.
    stack.app().events().cancelRequested("lost-000001", "default", "u1");
    assertThat(redis.xinfoGroups(key)).isEmpty();
    long deadline = System.currentTimeMillis() + 30_000;
    try (StreamConsumer consumer = stack.app().newStreamConsumer()) {
      CompletableFuture<ConsumerStats> run =
          CompletableFuture.supplyAsync(
              () -> consumer.run(() -> deadline - System.currentTimeMillis()), THREADS);
      waitFor(() -> status("lost-000001").startsWith("CLOSED"));
      redis.del(key); // Redis lost the stream (and its group)
      // the consumer's blocking read returns, the next one finds no group and re-creates it
      // (XGROUP CREATE MKSTREAM brings the stream key back)
      Await.until("the group re-created on the lost stream", () -> redis.exists(key) == 1);
      stack.app().events().cancelRequested("lost-000002", "default", "u2");
      waitFor(() -> status("lost-000002").startsWith("CLOSED") && pending() == 0);
      consumer.terminate();
      ConsumerStats stats = run.join();

      assertThat(stats.groupsCreated()).isEqualTo(2);
      assertThat(stats.errors()).isZero();
      assertThat(stats.closed()).isEqualTo(2);
    }
    assertThat(redis.xinfoGroups(key)).hasSize(1);
    assertThat(status("lost-000002")).isEqualTo("CLOSED|USER_CANCEL|");
    stack.assertInvariants();
  }

  /**
   * Redis 7.0 answers a blocked XREADGROUP whose stream was deleted with UNBLOCKED (6.2, the
   * embedded server, keeps it blocked): the consumer recreates the group instead of counting two
   * errors, as the test above showed on Redis 7.0.15.
   */
  @Test
  void redisSevenUnblockingAReadOfALostStreamMeansTheStreamIsLost() {
    assertThat(
            EventStream.isNoGroup(
                new RedisCommandExecutionException("UNBLOCKED the stream key no longer exists")))
        .isTrue();
    assertThat(
            EventStream.isNoGroup(
                new RuntimeException(
                    new RedisCommandExecutionException(
                        "UNBLOCKED the consumer group this client was blocked on no longer exists"))))
        .isTrue();
    assertThat(
            EventStream.isNoGroup(
                new RedisCommandExecutionException(
                    "NOGROUP No such key 'k:{events}' or consumer group 'closers'")))
        .isTrue();
    assertThat(EventStream.isNoGroup(new RedisCommandExecutionException("ERR syntax error")))
        .isFalse();
  }

  @Test
  void consumerNamesComeFromABoundedPool() {
    stack =
        TestStack.create(
            "name-pool", c -> c.toBuilder().stream(c.stream().withConsumerSlots(2)).build(), null);
    stack.app().stream().ensureGroup();
    for (int i = 0; i < 5; i++) {
      try (StreamConsumer consumer = stack.app().newStreamConsumer()) {
        long until = System.currentTimeMillis() + 300;
        consumer.run(() -> until - System.currentTimeMillis());
      }
    }
    List<Object> consumers =
        stack.app().redis().sync().xinfoConsumers(stack.app().stream().key(), EventStream.GROUP);
    assertThat(consumers).hasSizeLessThanOrEqualTo(2);
    stack.assertInvariants();
  }

  private static void waitFor(BooleanSupplier condition) {
    Await.until("the order closed", Duration.ofSeconds(20), condition);
  }
}
