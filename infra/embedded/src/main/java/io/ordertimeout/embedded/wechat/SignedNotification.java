package io.ordertimeout.embedded.wechat;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A notification as it travels on the wire: the five Wechatpay-* headers and the JSON body. Tests
 * may alter either to build forged requests.
 */
public record SignedNotification(Map<String, String> headers, String body) {

  public SignedNotification {
    headers = Map.copyOf(headers);
  }

  public String header(String name) {
    return headers.get(name);
  }

  /** A copy with one header replaced, e.g. to replay a nonce or forge a timestamp. */
  public SignedNotification withHeader(String name, String value) {
    Map<String, String> copy = new LinkedHashMap<>(headers);
    copy.put(name, value);
    return new SignedNotification(copy, body);
  }

  /** A copy with another body and the original headers: its signature no longer matches. */
  public SignedNotification withBody(String newBody) {
    return new SignedNotification(headers, newBody);
  }
}
