package io.ordertimeout.aws;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.secretsmanager.SecretsManagerClient;
import software.amazon.awssdk.services.secretsmanager.SecretsManagerClientBuilder;

/**
 * Reads Secrets Manager secrets once per execution environment and keeps them in memory; the DB
 * secret is read again when MySQL refuses its login (a rotation) and after a SnapStart restore.
 *
 * <p>The HTTP client is the JDK's URLConnection ({@code url-connection-client}): it loads a handful
 * of classes where the Apache client loads ~100 and Netty or the CRT bring thread pools or a native
 * library. Two calls at init and one per rotation is all this client makes, so its lower throughput
 * is irrelevant and the ~300 ms it saves in a Java cold start (AWS's own Lambda guidance) is not.
 *
 * <p>Nothing here logs or prints a secret value: errors name the secret id only.
 */
public final class Secrets implements AutoCloseable {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  /** One attempt: a Secrets Manager read answers in tens of ms from inside the region. */
  static final Duration API_CALL_ATTEMPT_TIMEOUT = Duration.ofSeconds(2);

  /**
   * The whole read, retries included: well inside Lambda's 10 s init; a SnapStart restore does not
   * wait for it at all beyond its own budget (SnapStartHooks).
   */
  static final Duration API_CALL_TIMEOUT = Duration.ofSeconds(4);

  private final SecretsManagerClient client;
  private final Map<String, String> cache = new ConcurrentHashMap<>();

  public Secrets(SecretsManagerClient client) {
    this.client = Objects.requireNonNull(client, "client");
  }

  /**
   * A client for Lambda (region from {@code AWS_REGION}, credentials from the execution role) or,
   * with {@code endpoint} set, for an emulator.
   *
   * @param endpoint null for AWS itself; the SDK also honours {@code AWS_ENDPOINT_URL}
   */
  public static Secrets create(String region, URI endpoint, AwsCredentialsProvider credentials) {
    SecretsManagerClientBuilder builder =
        SecretsManagerClient.builder()
            .region(Region.of(region))
            .credentialsProvider(credentials)
            .httpClientBuilder(
                UrlConnectionHttpClient.builder()
                    // init must not hang: Lambda's init phase is capped at 10 s
                    .connectionTimeout(Duration.ofSeconds(2))
                    .socketTimeout(Duration.ofSeconds(3)))
            // The socket timeouts bound one attempt only: with the SDK's retries (3 attempts and
            // backoff) one read took 13 s against an endpoint that accepts and never answers.
            // The whole call, retries included, ends within API_CALL_TIMEOUT.
            .overrideConfiguration(
                c ->
                    c.apiCallAttemptTimeout(API_CALL_ATTEMPT_TIMEOUT)
                        .apiCallTimeout(API_CALL_TIMEOUT));
    if (endpoint != null) {
      builder.endpointOverride(endpoint);
    }
    return new Secrets(builder.build());
  }

  /** The client Lambda uses: region from the environment, the execution role's credentials. */
  public static Secrets fromEnvironment(Map<String, String> env) {
    String region = env.get("AWS_REGION");
    if (region == null || region.isBlank()) {
      throw new IllegalArgumentException(
          "invalid configuration: AWS_REGION is not set (Lambda sets it; set it for local runs)");
    }
    return create(region, null, DefaultCredentialsProvider.builder().build());
  }

  /** The secret's string, fetched on the first call and cached for the environment's life. */
  public String secretString(String secretId) {
    return cache.computeIfAbsent(secretId, this::fetch);
  }

  /**
   * The secret's string read from Secrets Manager now, replacing the cached one: after a rotation
   * (a refused DB login) and after a SnapStart restore, whose snapshot may predate the rotation.
   */
  public String freshSecretString(String secretId) {
    String value = fetch(secretId);
    cache.put(secretId, value);
    return value;
  }

  /** The secret's string parsed as a JSON object. */
  public JsonNode json(String secretId) {
    return parse(secretId, secretString(secretId));
  }

  /** As {@link #json}, read from Secrets Manager now ({@link #freshSecretString}). */
  public JsonNode freshJson(String secretId) {
    return parse(secretId, freshSecretString(secretId));
  }

  private static JsonNode parse(String secretId, String text) {
    JsonNode node;
    try {
      node = MAPPER.readTree(text);
    } catch (JsonProcessingException e) {
      // the parser's message may quote the secret's text: keep only the position
      throw new SecretUnavailableException(
          "secret " + secretId + " is not JSON (line " + e.getLocation().getLineNr() + ")");
    }
    if (node == null || !node.isObject()) {
      throw new SecretUnavailableException("secret " + secretId + " is not a JSON object");
    }
    return node;
  }

  private String fetch(String secretId) {
    try {
      String value = client.getSecretValue(r -> r.secretId(secretId)).secretString();
      if (value == null) {
        throw new SecretUnavailableException(
            "secret " + secretId + " has no SecretString (binary secrets are not supported)");
      }
      return value;
    } catch (SdkException e) {
      throw new SecretUnavailableException("cannot read secret " + secretId + ": " + e, e);
    }
  }

  @Override
  public void close() {
    client.close();
  }
}
