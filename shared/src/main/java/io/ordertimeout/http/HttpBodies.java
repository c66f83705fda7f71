package io.ordertimeout.http;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;

/**
 * What API Gateway's HTTP API (payload 2.0) hands a function: a body maybe base64, lower-cased
 * headers.
 */
public final class HttpBodies {
  private HttpBodies() {}

  /** The raw request bytes; a body API Gateway base64-encoded that does not decode is a 400. */
  public static byte[] bytes(String body, boolean base64) {
    if (body == null) {
      return new byte[0];
    }
    if (!base64) {
      return body.getBytes(StandardCharsets.UTF_8);
    }
    try {
      return Base64.getDecoder().decode(body);
    } catch (IllegalArgumentException e) {
      throw ApiError.badRequest("INVALID_BODY", "body is flagged base64 but does not decode");
    }
  }

  /** A header by name, whatever its case (HTTP API lower-cases them; other callers may not). */
  public static String header(Map<String, String> headers, String name) {
    if (headers == null) {
      return null;
    }
    String exact = headers.get(name.toLowerCase(java.util.Locale.ROOT));
    if (exact != null) {
      return exact;
    }
    for (Map.Entry<String, String> e : headers.entrySet()) {
      if (e.getKey().equalsIgnoreCase(name)) {
        return e.getValue();
      }
    }
    return null;
  }
}
