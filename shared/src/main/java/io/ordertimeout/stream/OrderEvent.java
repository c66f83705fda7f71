package io.ordertimeout.stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.util.Json;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * One event of the order stream, a versioned JSON document: {@code {"v":1,"type":"close_due",
 * "orderId":...,"tenantId":...,"at":epochMs, ...}}. {@code tenantId} is absent only in entries
 * written before tenants were part of the keys ({@link #tenantOrDefault}); {@code at} is the
 * producer's wall clock, informational (deadlines are decided by MySQL). Type-specific fields are
 * in {@code details}.
 */
public record OrderEvent(
    EventType type, String orderId, String tenantId, long at, Map<String, Object> details) {
  /** The version this code writes and reads; a consumer refuses others (they are retried). */
  public static final int VERSION = 1;

  /** WeChat Pay's out_trade_no: 6 to 32 characters of [0-9A-Za-z_-|*]. */
  private static final Pattern ORDER_ID = Pattern.compile("[0-9A-Za-z_\\-|*]{6,32}");

  public OrderEvent {
    details = Collections.unmodifiableMap(new LinkedHashMap<>(details));
  }

  public static OrderEvent of(EventType type, String orderId, String tenantId, long at) {
    return new OrderEvent(type, orderId, tenantId, at, Map.of());
  }

  /**
   * The order's tenant: entries written before tenants were part of the keys name none, and every
   * order then was the default tenant's.
   */
  public String tenantOrDefault() {
    return tenantId == null ? TenantIds.DEFAULT : tenantId;
  }

  /** A copy with one more detail field (null values are left out of the document). */
  public OrderEvent with(String field, Object value) {
    Map<String, Object> more = new LinkedHashMap<>(details);
    if (value != null) {
      more.put(field, value);
    }
    return new OrderEvent(type, orderId, tenantId, at, more);
  }

  public String toJson() {
    ObjectNode root =
        Json.object().put("v", VERSION).put("type", type.wireName()).put("orderId", orderId);
    if (tenantId != null) {
      root.put("tenantId", tenantId);
    }
    root.put("at", at);
    details.forEach((k, v) -> root.set(k, Json.MAPPER.valueToTree(v)));
    return Json.write(root);
  }

  /**
   * Parses a stream payload; throws {@link IllegalArgumentException} naming what is wrong, so the
   * consumer records it in the entry's error history.
   */
  public static OrderEvent parse(String json) {
    JsonNode root = readTree(json);
    int v = root.path("v").asInt(-1);
    if (v != VERSION) {
      throw new IllegalArgumentException(
          "unsupported event version " + root.path("v") + " (this consumer reads " + VERSION + ")");
    }
    String typeName = root.path("type").asText("");
    EventType type =
        EventType.fromWire(typeName)
            .orElseThrow(
                () -> new IllegalArgumentException("unknown event type '" + typeName + "'"));
    String orderId = root.path("orderId").asText("");
    if (!ORDER_ID.matcher(orderId).matches()) {
      throw new IllegalArgumentException("invalid orderId '" + orderId + "' in " + typeName);
    }
    if (!root.path("at").canConvertToLong()) {
      throw new IllegalArgumentException("event " + typeName + " of " + orderId + " has no 'at'");
    }
    String tenantId = root.hasNonNull("tenantId") ? root.get("tenantId").asText() : null;
    return new OrderEvent(type, orderId, tenantId, root.get("at").asLong(), details(root));
  }

  private static JsonNode readTree(String json) {
    try {
      JsonNode root = Json.MAPPER.readTree(json);
      if (root == null || !root.isObject()) {
        throw new IllegalArgumentException("event payload is not a JSON object");
      }
      return root;
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalArgumentException("event payload is not JSON: " + e.getOriginalMessage(), e);
    }
  }

  private static Map<String, Object> details(JsonNode root) {
    Map<String, Object> details = new LinkedHashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> field = it.next();
      switch (field.getKey()) {
        case "v", "type", "orderId", "tenantId", "at" -> {}
        default ->
            details.put(field.getKey(), Json.MAPPER.convertValue(field.getValue(), Object.class));
      }
    }
    return details;
  }
}
