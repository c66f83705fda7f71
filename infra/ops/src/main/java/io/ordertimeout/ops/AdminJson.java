package io.ordertimeout.ops;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;

/**
 * The admin API's answer as {@code ./ops admin --json} prints it, for scripts: every key in
 * camelCase (the story's rows come as MySQL names them, {@code order_id}, beside the API's own
 * {@code orderId}), and the JSON documents the rows store as text (an event's payload, a pending
 * entry's event, the order's snapshot) as nested objects rather than escaped strings. Values are
 * left as they are: a Redis key or an operator's reason is not rewritten.
 */
final class AdminJson {

  /** Fields whose text is a stored JSON document. */
  static final Set<String> DOCUMENTS =
      Set.of("payload", "event", "snapshot", "errors", "outcome", "evidence");

  private static final ObjectMapper JSON = new ObjectMapper();

  private AdminJson() {}

  /** A copy of {@code answer} in the machine form. */
  static JsonNode machine(JsonNode answer) {
    if (answer.isObject()) {
      ObjectNode out = JSON.createObjectNode();
      Iterator<Map.Entry<String, JsonNode>> fields = answer.fields();
      while (fields.hasNext()) {
        Map.Entry<String, JsonNode> field = fields.next();
        JsonNode value = field.getValue();
        if (value.isTextual() && DOCUMENTS.contains(camelCase(field.getKey()))) {
          value = document(value.textValue());
        }
        out.set(camelCase(field.getKey()), machine(value));
      }
      return out;
    }
    if (answer.isArray()) {
      ArrayNode out = JSON.createArrayNode();
      answer.forEach(element -> out.add(machine(element)));
      return out;
    }
    return answer;
  }

  /** {@code order_id} to {@code orderId}; a name without '_' is kept. */
  static String camelCase(String name) {
    if (name.indexOf('_') < 0) {
      return name;
    }
    StringBuilder out = new StringBuilder(name.length());
    boolean upper = false;
    for (char c : name.toCharArray()) {
      if (c == '_') {
        upper = out.length() > 0;
      } else {
        out.append(upper ? Character.toUpperCase(c) : c);
        upper = false;
      }
    }
    return out.toString();
  }

  /** The text as the JSON object or array it holds; any other text stays text. */
  private static JsonNode document(String text) {
    String t = text.strip();
    if (!(t.startsWith("{") || t.startsWith("["))) {
      return JSON.getNodeFactory().textNode(text);
    }
    try {
      return JSON.readTree(t);
    } catch (JsonProcessingException e) {
      return JSON.getNodeFactory().textNode(text);
    }
  }
}
