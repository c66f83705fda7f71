package io.ordertimeout.outbox;

import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.ClosedOrder;
import io.ordertimeout.domain.Order;
import io.ordertimeout.mysql.OrderStore;
import io.ordertimeout.mysql.Statements;
import io.ordertimeout.stream.EventType;
import io.ordertimeout.util.Json;
import java.sql.Connection;
import java.sql.PreparedStatement;
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

  /**
   * {@code closed}: one per order of {@code closed}, which the close transaction has just marked
   * CLOSED with {@code reason}. The server writes the rows from the orders' own (one INSERT ...
   * SELECT per 16 KB part of their ids, in order id order), so a 500-order close sends its ids once
   * instead of seven bound values per event, which cost the driver a bind value per column and a
   * rewritten multi-row text (two fifths of what a close allocated). The payload is the one {@link
   * #append} writes ({@code {"lagMs":...,"reason":"..."}}, keys sorted, the lag from the row's
   * {@code expire_at} to its {@code closed_at}, which the close set to the lock time its lag is
   * measured to). Each statement's event ids are a random UUID's first 20 hex digits and the row's
   * number in the statement: unique as the {@code outbox_event_id} key demands (74 random bits a
   * statement), in the UUID form subscribers expect, without a UUID and its bound text per row.
   * Rows written must be as many as the ids: otherwise an id was not a CLOSED order of the tenant,
   * and the transaction fails.
   */
  public static void closed(
      Connection c, String tenantId, Collection<ClosedOrder> closed, CloseReason reason)
      throws SQLException {
    if (closed.isEmpty()) {
      return;
    }
    String trace = MDC.get(TRACE_KEY);
    String traceId = trace == null || trace.equals("-") ? null : trace;
    String sql =
        "INSERT INTO outbox (event_id, order_id, tenant_id, event_type, schema_version,"
            + " payload, trace_id, committed_at)"
            + " SELECT CONCAT(?, LPAD(LOWER(HEX(ROW_NUMBER() OVER (ORDER BY order_id))), 12, '0')),"
            + " order_id, tenant_id, '"
            + EventType.CLOSED.wireName()
            + "', "
            + SCHEMA_VERSION
            + ", CONCAT('{\"lagMs\":', TIMESTAMPDIFF(MICROSECOND, expire_at, closed_at) DIV 1000,"
            + " ',\"reason\":\"', ?, '\"}'), ?, NOW(3)"
            + " FROM orders WHERE tenant_id = ? AND status = 'CLOSED' AND order_id IN (%s)"
            + " ORDER BY order_id";
    List<String> ids = closed.stream().map(ClosedOrder::orderId).toList();
    for (List<String> part : Statements.inLists(sql, ids)) {
      int written;
      try (PreparedStatement ps =
          c.prepareStatement(String.format(sql, OrderStore.placeholders(part.size())))) {
        ps.setString(1, UUID.randomUUID().toString().substring(0, 24));
        ps.setString(2, reason.name());
        ps.setString(3, traceId);
        ps.setString(4, tenantId);
        OrderStore.bind(ps, 5, part);
        written = ps.executeUpdate();
      }
      if (written != part.size()) {
        throw new IllegalStateException(
            "wrote "
                + written
                + " closed events for "
                + part.size()
                + " orders of tenant "
                + tenantId
                + " (first "
                + part.get(0)
                + "): an order is not CLOSED");
      }
    }
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
   * Inserts {@code events} in list order, stamped with NOW(3): one multi-row INSERT, cut into parts
   * that stay under RDS Proxy's 16 KB pinning limit (a 500-order close writes ~73 KB of rows).
   */
  public static void append(Connection c, List<Pending> events) throws SQLException {
    if (events.isEmpty()) {
      return;
    }
    String trace = MDC.get(TRACE_KEY);
    String traceId = trace == null || trace.equals("-") ? null : trace;
    String sql =
        "INSERT INTO outbox (event_id, order_id, tenant_id, event_type, schema_version,"
            + " payload, trace_id, committed_at) VALUES (?,?,?,?,?,?,?,NOW(3))";
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      Statements.Batch batch = new Statements.Batch(ps, sql);
      for (Pending e : events) {
        batch.row(
            UUID.randomUUID().toString(),
            e.orderId(),
            e.tenantId(),
            e.type().wireName(),
            SCHEMA_VERSION,
            payload(e),
            traceId);
      }
      batch.execute();
    }
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
