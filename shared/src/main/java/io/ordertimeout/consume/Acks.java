package io.ordertimeout.consume;

import io.lettuce.core.StreamMessage;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.stream.EventStream;
import java.util.List;

/** Acknowledges entries to the group (one XACK), counted in the run's stats and metrics. */
final class Acks {
  private final RedisClusterCommands<String, String> redis;
  private final EventStream stream;
  private final Metrics metrics;
  private final ConsumerCounters counters;

  Acks(
      RedisClusterCommands<String, String> redis,
      EventStream stream,
      Metrics metrics,
      ConsumerCounters counters) {
    this.redis = redis;
    this.stream = stream;
    this.metrics = metrics;
    this.counters = counters;
  }

  void ack(List<StreamMessage<String, String>> entries) {
    if (entries.isEmpty()) {
      return;
    }
    redis.xack(
        stream.key(),
        EventStream.GROUP,
        entries.stream().map(StreamMessage::getId).toArray(String[]::new));
    counters.acked += entries.size();
    metrics.count("stream_acked", entries.size());
  }
}
