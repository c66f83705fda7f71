package io.ordertimeout.outbox;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ordertimeout.util.Json;
import java.time.Instant;
import java.util.Iterator;
import java.util.Map;

/**
 * One outbox row as the relay and the timeline read it.
 *
 * @param seq the relay order (per order: the commit order)
 * @param eventId what subscribers deduplicate by
 * @param committedAt the database time of the state change
 */
public record OutboxRow(
    long seq,
    String eventId,
    String orderId,
    String tenantId,
    String type,
    int schemaVersion,
    String payload,
    String traceId,
    Instant committedAt) {

  /**
   * The document every destination gets (the stream entry's field {@code e}, the EventBridge
   * detail): {@code {"v":1,"id":...,"seq":...,"type":...,"orderId":...,"tenantId":...,"at":ms,
   * "traceId":..., ...payload}}. It is a stream.OrderEvent document with {@code id} and {@code seq}
   * added, so the stream's consumers read it unchanged.
   */
  public String document() {
    return Json.write(node());
  }

  /** As {@link #document()}, as a JSON tree (the timeline embeds it). */
  public ObjectNode node() {
    ObjectNode root =
        Json.object()
            .put("v", schemaVersion)
            .put("id", eventId)
            .put("seq", seq)
            .put("type", type)
            .put("orderId", orderId)
            .put("tenantId", tenantId)
            .put("at", committedAt.toEpochMilli());
    if (traceId != null) {
      root.put("traceId", traceId);
    }
    try {
      JsonNode fields = Json.MAPPER.readTree(payload);
      for (Iterator<Map.Entry<String, JsonNode>> it = fields.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> f = it.next();
        if (!root.has(f.getKey())) {
          root.set(f.getKey(), f.getValue());
        }
      }
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(
          "outbox row " + seq + " (event " + eventId + ") has a payload that is not JSON", e);
    }
    return root;
  }
}
