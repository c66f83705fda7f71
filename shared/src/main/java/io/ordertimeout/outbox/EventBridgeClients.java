package io.ordertimeout.outbox;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.core.retry.RetryMode;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.eventbridge.EventBridgeClient;
import software.amazon.awssdk.services.eventbridge.EventBridgeClientBuilder;

/** Builds the relay's EventBridge client, once per execution environment. */
public final class EventBridgeClients {
  /**
   * One attempt of PutEvents: a healthy call answers in tens of milliseconds, so 3 s is only ever
   * reached by a call that hangs (a brownout), and it is cut there instead of at the 5 s socket
   * timeout.
   */
  static final Duration ATTEMPT_TIMEOUT = Duration.ofSeconds(3);

  /**
   * One call, its attempts and backoffs together: the standard retry mode's 3 attempts x 3 s plus
   * the backoffs fit in 10 s, a third of the relay's 30 s lease; the relay cuts it further to the
   * invocation's time left.
   */
  static final Duration CALL_TIMEOUT = Duration.ofSeconds(10);

  private EventBridgeClients() {}

  /**
   * A client for {@code region}; {@code endpoint} non-null points it at an emulator. The SDK's
   * standard retries (3 attempts, backoff) absorb a throttled call; every attempt ends within 3 s
   * and every call within 10 s, retries included (EventBridgePublisher cuts both to the time its
   * invocation has left), so a hung bus cannot hold the relay past its budget.
   */
  public static EventBridgeClient create(
      String region, URI endpoint, AwsCredentialsProvider credentials) {
    EventBridgeClientBuilder builder =
        EventBridgeClient.builder()
            .region(Region.of(region))
            .credentialsProvider(credentials)
            .overrideConfiguration(
                o ->
                    o.apiCallAttemptTimeout(ATTEMPT_TIMEOUT)
                        .apiCallTimeout(CALL_TIMEOUT)
                        .retryStrategy(RetryMode.STANDARD))
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
