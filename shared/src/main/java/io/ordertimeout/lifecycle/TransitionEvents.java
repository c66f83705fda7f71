package io.ordertimeout.lifecycle;

import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.mysql.DbTime;
import io.ordertimeout.mysql.OrderStore;
import io.ordertimeout.mysql.Statements;
import io.ordertimeout.outbox.Outbox;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The outbox event of a generic transition: its name, from and to, and the columns the transition
 * declares, read back after the UPDATE in the same transaction (times as epoch ms, names in
 * camelCase as the other payloads).
 */
final class TransitionEvents {
  private TransitionEvents() {}

  /** One event per changed order, with its transition and the columns the transition declares. */
  static List<Outbox.Pending> of(
      Connection c, Transition t, String tenantId, Collection<String> ids) throws SQLException {
    List<Outbox.Pending> events = new ArrayList<>();
    String sql =
        "SELECT order_id, "
            + String.join(", ", t.eventColumns())
            + " FROM orders WHERE tenant_id = ? AND order_id IN (%s) ORDER BY order_id";
    for (List<String> part : Statements.inLists(sql, new ArrayList<>(ids))) {
      try (PreparedStatement ps =
          c.prepareStatement(String.format(sql, OrderStore.placeholders(part.size())))) {
        ps.setString(1, tenantId);
        OrderStore.bind(ps, 2, part);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            Map<String, Object> payload = new LinkedHashMap<>();
            payload.put("transition", t.wireName());
            payload.put("from", t.from().name());
            payload.put("to", t.to().name());
            for (String column : t.eventColumns()) {
              Object value = column.endsWith("_at") ? millis(rs, column) : rs.getObject(column);
              if (value != null) {
                payload.put(camel(column), value);
              }
            }
            String id = rs.getString("order_id");
            events.add(new Outbox.Pending(id, tenantId, t.event(), payload));
          }
        }
      }
    }
    return events;
  }

  /**
   * The due time of {@code kind} each event read back (the transition that starts a deadline
   * carries its column): the timers are scheduled from it without another read.
   */
  static Map<String, Long> dueTimes(List<Outbox.Pending> events, DeadlineKind kind) {
    String field = camel(DueColumns.of(kind));
    Map<String, Long> due = new java.util.TreeMap<>();
    for (Outbox.Pending e : events) {
      if (e.payload().get(field) instanceof Long at) {
        due.put(e.orderId(), at);
      }
    }
    return due;
  }

  static Long millis(ResultSet rs, String column) throws SQLException {
    java.time.Instant at = DbTime.instant(rs, column);
    return at == null ? null : at.toEpochMilli();
  }

  /** receive_due_at -> receiveDueAt, as the outbox payloads name fields. */
  static String camel(String column) {
    StringBuilder out = new StringBuilder();
    boolean upper = false;
    for (char ch : column.toCharArray()) {
      if (ch == '_') {
        upper = true;
      } else {
        out.append(upper ? Character.toUpperCase(ch) : ch);
        upper = false;
      }
    }
    return out.toString();
  }
}
