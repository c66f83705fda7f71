package io.ordertimeout.stream;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.XGroupCreateArgs;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.ordertimeout.redis.LuaScript;
import java.util.ArrayList;
import java.util.List;

/**
 * The order event stream {@code <prefix>:{events}} and its consumer group {@code closers}.
 *
 * <p>The hash tag puts the stream, its consumer-name slots and its error histories in one cluster
 * slot. Appends trim with {@code MAXLEN ~ maxLen}: the bound must exceed the largest backlog of
 * unacknowledged entries, because an entry trimmed while pending is lost to the stream; what it
 * carried is not lost (a close_due's timer keeps its claim lease and returns to the sweep; a lost
 * cancel_requested leaves the order to its deadline and to compensation).
 */
public final class EventStream {
  public static final String GROUP = "closers";

  /** The field of every entry that holds the event document. */
  public static final String FIELD = "e";

  private static final LuaScript APPEND = LuaScript.load("appendEvents-1");

  /** 500 events per script call keep one call under ~100 KB and a few ms of Redis time. */
  private static final int APPEND_CHUNK = 500;

  private final RedisClusterCommands<String, String> redis;
  private final String prefix;
  private final int maxLen;

  public EventStream(RedisClusterCommands<String, String> redis, String prefix, int maxLen) {
    this.redis = redis;
    this.prefix = prefix;
    this.maxLen = maxLen;
  }

  public String key() {
    return prefix + ":{events}";
  }

  /** The registry of live consumer runs (ShardLeases#join): an older run hands over to a newer. */
  public String consumersKey() {
    return prefix + ":{events}:consumers";
  }

  /** The lease key of consumer-name slot {@code slot}. */
  public String consumerSlotKey(int slot) {
    return prefix + ":{events}:consumer:" + slot;
  }

  /** The error history of one entry (a list, see recordError-1.lua). */
  public String errorsKey(String entryId) {
    return prefix + ":{events}:errors:" + entryId;
  }

  public int maxLen() {
    return maxLen;
  }

  /** Appends events in order, one script call per 500; returns their entry ids. */
  public List<String> append(List<OrderEvent> events) {
    return appendDocuments(events.stream().map(OrderEvent::toJson).toList());
  }

  /** As {@link #append}, for documents already in the OrderEvent form (the outbox relay's). */
  public List<String> appendDocuments(List<String> documents) {
    List<String> ids = new ArrayList<>(documents.size());
    for (int from = 0; from < documents.size(); from += APPEND_CHUNK) {
      List<String> chunk = documents.subList(from, Math.min(documents.size(), from + APPEND_CHUNK));
      String[] args = new String[chunk.size() + 1];
      args[0] = Integer.toString(maxLen);
      for (int i = 0; i < chunk.size(); i++) {
        args[i + 1] = chunk.get(i);
      }
      List<String> added = APPEND.run(redis, ScriptOutputType.MULTI, new String[] {key()}, args);
      ids.addAll(added);
    }
    return ids;
  }

  /**
   * Creates the stream (MKSTREAM) and the group reading it from the first entry: events appended
   * before any consumer ran (a fresh Redis) are not skipped. Returns false when the group exists.
   */
  public boolean ensureGroup() {
    try {
      redis.xgroupCreate(
          XReadArgs.StreamOffset.from(key(), "0"), GROUP, XGroupCreateArgs.Builder.mkstream());
      return true;
    } catch (RedisCommandExecutionException e) {
      if (e.getMessage() != null && e.getMessage().startsWith("BUSYGROUP")) {
        return false;
      }
      throw e;
    }
  }

  /**
   * True when Redis answered that the stream or the group does not exist (lost or fresh Redis):
   * NOGROUP, or, since Redis 7.0, UNBLOCKED for a blocked XREADGROUP whose stream or group was
   * deleted meanwhile (6.2 keeps such a client blocked instead).
   */
  public static boolean isNoGroup(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof RedisCommandExecutionException
          && t.getMessage() != null
          && (t.getMessage().startsWith("NOGROUP") || t.getMessage().startsWith("UNBLOCKED"))) {
        return true;
      }
    }
    return false;
  }

  public long length() {
    return redis.xlen(key());
  }
}
