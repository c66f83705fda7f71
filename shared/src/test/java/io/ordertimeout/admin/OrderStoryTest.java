package io.ordertimeout.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.Consumer;
import io.lettuce.core.XReadArgs;
import io.ordertimeout.compensation.CompensationSettings;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import io.ordertimeout.stream.EventStream;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.util.Json;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** An order's whole story from MariaDB, Redis and the WeChat simulator. */
class OrderStoryTest {
  static final String OPEN_ID = "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o";
  static WeChatPaySimulator wechat;
  private TestStack stack;
  private AdminOps ops;

  @BeforeAll
  static void startWeChat() {
    wechat = WeChatPaySimulator.start();
  }

  @AfterAll
  static void stopWeChat() {
    wechat.close();
  }

  @BeforeEach
  void setUp() {
    stack = TestStack.withWeChat("admin-story", wechat);
    ops = stack.app().adminOps(CompensationSettings.defaults());
    stack.seedSku("sku-a", 10);
    stack.seedCoupon("cp-1", "u1");
  }

  @AfterEach
  void tearDown() {
    stack.close();
  }

  @Test
  void theStoryHasTheRowsTheTimerAndThePendingEntriesOfTheOrder() throws Exception {
    stack.place("story-0001", "u1", 900, "cp-1", new OrderItem("sku-a", 2));
    stack.place("other-0001", "u1", 900, null, new OrderItem("sku-a", 1));
    stack.app().prepays().prepay(TenantIds.DEFAULT, "story-0001", OPEN_ID, null);
    stack.app().cancels().request(TenantIds.DEFAULT, "story-0001");
    stack.app().cancels().request(TenantIds.DEFAULT, "other-0001");
    // the events are outbox rows first; the relay puts them on the stream
    stack.app().newRelay(io.ordertimeout.outbox.RelaySettings.defaults(), null).relayOnce();
    readWithoutAck();
    stack.update(
        "INSERT INTO compensation_flags (tenant_id, kind, subject, evidence) VALUES ('default', 'POISON_ORDER',"
            + " 'story-0001', '{}')");

    Map<String, Object> story = ops.stories().of(TenantIds.DEFAULT, "story-0001", true);
    var json = Json.MAPPER.valueToTree(story);

    assertThat(json.at("/order/status").asText()).isEqualTo("UNPAID");
    assertThat(json.at("/order/coupon_id").asText()).isEqualTo("cp-1");
    assertThat(json.at("/items/0/quantity").asInt()).isEqualTo(2);
    assertThat(json.at("/ledger/0/kind").asText()).isEqualTo("RESERVE");
    assertThat(json.at("/coupon/0/status").asText()).isEqualTo("LOCKED");
    assertThat(json.at("/snapshot/0/checksum").asText()).hasSize(64);
    assertThat(json.at("/compensationFlags/0/kind").asText()).isEqualTo("POISON_ORDER");
    // its outbox rows in commit order, both relayed to the stream; none of the other order's
    assertThat(json.at("/events").size()).isEqualTo(2);
    assertThat(json.at("/events/0/event_type").asText()).isEqualTo("created");
    assertThat(json.at("/events/1/event_type").asText()).isEqualTo("cancel_requested");
    assertThat(json.at("/events/1/streamed_at").isNull()).isFalse();
    long expireAt = Instant.parse(json.at("/order/expire_at").asText()).toEpochMilli();
    assertThat(json.at("/timer/state").asText()).isEqualTo("SCHEDULED");
    assertThat(json.at("/timer/score").asLong()).isEqualTo(expireAt);
    // its created and cancel_requested events, read and not acked; none of the other order's
    assertThat(json.at("/pendingStreamEntries/entries")).hasSize(2);
    assertThat(json.at("/pendingStreamEntries/entries/0/event").asText())
        .contains("\"created\"")
        .contains("story-0001");
    assertThat(json.at("/pendingStreamEntries/entries/1/event").asText())
        .contains("cancel_requested")
        .contains("story-0001");
    assertThat(json.at("/pendingStreamEntries/entries/1/consumer").asText()).isEqualTo("ops-test");
    assertThat(json.at("/pendingStreamEntries/scanned").asInt()).isEqualTo(4);
    assertThat(json.at("/wechat/tradeState").asText()).isEqualTo("NOTPAY");
  }

  @Test
  void aClaimedTimerShowsItsLease() {
    stack.place("story-0002", "u1", 900, null, new OrderItem("sku-a", 1));
    var timers = stack.app().timers();
    int shard = timers.shardOf("story-0002");
    long now = timers.deadlineOf(TenantIds.DEFAULT, "story-0002").getAsLong() + 1;
    timers.claimDue(TenantIds.DEFAULT, shard, now, 30_000, 10);

    Map<String, Object> story = ops.stories().of(TenantIds.DEFAULT, "story-0002", false);
    var json = Json.MAPPER.valueToTree(story);

    assertThat(json.at("/timer/state").asText()).isEqualTo("CLAIMED");
    assertThat(json.at("/timer/score").asLong()).isEqualTo(now + 30_000);
    assertThat(json.at("/timer/leaseUntil").asText())
        .isEqualTo(Instant.ofEpochMilli(now + 30_000).toString());
    assertThat(json.has("wechat")).isFalse();
  }

  @Test
  void unknownAndInvalidOrdersAreRefused() {
    assertThatThrownBy(() -> ops.stories().of(TenantIds.DEFAULT, "nosuch-0001", false))
        .isInstanceOfSatisfying(
            AdminRefusal.class, e -> assertThat(e.kind()).isEqualTo(AdminRefusal.Kind.NOT_FOUND));
    assertThatThrownBy(() -> ops.stories().of(TenantIds.DEFAULT, "a b", false))
        .isInstanceOfSatisfying(
            AdminRefusal.class, e -> assertThat(e.code()).isEqualTo("INVALID_ORDER_ID"));
  }

  /** A consumer that read the cancel events and died before acknowledging them. */
  private void readWithoutAck() {
    EventStream stream = stack.app().stream();
    stream.ensureGroup();
    List<?> read =
        stack
            .app()
            .redis()
            .sync()
            .xreadgroup(
                Consumer.from(EventStream.GROUP, "ops-test"),
                XReadArgs.Builder.count(100),
                XReadArgs.StreamOffset.lastConsumed(stream.key()));
    assertThat(read).isNotEmpty();
  }
}
