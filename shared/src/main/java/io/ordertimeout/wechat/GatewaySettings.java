package io.ordertimeout.wechat;

import java.net.URI;
import java.time.Duration;
import java.util.Objects;

/**
 * How the gateway talks to WeChat Pay.
 *
 * <p>Why 2 s to connect and 3 s to read: WeChat answers in 100-300 ms; the close path runs inside a
 * sweep invocation with a time budget and an order that waits on WeChat holds its whole batch. A
 * call slower than 3 s is cheaper to give up and retry from the stream (the trade is unchanged, or
 * the re-query sees the change) than to wait out the SDK's default 10 s. Connecting is the rarer
 * failure, and a TLS handshake to a far endpoint can take 1 s, hence 2 s rather than less.
 *
 * @param baseUrlOverride null in production; a simulator's base URL in tests and local runs, to
 *     which every request's scheme, host and port are rewritten
 */
public record GatewaySettings(Duration connectTimeout, Duration readTimeout, URI baseUrlOverride) {

  public GatewaySettings {
    Objects.requireNonNull(connectTimeout, "connectTimeout");
    Objects.requireNonNull(readTimeout, "readTimeout");
    if (connectTimeout.isNegative()
        || connectTimeout.isZero()
        || readTimeout.isNegative()
        || readTimeout.isZero()) {
      throw new IllegalArgumentException(
          "timeouts must be positive: " + connectTimeout + ", " + readTimeout);
    }
  }

  public static GatewaySettings production() {
    return new GatewaySettings(Duration.ofSeconds(2), Duration.ofSeconds(3), null);
  }

  public GatewaySettings withBaseUrl(URI baseUrl) {
    return new GatewaySettings(connectTimeout, readTimeout, baseUrl);
  }

  public GatewaySettings withReadTimeout(Duration timeout) {
    return new GatewaySettings(connectTimeout, timeout, baseUrlOverride);
  }
}
