package io.ordertimeout.aws;

import com.fasterxml.jackson.databind.JsonNode;

/** Field access on secret JSON with errors that name the field, never the value. */
final class Fields {
  private Fields() {}

  static String required(String secretId, JsonNode json, String field) {
    String value = optional(json, field);
    if (value == null || value.isBlank()) {
      throw new SecretUnavailableException("secret " + secretId + " has no '" + field + "'");
    }
    return value;
  }

  static String optional(JsonNode json, String field) {
    JsonNode node = json.get(field);
    return node == null || node.isNull() ? null : node.asText();
  }
}
