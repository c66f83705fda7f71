package io.ordertimeout.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ordertimeout.mysql.OrderStore;
import io.ordertimeout.outbox.OutboxRow;
import io.ordertimeout.outbox.OutboxStore;
import io.ordertimeout.util.Json;
import java.util.List;

/**
 * {@code GET /orders/{id}/events}: the order's audit trail, read from the outbox. Each event is the
 * document subscribers got (id, seq, type, at, traceId and its fields) plus where it has been
 * delivered: {@code {"orderId":...,"events":[{...,"streamed":true,"bridged":false}]}}. Rows older
 * than the outbox retention are gone, so the timeline covers that window.
 */
public final class OrderTimeline {
  private final OutboxStore outbox;
  private final OrderStore orders;

  public OrderTimeline(OutboxStore outbox, OrderStore orders) {
    this.outbox = outbox;
    this.orders = orders;
  }

  /** The answer's JSON; throws ApiError 404 for an unknown order or another tenant's. */
  public String answer(String tenantId, String orderId) {
    if (!orders.owns(tenantId, orderId)) {
      throw ApiError.notFound("order " + orderId + " does not exist");
    }
    List<OutboxRow> rows = outbox.timeline(tenantId, orderId);
    ObjectNode root = Json.object().put("orderId", orderId);
    ArrayNode events = root.putArray("events");
    rows.forEach(r -> events.add(r.node()));
    return Json.write(root);
  }
}
