package io.ordertimeout.outbox;

import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.ClosedOrder;
import io.ordertimeout.domain.Order;
import io.ordertimeout.mysql.Statements;
import io.ordertimeout.stream.EventType;
import io.ordertimeout.util.Json;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.slf4j.MDC;

/**
 * Writes order events into the outbox table, inside the caller's transaction: the event commits
 * with the state change or not at all. Each state-changing writer calls this after it locked the
 * order row (the lock order of package {@code io.ordertimeout.mysql}: the outbox row is one of the
 * order's own rows), which is what makes seq order the commit order per order.
 */
public final class Outbox {
  /** The payload version this code writes; OutboxRow carries it to subscribers as "v". */
  public static final int SCHEMA_VERSION = 1;

  /** The MDC key Invocation sets with the Lambda request id: the event's trace id. */
  private static final String TRACE_KEY = "requestId";

  /** Stays under the TEXT column's 64 KB; events are ~100 bytes. */
  private static final int MAX_PAYLOAD_CHARS = 60_000;

  private Outbox() {}

  /** One event to write: its order, tenant, type and type-specific fields. */
  public record Pending(
      String orderId, String tenantId, EventType type, Map<String, Object> payload) {}

  /** {@code created}: the placement's own transaction. */
  public static void created(Connection c, Order order) throws SQLException {
    append(
        c,
        List.of(
            new Pending(
                order.orderId(),
                order.tenantId(),
                EventType.CREATED,
                Map.of(
                    "userId", order.userId(),
                    "expireAt", order.expireAt().toEpochMilli(),
                    "amountFen", order.amountFen()))));
  }

  /** {@code paid}: the UNPAID -> PAID transaction. */
  public static void paid(Connection c, String orderId, String tenantId, String transactionId)
      throws SQLException {
    append(
        c,
        List.of(
            new Pending(
                orderId, tenantId, EventType.PAID, Map.of("transactionId", transactionId))));
  }

  /** {@code closed}: one per order the close transaction closed, in the batch's order. */
  public static void closed(
      Connection c, String tenantId, Collection<ClosedOrder> closed, CloseReason reason)
      throws SQLException {
    append(
        c,
        closed.stream()
            .map(
                o ->
                    new Pending(
                        o.orderId(),
                        tenantId,
                        EventType.CLOSED,
                        Map.of("reason", reason.name(), "lagMs", o.lagMillis())))
            .toList());
  }

  /** {@code cancel_requested}: the cancel request's transaction. */
  public static void cancelRequested(Connection c, String orderId, String tenantId, String userId)
      throws SQLException {
    append(
        c,
        List.of(
            new Pending(orderId, tenantId, EventType.CANCEL_REQUESTED, Map.of("userId", userId))));
  }

  /**
   * Inserts {@code events} in list order, stamped with NOW(3): multi-row INSERTs, each under RDS
   * Proxy's 16 KB pinning limit (a 500-order close writes ~73 KB of rows), every value bound once
   * ({@link Statements.Rows}).
   */
  public static void append(Connection c, List<Pending> events) throws SQLException {
    if (events.isEmpty()) {
      return;
    }
    String trace = MDC.get(TRACE_KEY);
    String traceId = trace == null || trace.equals("-") ? null : trace;
    Statements.Rows rows =
        new Statements.Rows(
            c,
            "INSERT INTO outbox (event_id, order_id, tenant_id, event_type, schema_version,"
                + " payload, trace_id, committed_at) VALUES",
            "(?,?,?,?," + SCHEMA_VERSION + ",?,?,NOW(3))");
    for (Pending e : events) {
      rows.add(
          UUID.randomUUID().toString(),
          e.orderId(),
          e.tenantId(),
          e.type().wireName(),
          payload(e),
          traceId);
    }
    rows.execute();
  }

  private static String payload(Pending e) {
    String json = Json.write(new TreeMap<>(e.payload()));
    if (json.length() > MAX_PAYLOAD_CHARS) {
      throw new IllegalArgumentException(
          "payload of " + e.type().wireName() + " for order " + e.orderId() + " is too long");
    }
    return json;
  }
}
