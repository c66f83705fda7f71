package io.ordertimeout.outbox;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.eventbridge.EventBridgeClient;
import software.amazon.awssdk.services.eventbridge.EventBridgeClientBuilder;

/** Builds the relay's EventBridge client, once per execution environment. */
public final class EventBridgeClients {
  private EventBridgeClients() {}

  /**
   * A client for {@code region}; {@code endpoint} non-null points it at an emulator. The SDK's
   * standard retries (3 attempts, backoff) absorb a throttled call; timeouts stay far under the
   * relay's 30 s lease, so a hung call cannot outlive it.
   */
  public static EventBridgeClient create(
      String region, URI endpoint, AwsCredentialsProvider credentials) {
    EventBridgeClientBuilder builder =
        EventBridgeClient.builder()
            .region(Region.of(region))
            .credentialsProvider(credentials)
            .httpClientBuilder(
                UrlConnectionHttpClient.builder()
                    .connectionTimeout(Duration.ofSeconds(2))
                    .socketTimeout(Duration.ofSeconds(5)));
    if (endpoint != null) {
      builder.endpointOverride(endpoint);
    }
    return builder.build();
  }

  /** The Lambda client, or null when OTC_EVENT_BUS_NAME is unset (no bus: stream only). */
  public static EventBridgeClient fromEnvironment(Map<String, String> env) {
    String bus = env.get("OTC_EVENT_BUS_NAME");
    if (bus == null || bus.isBlank()) {
      return null;
    }
    String endpoint = env.get("OTC_EVENTBRIDGE_ENDPOINT");
    return create(
        env.getOrDefault("AWS_REGION", "us-east-1"),
        endpoint == null || endpoint.isBlank() ? null : URI.create(endpoint),
        DefaultCredentialsProvider.builder().build());
  }
}
