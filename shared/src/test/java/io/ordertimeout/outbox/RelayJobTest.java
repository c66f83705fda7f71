package io.ordertimeout.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.Consumer;
import io.lettuce.core.XReadArgs;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.loop.Sleeper;
import io.ordertimeout.metrics.MetricNames;
import io.ordertimeout.stream.EventStream;
import io.ordertimeout.stream.StreamLag;
import io.ordertimeout.testing.TestStack;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The relay loop of one invocation, its metrics, and the stream lag it samples. */
class RelayJobTest {
  private TestStack stack;

  @AfterEach
  void tearDown() {
    if (stack != null) {
      stack.close();
    }
  }

  @Test
  void theLoopRelaysUntilTerminatedFlushesOnceMoreAndRecordsTheLags() throws Exception {
    stack = TestStack.create("outbox-job");
    stack.seedSku("sku-1", 10);
    stack.place("job-000001", "u1", 900, null, new OrderItem("sku-1", 1));
    RelayJob job = stack.app().relayJob(RelaySettings.defaults(), null);
    Sleeper sleeper = new Sleeper();
    long deadline = System.currentTimeMillis() + 60_000;
    CompletableFuture<RelayJob.Stats> run =
        CompletableFuture.supplyAsync(
            () -> job.run(() -> deadline - System.currentTimeMillis(), sleeper));
    OutboxTest.await(() -> stack.app().stream().length() == 1);
    stack
        .app()
        .cancels()
        .request(TenantIds.DEFAULT, "job-000001"); // committed while the loop polls
    OutboxTest.await(() -> stack.app().stream().length() == 2);
    sleeper.terminate();
    RelayJob.Stats stats = run.get(30, TimeUnit.SECONDS);

    assertThat(stats.relayed()).isEqualTo(2);
    assertThat(stats.passes()).isGreaterThanOrEqualTo(2);
    assertThat(stack.app().metrics().histograms())
        .containsKeys(MetricNames.OUTBOX_LAG_MS, MetricNames.STREAM_LAG_MS);
    assertThat(stack.app().metrics().gauges())
        .containsEntry("outbox_pending_stream", 0L)
        .containsKey(MetricNames.STREAM_PENDING);
    // the lease was given back: another relay can start at once
    assertThat(
            stack
                .app()
                .outbox()
                .claimLease(Destination.STREAM, "next", RelaySettings.defaults().lease()))
        .isTrue();
  }

  @Test
  void streamLagIsTheAgeOfTheOldestEntryTheGroupHasNotAcknowledged() {
    stack = TestStack.create("outbox-stream-lag");
    stack.seedSku("sku-1", 10);
    stack.place("lag-000001", "u1", 900, null, new OrderItem("sku-1", 1));
    stack.place("lag-000002", "u1", 900, null, new OrderItem("sku-1", 1));
    EventStream stream = stack.app().stream();
    var redis = stack.app().redis().sync();
    stream.ensureGroup();
    stack.app().newRelay(RelaySettings.defaults(), null).relayOnce();
    long now = stack.app().time().nowMillis();

    StreamLag.Lag unread = StreamLag.of(redis, stream, now + 10_000);
    var read =
        redis.xreadgroup(
            Consumer.from(EventStream.GROUP, "c0"),
            XReadArgs.Builder.count(1),
            XReadArgs.StreamOffset.lastConsumed(stream.key()));
    StreamLag.Lag pending = StreamLag.of(redis, stream, now + 10_000);
    redis.xack(stream.key(), EventStream.GROUP, read.get(0).getId());
    StreamLag.Lag secondUnread = StreamLag.of(redis, stream, now + 10_000);
    redis.xreadgroup(
        Consumer.from(EventStream.GROUP, "c0"), XReadArgs.StreamOffset.lastConsumed(stream.key()));
    redis
        .xrange(stream.key(), io.lettuce.core.Range.create("-", "+"))
        .forEach(m -> redis.xack(stream.key(), EventStream.GROUP, m.getId()));
    StreamLag.Lag done = StreamLag.of(redis, stream, now + 10_000);

    assertThat(unread.pending()).isZero();
    assertThat(unread.oldestAgeMillis()).isBetween(10_000L, 15_000L);
    assertThat(pending.pending()).isEqualTo(1);
    assertThat(pending.oldestAgeMillis()).isBetween(10_000L, 15_000L);
    assertThat(secondUnread.pending()).isZero();
    assertThat(secondUnread.oldestAgeMillis()).isBetween(10_000L, 15_000L);
    assertThat(done).isEqualTo(new StreamLag.Lag(0, 0));
  }
}
