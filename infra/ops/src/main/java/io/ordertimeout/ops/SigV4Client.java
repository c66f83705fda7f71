package io.ordertimeout.ops;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Set;
import software.amazon.awssdk.http.ContentStreamProvider;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.SignedRequest;
import software.amazon.awssdk.identity.spi.AwsCredentialsIdentity;

/**
 * JSON calls to an HTTP API, signed with SigV4 for {@code execute-api} by the AWS SDK's own signer
 * (the same {@link AwsV4HttpSigner} the SDK's clients use), or sent unsigned as the internet would.
 * The JDK client sends them; the signer only computes headers, so what it signed is copied onto the
 * request as is.
 */
final class SigV4Client {

  /** A response with the wall time of its request. */
  record Response(int status, String body, long millis) {}

  /** The service name API Gateway's IAM authorizer checks in the credential scope. */
  static final String SERVICE = "execute-api";

  /**
   * 30 s per request: API Gateway gives an integration at most 30 s (HTTP API's hard limit), so a
   * call still unanswered then never will be.
   */
  private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

  private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);

  /** Headers the JDK client sets itself and refuses from callers; it sends Host as signed. */
  private static final Set<String> RESTRICTED =
      Set.of("host", "content-length", "connection", "expect", "upgrade");

  private final AwsCredentialsIdentity credentials;
  private final String region;
  private final AwsV4HttpSigner signer = AwsV4HttpSigner.create();
  private final HttpClient http =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(CONNECT_TIMEOUT)
          .build();

  SigV4Client(AwsCredentialsIdentity credentials, String region) {
    this.credentials = credentials;
    this.region = region;
  }

  /** GET or POST {@code uri}; a null body sends none; {@code headers} are name, value pairs. */
  Response send(String method, URI uri, String body, boolean sign, String... headers)
      throws IOException, InterruptedException {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(uri)
            .timeout(REQUEST_TIMEOUT)
            .method(method, publisher(body))
            .header("accept", "application/json");
    if (body != null) {
      request.header("content-type", "application/json");
    }
    for (int i = 0; i + 1 < headers.length; i += 2) {
      request.header(headers[i], headers[i + 1]);
    }
    if (sign) {
      signedHeaders(method, uri, body)
          .headers()
          .forEach((name, values) -> copy(request, name, values));
    }
    long started = System.nanoTime();
    HttpResponse<String> response =
        http.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    long millis = (System.nanoTime() - started) / 1_000_000;
    return new Response(response.statusCode(), response.body(), millis);
  }

  /**
   * The request as the SDK signs it: Authorization, X-Amz-Date and, for session keys, the token.
   */
  private SdkHttpRequest signedHeaders(String method, URI uri, String body) {
    SdkHttpRequest.Builder unsigned =
        SdkHttpRequest.builder().method(SdkHttpMethod.fromValue(method)).uri(uri);
    if (body != null) {
      unsigned.putHeader("content-type", "application/json");
    }
    SignedRequest signed =
        signer.sign(
            r ->
                r.identity(credentials)
                    .request(unsigned.build())
                    .payload(body == null ? null : ContentStreamProvider.fromUtf8String(body))
                    .putProperty(AwsV4HttpSigner.SERVICE_SIGNING_NAME, SERVICE)
                    .putProperty(AwsV4HttpSigner.REGION_NAME, region));
    return signed.request();
  }

  private static void copy(HttpRequest.Builder request, String name, Iterable<String> values) {
    String lower = name.toLowerCase(Locale.ROOT);
    if (RESTRICTED.contains(lower) || lower.equals("content-type")) {
      return; // content-type is already on the request with the value signed
    }
    values.forEach(v -> request.header(name, v));
  }

  private static HttpRequest.BodyPublisher publisher(String body) {
    return body == null
        ? HttpRequest.BodyPublishers.noBody()
        : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8);
  }
}
