package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.http.ContentStreamProvider;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.HttpSigner;

/**
 * API Gateway's SigV4 check, done on a request a {@link RecordingProxy} recorded (the local gateway
 * verifies none): the Authorization header is well-formed for the keys' scope (service {@code
 * execute-api}, the region, X-Amz-Date on the scope's day) and valid, the AWS SDK's signer
 * computing the same signature from the headers the request says it signed, its body and its
 * X-Amz-Date.
 */
final class SigV4Wire {
  private static final DateTimeFormatter AMZ_DATE =
      DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);

  private final String accessKey;
  private final String secretKey;
  private final String region;
  private final Pattern authorization;

  SigV4Wire(String accessKey, String secretKey, String region) {
    this.accessKey = accessKey;
    this.secretKey = secretKey;
    this.region = region;
    this.authorization =
        Pattern.compile(
            "AWS4-HMAC-SHA256 Credential="
                + Pattern.quote(accessKey)
                + "/(?<date>\\d{8})/"
                + Pattern.quote(region)
                + "/execute-api/aws4_request, SignedHeaders=(?<signed>[a-z0-9;-]+),"
                + " Signature=[0-9a-f]{64}");
  }

  /** The headers the request signed, after checking its signature against {@code edge}'s URL. */
  List<String> assertSigned(RecordingProxy.Recorded r, URI edge) {
    String what = r.method() + " " + r.pathAndQuery();
    String header = r.header("authorization");
    String amzDate = r.header("x-amz-date");
    assertThat(header).as(what).isNotNull();
    Matcher m = authorization.matcher(header);
    assertThat(m.matches()).as(header).isTrue();
    assertThat(amzDate).matches("\\d{8}T\\d{6}Z").startsWith(m.group("date"));
    List<String> signed = List.of(m.group("signed").split(";"));
    assertThat(signed).contains("host", "x-amz-date");

    SdkHttpRequest.Builder request =
        SdkHttpRequest.builder()
            .method(SdkHttpMethod.fromValue(r.method()))
            .uri(URI.create(edge + r.pathAndQuery()));
    signed.forEach(name -> request.putHeader(name, r.header(name)));
    Instant at = AMZ_DATE.parse(amzDate, Instant::from);
    String expected =
        AwsV4HttpSigner.create()
            .sign(
                s ->
                    s.identity(AwsBasicCredentials.create(accessKey, secretKey))
                        .request(request.build())
                        .payload(
                            r.body().length == 0
                                ? null
                                : ContentStreamProvider.fromByteArray(r.body()))
                        .putProperty(AwsV4HttpSigner.SERVICE_SIGNING_NAME, "execute-api")
                        .putProperty(AwsV4HttpSigner.REGION_NAME, region)
                        .putProperty(HttpSigner.SIGNING_CLOCK, Clock.fixed(at, ZoneOffset.UTC)))
            .request()
            .firstMatchingHeader("Authorization")
            .orElseThrow();
    assertThat(header).as(what).isEqualTo(expected);
    return signed;
  }

  /** As above, against the URL of the Host the request was sent to. */
  List<String> assertSigned(RecordingProxy.Recorded r) {
    return assertSigned(r, URI.create("http://" + r.header("host")));
  }
}
