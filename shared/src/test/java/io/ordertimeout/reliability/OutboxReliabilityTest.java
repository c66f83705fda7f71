package io.ordertimeout.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.Range;
import io.ordertimeout.consume.StreamConsumer;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.outbox.OutboxRelay;
import io.ordertimeout.outbox.RelaySettings;
import io.ordertimeout.payment.PaidTrade;
import io.ordertimeout.stream.OrderEvent;
import io.ordertimeout.testing.TestStack;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The outbox against Redis faults, on a Redis process of this class's own: events committed while
 * Redis is down arrive when it returns, and a cancel request survives FLUSHALL.
 */
@Tag("integration")
class OutboxReliabilityTest {
  static OwnRedis redis;
  private TestStack stack;
  private boolean redisDown;

  @BeforeAll
  static void start() {
    redis = OwnRedis.start();
  }

  @AfterAll
  static void stop() {
    redis.close();
  }

  @AfterEach
  void tearDown() {
    if (stack != null) {
      stack.close();
    }
    if (redisDown) {
      redis.startAgain(); // a test that failed while Redis was down leaves it running for the next
    }
  }

  private TestStack stack(String hint) {
    stack =
        TestStack.withOverrides(
            hint,
            Map.of(
                "OTC_REDIS_URI", redis.uri(),
                "OTC_STREAM_VISIBILITY_MS", "500",
                "OTC_STREAM_BLOCK_MS", "200"),
            null);
    stack.seedSku("sku-1", 100);
    return stack;
  }

  private List<OrderEvent> streamed() {
    return stack
        .app()
        .redis()
        .sync()
        .xrange(stack.app().stream().key(), Range.create("-", "+"))
        .stream()
        .map(m -> OrderEvent.parse(m.getBody().get("e")))
        .toList();
  }

  @Test
  void eventsCommittedWhileRedisIsDownArriveWhenItReturns() {
    stack("outbox-redis-down");
    OutboxRelay relay = stack.app().newRelay(RelaySettings.defaults(), null);
    redis.kill();
    redisDown = true;

    // Placement and payment commit in MySQL; the timer and the relay fail on Redis.
    stack.place("down-00001", "u1", 900, null, new OrderItem("sku-1", 1));
    stack
        .app()
        .payments()
        .apply(new PaidTrade("default", "down-00001", "tx-d1", 100, null, PaidTrade.Source.NOTIFY));
    assertThat(relay.relayOnce()).isZero();
    assertThat(stack.count("SELECT COUNT(*) FROM outbox WHERE streamed_at IS NULL")).isEqualTo(2);

    redis.startAgain();
    redisDown = false;
    await(() -> relay.relayOnce() > 0);

    assertThat(streamed())
        .extracting(e -> e.type().wireName() + " " + e.orderId())
        .containsExactly("created down-00001", "paid down-00001");
    assertThat(stack.count("SELECT COUNT(*) FROM outbox WHERE streamed_at IS NULL")).isZero();
    assertThat(stack.app().metrics().counter("outbox_relay_failures")).isGreaterThanOrEqualTo(1);
  }

  @Test
  void aCancelRequestSurvivesFlushallAndStillClosesItsOrderAsUserCancel() throws Exception {
    stack("outbox-flushall");
    stack.place("flush-0001", "u1", 900, null, new OrderItem("sku-1", 2));
    assertThat(stack.app().cancels().request(TenantIds.DEFAULT, "flush-0001").accepted()).isTrue();
    OutboxRelay relay =
        stack
            .app()
            .newRelay(
                RelaySettings.defaults().withCancelRedeliverAfter(Duration.ofMillis(300)), null);
    relay.relayOnce();
    assertThat(streamed()).extracting(e -> e.type().wireName()).contains("cancel_requested");

    // Redis loses everything before any consumer read the cancel.
    stack.app().redis().sync().flushall();
    assertThat(stack.app().redis().sync().exists(stack.app().stream().key())).isZero();
    assertThat(relay.relayOnce()).isZero(); // every row is marked streamed: nothing to relay...
    await(() -> relay.relayOnce() == 1); // ...until the cancel is stale: re-delivered

    try (StreamConsumer consumer = stack.app().newStreamConsumer()) {
      long deadline = System.currentTimeMillis() + 30_000;
      CompletableFuture<?> run =
          CompletableFuture.runAsync(
              () -> consumer.run(() -> deadline - System.currentTimeMillis()));
      await(() -> !status().startsWith("UNPAID"));
      consumer.terminate();
      run.get(30, TimeUnit.SECONDS);
    }

    assertThat(status()).isEqualTo("CLOSED|USER_CANCEL|");
    assertThat(stack.count("SELECT reserved FROM stock WHERE sku_id = 'sku-1'")).isZero();
    // the closed order's cancel is no longer re-delivered
    assertThat(stack.app().outbox().staleCancels(Duration.ZERO, 10)).isEmpty();
    assertThat(stack.app().metrics().counter("outbox_cancels_redelivered")).isEqualTo(1);
    stack.assertInvariants();
  }

  private String status() {
    return stack
        .dump("SELECT status, close_reason FROM orders WHERE order_id = 'flush-0001'")
        .get(0);
  }

  private static void await(BooleanSupplier condition) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("condition not met within 20 s");
      }
      Workers.pause(50);
    }
  }
}
