package io.ordertimeout.stream;

import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.ordertimeout.mysql.Statements;
import io.ordertimeout.mysql.Tx;
import io.ordertimeout.redis.LuaScript;
import io.ordertimeout.util.Json;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Error histories of failing stream entries (a Redis list per entry) and the durable dead-letter
 * store (MySQL table {@code dead_letters}, see V3__event_stream.sql for why MySQL).
 */
public final class DeadLetters {
  private static final LuaScript RECORD = LuaScript.load("recordError-1");

  /** The newest 20 errors of an entry are kept: more than any sane maxDeliveries. */
  static final int KEEP_ERRORS = 20;

  /** One error string is cut at 1,000 characters (a stack-less exception message and causes). */
  static final int MAX_ERROR_CHARS = 1_000;

  /** A history outlives any retry schedule (5 x 30 s) by far, and vanishes if its entry does. */
  static final Duration HISTORY_TTL = Duration.ofDays(7);

  /**
   * Events are ~200 bytes and five errors ~5 KB; anything longer is cut (payload to 3,500 bytes,
   * errors to 5,500 as literals): the upsert binds the errors twice and must stay under RDS Proxy's
   * 16 KB pinning limit (mysql.Statements).
   */
  static final int MAX_PAYLOAD_BYTES = 3_500;

  static final int MAX_ERRORS_BYTES = 5_500;

  private final Tx tx;
  private final RedisClusterCommands<String, String> redis;
  private final EventStream stream;

  public DeadLetters(Tx tx, RedisClusterCommands<String, String> redis, EventStream stream) {
    this.tx = tx;
    this.redis = redis;
    this.stream = stream;
  }

  /** A dead-lettered entry, as stored. */
  public record DeadLetter(
      String entryId,
      String eventType,
      String tenantId,
      String orderId,
      Map<String, String> fields,
      long deliveries,
      List<String> errors) {}

  /** Appends an error to the entry's history; returns the history, oldest first. */
  public List<String> recordError(String entryId, String error) {
    String text = error.length() > MAX_ERROR_CHARS ? error.substring(0, MAX_ERROR_CHARS) : error;
    return RECORD.run(
        redis,
        ScriptOutputType.MULTI,
        new String[] {stream.errorsKey(entryId)},
        text,
        Integer.toString(KEEP_ERRORS),
        Long.toString(HISTORY_TTL.toMillis()));
  }

  public List<String> history(String entryId) {
    return redis.lrange(stream.errorsKey(entryId), 0, -1);
  }

  /** Drops an entry's history once the entry was acknowledged or dead-lettered. */
  public void forget(String entryId) {
    redis.del(stream.errorsKey(entryId));
  }

  /** As {@link #forget(String)} for many entries, in one DEL (the keys share the stream's slot). */
  public void forget(List<String> entryIds) {
    redis.del(entryIds.stream().map(stream::errorsKey).toArray(String[]::new));
  }

  /**
   * Stores a dead letter; storing the same entry again (a consumer died between this and its XACK)
   * updates the row instead of adding one.
   */
  public void store(DeadLetter letter) {
    tx.inTransaction(
        "store dead letter " + letter.entryId() + " (order " + letter.orderId() + ")",
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement(
                  "INSERT INTO dead_letters (stream_key, entry_id, event_type, order_id, payload,"
                      + " deliveries, errors, tenant_id) VALUES (?,?,?,?,?,?,?,?)"
                      + " ON DUPLICATE KEY UPDATE"
                      // the values bound again: VALUES(col) is deprecated since MySQL 8.0.20 and
                      // the row alias that replaces it is not MariaDB syntax
                      + " deliveries = ?, errors = ?")) {
            String errors = Statements.cutToBytes(Json.write(letter.errors()), MAX_ERRORS_BYTES);
            ps.setString(1, stream.key());
            ps.setString(2, letter.entryId());
            ps.setString(3, letter.eventType());
            ps.setString(4, letter.orderId());
            ps.setString(5, Statements.cutToBytes(Json.write(letter.fields()), MAX_PAYLOAD_BYTES));
            ps.setLong(6, letter.deliveries());
            ps.setString(7, errors);
            ps.setString(8, letter.tenantId());
            ps.setLong(9, letter.deliveries());
            ps.setString(10, errors);
            return ps.executeUpdate();
          }
        });
  }
}
