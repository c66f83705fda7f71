package io.ordertimeout.stream;

import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.models.stream.PendingMessages;
import java.util.List;
import java.util.Map;

/**
 * How far the closers group is behind: entries delivered but not acknowledged (the pending list),
 * and the age of the oldest entry the group has not finished, whether pending or not yet delivered.
 * Ages come from entry ids (their first part is the append time in Redis's clock) against the
 * caller's Redis-clock now.
 */
public final class StreamLag {
  private StreamLag() {}

  /** The group's backlog: pending entries, and the age of the oldest unfinished entry (0: none). */
  public record Lag(long pending, long oldestAgeMillis) {}

  public static Lag of(
      RedisClusterCommands<String, String> redis, EventStream stream, long nowMillis) {
    try {
      PendingMessages pending = redis.xpending(stream.key(), EventStream.GROUP);
      long oldest = Long.MAX_VALUE;
      if (pending.getCount() > 0 && pending.getMessageIds().getLower().getValue() != null) {
        oldest = idMillis(pending.getMessageIds().getLower().getValue());
      }
      String lastDelivered = lastDelivered(redis, stream);
      if (lastDelivered != null) {
        List<StreamMessage<String, String>> next =
            redis.xrange(stream.key(), Range.create("(" + lastDelivered, "+"), Limit.from(1));
        if (!next.isEmpty()) {
          oldest = Math.min(oldest, idMillis(next.get(0).getId()));
        }
      }
      long age = oldest == Long.MAX_VALUE ? 0 : Math.max(0, nowMillis - oldest);
      return new Lag(pending.getCount(), age);
    } catch (RuntimeException e) {
      if (EventStream.isNoGroup(e)) {
        return new Lag(0, 0);
      }
      throw e;
    }
  }

  /** XINFO GROUPS' last-delivered-id of the closers group; null when the group is missing. */
  private static String lastDelivered(
      RedisClusterCommands<String, String> redis, EventStream stream) {
    for (Object group : redis.xinfoGroups(stream.key())) {
      if (group instanceof List<?> fields) {
        Map<String, Object> byName = new java.util.HashMap<>();
        for (int i = 0; i + 1 < fields.size(); i += 2) {
          byName.put(String.valueOf(fields.get(i)), fields.get(i + 1));
        }
        if (EventStream.GROUP.equals(String.valueOf(byName.get("name")))) {
          return String.valueOf(byName.get("last-delivered-id"));
        }
      }
    }
    return null;
  }

  private static long idMillis(String entryId) {
    int dash = entryId.indexOf('-');
    return Long.parseLong(dash < 0 ? entryId : entryId.substring(0, dash));
  }
}
