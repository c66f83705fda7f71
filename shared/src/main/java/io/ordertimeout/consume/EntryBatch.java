package io.ordertimeout.consume;

import io.lettuce.core.StreamMessage;
import io.ordertimeout.stream.EventStream;
import io.ordertimeout.stream.OrderEvent;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A batch of stream entries sorted by what they need: nothing, a close, or a failure record. */
final class EntryBatch {
  /** An entry and its parsed event. */
  record Event(StreamMessage<String, String> entry, OrderEvent event) {}

  final List<StreamMessage<String, String>> noOps = new ArrayList<>();
  final List<Event> cancels = new ArrayList<>();
  final List<Event> closeDues = new ArrayList<>();
  final Map<StreamMessage<String, String>, String> broken = new LinkedHashMap<>();

  void add(StreamMessage<String, String> entry) {
    Map<String, String> body = entry.getBody();
    if (body == null || body.isEmpty()) {
      // Trimmed while pending (Redis returns the id without fields): nothing left to do.
      noOps.add(entry);
      return;
    }
    String payload = body.get(EventStream.FIELD);
    if (payload == null) {
      broken.put(entry, "entry has no '" + EventStream.FIELD + "' field: " + body.keySet());
      return;
    }
    try {
      OrderEvent event = OrderEvent.parse(payload);
      switch (event.type()) {
        case CANCEL_REQUESTED -> cancels.add(new Event(entry, event));
        case CLOSE_DUE -> closeDues.add(new Event(entry, event));
        default -> noOps.add(entry);
      }
    } catch (IllegalArgumentException e) {
      broken.put(entry, e.getMessage());
    }
  }
}
