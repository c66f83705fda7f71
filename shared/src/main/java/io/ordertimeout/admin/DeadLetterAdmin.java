package io.ordertimeout.admin;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.ordertimeout.mysql.OrderStore;
import io.ordertimeout.mysql.Tx;
import io.ordertimeout.stream.EventStream;
import io.ordertimeout.stream.EventType;
import io.ordertimeout.stream.OrderEvent;
import io.ordertimeout.util.Json;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * The operator's view of the dead-letter store (table dead_letters): list, inspect, redrive.
 *
 * <p>A redrive is one transaction per dead letter: lock its row, skip it if already resolved,
 * append its event to the stream again, mark it resolved (REDRIVEN, by whom, the new entry id),
 * commit. The row lock makes concurrent redrives of the same letter queue behind each other and
 * find it resolved, so redriving twice is redriving once. The append happens under the lock and
 * before the commit: if the commit then fails the letter stays open and a retry appends again; the
 * consumers' close path is idempotent (its conditional UPDATE), so a duplicate close_due or
 * cancel_requested is a no-op, while a resolved letter whose event never reached the stream cannot
 * happen.
 */
public final class DeadLetterAdmin {
  /** A list or a filtered redrive reads at most 500 rows: one screen, one bounded set. */
  public static final int MAX_ROWS = 500;

  private static final String COLUMNS =
      "dead_letter_id, entry_id, event_type, tenant_id, order_id, payload, deliveries, errors, created_at,"
          + " resolved_at, resolution, resolved_by, redrive_entry_id";

  private final Tx tx;
  private final EventStream stream;

  public DeadLetterAdmin(Tx tx, EventStream stream) {
    this.tx = tx;
    this.stream = stream;
  }

  /**
   * Which dead letters: {@code status} open (default), resolved or all; optional tenant, order id
   * (of that tenant, or of any tenant when none is named) and event type; at most {@code limit}
   * (1..500), oldest first.
   */
  public record Filter(
      String status, String tenantId, String orderId, String eventType, int limit) {
    public Filter {
      if (tenantId != null) {
        OrderIds.requireTenant(tenantId);
      }
      status = status == null ? "open" : status;
      if (!List.of("open", "resolved", "all").contains(status)) {
        throw AdminRefusal.badRequest(
            "INVALID_STATUS", "status must be open, resolved or all, was '" + status + "'");
      }
      if (orderId != null) {
        OrderIds.require(orderId);
      }
      if (eventType != null && EventType.fromWire(eventType).isEmpty()) {
        throw AdminRefusal.badRequest(
            "INVALID_EVENT_TYPE",
            "eventType must be one of created, paid, cancel_requested, close_due, closed, was '"
                + eventType
                + "'");
      }
      if (limit < 1 || limit > MAX_ROWS) {
        throw AdminRefusal.badRequest(
            "INVALID_LIMIT", "limit must be 1.." + MAX_ROWS + ", was " + limit);
      }
    }

    public static Filter open() {
      return new Filter("open", null, null, null, MAX_ROWS);
    }
  }

  public List<Map<String, Object>> list(Filter filter) {
    StringBuilder sql =
        new StringBuilder("SELECT " + COLUMNS + " FROM dead_letters WHERE stream_key = ?");
    List<String> args = new ArrayList<>(List.of(stream.key()));
    switch (filter.status()) {
      case "open" -> sql.append(" AND resolved_at IS NULL");
      case "resolved" -> sql.append(" AND resolved_at IS NOT NULL");
      default -> {}
    }
    if (filter.tenantId() != null) {
      sql.append(" AND tenant_id = ?");
      args.add(filter.tenantId());
    }
    if (filter.orderId() != null) {
      sql.append(" AND order_id = ?");
      args.add(filter.orderId());
    }
    if (filter.eventType() != null) {
      sql.append(" AND event_type = ?");
      args.add(filter.eventType());
    }
    sql.append(" ORDER BY dead_letter_id LIMIT ").append(filter.limit());
    return tx.read("list dead letters " + filter, c -> query(c, sql.toString(), args));
  }

  /** One dead letter with its payload and error history; 404 when there is none. */
  public Map<String, Object> show(long id) {
    return tx.read("read dead letter " + id, c -> find(c, id, false))
        .orElseThrow(() -> AdminRefusal.notFound("dead letter " + id + " does not exist"));
  }

  /** Dead letters of one order, oldest first (the order story). */
  List<Map<String, Object>> ofOrder(Connection c, String tenantId, String orderId)
      throws SQLException {
    return query(
        c,
        "SELECT "
            + COLUMNS
            + " FROM dead_letters WHERE tenant_id = ? AND order_id = ? ORDER BY dead_letter_id",
        List.of(tenantId, orderId));
  }

  /**
   * Redrives the given dead letters; every id must exist (else 404 and nothing is redriven).
   * Answers one outcome per id: REDRIVEN with the new stream entry, ALREADY_RESOLVED, or
   * NOT_REDRIVABLE with the reason (a payload that is no event: resolve it by hand).
   */
  public Map<String, Object> redrive(List<Long> ids, String operator) {
    if (ids.isEmpty()) {
      throw AdminRefusal.badRequest("NO_DEAD_LETTERS", "name at least one dead letter id");
    }
    if (ids.size() > MAX_ROWS) {
      throw AdminRefusal.badRequest(
          "TOO_MANY", "at most " + MAX_ROWS + " dead letters per redrive, got " + ids.size());
    }
    List<Long> sorted = new ArrayList<>(new TreeSet<>(ids));
    List<Long> missing = tx.read("find dead letters " + sorted, c -> missing(c, sorted));
    if (!missing.isEmpty()) {
      throw AdminRefusal.notFound("dead letters " + missing + " do not exist; nothing redriven");
    }
    Map<String, Object> outcomes = new LinkedHashMap<>();
    for (long id : sorted) {
      outcomes.put(Long.toString(id), redriveOne(id, operator));
    }
    return outcomes;
  }

  /** Redrives the open dead letters {@code filter} selects (at most its limit). */
  public Map<String, Object> redrive(Filter filter, String operator) {
    if (!filter.status().equals("open")) {
      throw AdminRefusal.badRequest("INVALID_STATUS", "only open dead letters can be redriven");
    }
    List<Long> ids =
        list(filter).stream().map(row -> ((Number) row.get("id")).longValue()).toList();
    return ids.isEmpty() ? Map.of() : redrive(ids, operator);
  }

  private Map<String, Object> redriveOne(long id, String operator) {
    return tx.inTransaction(
        "redrive dead letter " + id,
        c -> {
          Map<String, Object> letter =
              find(c, id, true).orElseThrow(() -> new IllegalStateException("gone: " + id));
          if (letter.get("resolvedAt") != null) {
            Map<String, Object> outcome = new LinkedHashMap<>();
            outcome.put("outcome", "ALREADY_RESOLVED");
            outcome.put("resolution", letter.get("resolution"));
            outcome.put("resolvedBy", letter.get("resolvedBy"));
            return outcome;
          }
          OrderEvent event;
          try {
            event = event(letter);
          } catch (IllegalArgumentException e) {
            return Map.of("outcome", "NOT_REDRIVABLE", "reason", e.getMessage());
          }
          String entryId = stream.append(List.of(event)).get(0);
          markRedriven(c, id, operator, entryId);
          AdminActions.insert(
              c,
              "redrive",
              event.tenantOrDefault(),
              "dead-letter:" + id,
              operator,
              null,
              Map.of("entryId", entryId));
          return Map.of("outcome", "REDRIVEN", "entryId", entryId, "orderId", event.orderId());
        });
  }

  private static void markRedriven(Connection c, long id, String operator, String entryId)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "UPDATE dead_letters SET resolved_at = NOW(3), resolution = 'REDRIVEN',"
                + " resolved_by = ?, redrive_entry_id = ? WHERE dead_letter_id = ?"
                + " AND resolved_at IS NULL")) {
      ps.setString(1, AdminActions.cut(operator, AdminActions.MAX_OPERATOR));
      ps.setString(2, entryId);
      ps.setLong(3, id);
      if (ps.executeUpdate() != 1) {
        // the row is locked FOR UPDATE and was open: another count means the lock did not hold
        throw new IllegalStateException("dead letter " + id + " changed under its row lock");
      }
    }
  }

  /** The event the dead letter's stream entry carried (field {@code e} of its payload). */
  private static OrderEvent event(Map<String, Object> letter) {
    JsonNode payload = (JsonNode) letter.get("payload");
    JsonNode e = payload == null ? null : payload.get(EventStream.FIELD);
    if (e == null || !e.isTextual()) {
      throw new IllegalArgumentException("payload has no event field '" + EventStream.FIELD + "'");
    }
    return OrderEvent.parse(e.asText());
  }

  private List<Long> missing(Connection c, List<Long> ids) throws SQLException {
    List<Long> missing = new ArrayList<>(ids);
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT dead_letter_id FROM dead_letters WHERE stream_key = ? AND dead_letter_id IN ("
                + OrderStore.placeholders(ids.size())
                + ")")) {
      ps.setString(1, stream.key());
      for (int i = 0; i < ids.size(); i++) {
        ps.setLong(i + 2, ids.get(i));
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          missing.remove(rs.getLong(1));
        }
      }
    }
    return missing;
  }

  private java.util.Optional<Map<String, Object>> find(Connection c, long id, boolean lock)
      throws SQLException {
    List<Map<String, Object>> rows =
        query(
            c,
            "SELECT "
                + COLUMNS
                + " FROM dead_letters WHERE stream_key = ? AND dead_letter_id = "
                + id
                + (lock ? " FOR UPDATE" : ""),
            List.of(stream.key()));
    return rows.stream().findFirst();
  }

  private static List<Map<String, Object>> query(Connection c, String sql, List<String> args)
      throws SQLException {
    List<Map<String, Object>> rows = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.size(); i++) {
        ps.setString(i + 1, args.get(i));
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.add(row(rs));
        }
      }
    }
    return rows;
  }

  private static Map<String, Object> row(ResultSet rs) throws SQLException {
    Map<String, Object> row = new LinkedHashMap<>();
    row.put("id", rs.getLong("dead_letter_id"));
    row.put("entryId", rs.getString("entry_id"));
    row.put("eventType", rs.getString("event_type"));
    row.put("tenantId", rs.getString("tenant_id"));
    row.put("orderId", rs.getString("order_id"));
    row.put("deliveries", rs.getLong("deliveries"));
    row.put("errors", json(rs.getString("errors")));
    row.put("payload", json(rs.getString("payload")));
    row.put("createdAt", Rows.instant(rs, "created_at"));
    row.put("resolvedAt", Rows.instant(rs, "resolved_at"));
    row.put("resolution", rs.getString("resolution"));
    row.put("resolvedBy", rs.getString("resolved_by"));
    row.put("redriveEntryId", rs.getString("redrive_entry_id"));
    return row;
  }

  /** A JSON column as a tree; text that is not JSON (cut at 60,000 chars) stays a string. */
  private static JsonNode json(String text) {
    try {
      return Json.MAPPER.readTree(text);
    } catch (JsonProcessingException e) {
      return Json.MAPPER.getNodeFactory().textNode(text);
    }
  }
}
