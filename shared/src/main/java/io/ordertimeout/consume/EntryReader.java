package io.ordertimeout.consume;

import io.lettuce.core.Consumer;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.XAutoClaimArgs;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.models.stream.ClaimedMessages;
import io.ordertimeout.config.StreamSettings;
import io.ordertimeout.loop.PollingLoop;
import io.ordertimeout.loop.TimeBudget;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.redis.RedisConnector;
import io.ordertimeout.stream.EventStream;
import java.util.List;

/**
 * Where one consumer's entries come from, one source per pass: first the name's own pending
 * entries, each once; then entries of other consumers idle past the visibility timeout (XAUTOCLAIM,
 * at most every half timeout) and new entries (a blocking XREADGROUP on a connection of its own, so
 * the closer's and the acks' commands never wait behind it). Every batch goes to the {@link
 * Settlement}.
 */
final class EntryReader {
  private final EventStream stream;
  private final RedisClusterCommands<String, String> redis;
  private final RedisConnector.Dedicated blocking;
  private final StreamSettings settings;
  private final Metrics metrics;
  private final ConsumerCounters counters;
  private final Settlement settlement;
  private final Consumer<String> consumer;
  private final PollingLoop loop;

  /** Where the read of this name's own pending entries goes on; null once they were all read. */
  private String ownPendingFrom = "0";

  private long lastClaimAt = Long.MIN_VALUE / 2;

  EntryReader(
      EventStream stream,
      RedisClusterCommands<String, String> redis,
      RedisConnector.Dedicated blocking,
      StreamSettings settings,
      Metrics metrics,
      ConsumerCounters counters,
      Settlement settlement,
      Consumer<String> consumer,
      PollingLoop loop) {
    this.stream = stream;
    this.redis = redis;
    this.blocking = blocking;
    this.settings = settings;
    this.metrics = metrics;
    this.counters = counters;
    this.settlement = settlement;
    this.consumer = consumer;
    this.loop = loop;
  }

  /** One pass's reads: the own pending entries until they are all read, then claims and news. */
  void pass(TimeBudget budget) {
    if (ownPendingFrom != null) {
      readOwnPending();
    } else {
      claimIdle();
      readNew(budget);
    }
  }

  /**
   * The name's own pending entries (left by a previous holder that died, or failed or deferred by
   * one) come first, each once: the read goes on after the last entry of the previous page, because
   * an entry that failed or was deferred stays pending and re-reading from "0" would retry it in a
   * tight loop. Later retries wait for the visibility timeout, like everyone else's.
   */
  private void readOwnPending() {
    List<StreamMessage<String, String>> mine =
        redis.xreadgroup(
            consumer,
            XReadArgs.Builder.count(settings.batch()),
            XReadArgs.StreamOffset.from(stream.key(), ownPendingFrom));
    if (mine.isEmpty()) {
      ownPendingFrom = null;
      return;
    }
    // XREADGROUP with an id answers the consumer's pending entries after that id
    ownPendingFrom = mine.get(mine.size() - 1).getId();
    counters.read += mine.size();
    settlement.handle(mine, true);
  }

  /** Takes over entries idle past the visibility timeout, at most every half timeout. */
  private void claimIdle() {
    long now = System.nanoTime() / 1_000_000;
    long every = Math.max(50, settings.visibility().toMillis() / 2);
    if (now - lastClaimAt < every) {
      return;
    }
    lastClaimAt = now;
    String cursor = "0-0";
    do {
      ClaimedMessages<String, String> claimed =
          redis.xautoclaim(
              stream.key(),
              XAutoClaimArgs.Builder.xautoclaim(consumer, settings.visibility(), cursor)
                  .count(settings.batch()));
      List<StreamMessage<String, String>> entries = claimed.getMessages();
      counters.claimed += entries.size();
      metrics.count("stream_claimed", entries.size());
      if (!entries.isEmpty()) {
        settlement.handle(entries, true);
      }
      cursor = claimed.getId();
    } while (!loop.done() && !"0-0".equals(cursor));
  }

  private void readNew(TimeBudget budget) {
    long block = Math.min(settings.block().toMillis(), budget.leftMillis());
    if (block < 1) {
      return; // BLOCK 0 would wait forever
    }
    List<StreamMessage<String, String>> entries =
        blocking
            .sync()
            .xreadgroup(
                consumer,
                XReadArgs.Builder.block(block).count(settings.batch()),
                XReadArgs.StreamOffset.lastConsumed(stream.key()));
    if (entries != null && !entries.isEmpty()) {
      counters.read += entries.size();
      settlement.handle(entries, false);
    }
  }
}
