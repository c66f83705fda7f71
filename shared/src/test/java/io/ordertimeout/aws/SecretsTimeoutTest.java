package io.ordertimeout.aws;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;

/**
 * A Secrets Manager endpoint that accepts connections and never answers: one read, the SDK's
 * retries included, ends within the client's API call timeout (4 s), not after every attempt's
 * socket timeout in a row.
 */
@Tag("integration")
class SecretsTimeoutTest {
  @Test
  void aReadFromAHangingEndpointFailsWithinTheApiCallTimeout() throws Exception {
    try (ServerSocket hanging = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Secrets secrets =
            Secrets.create(
                "us-east-1",
                URI.create("http://127.0.0.1:" + hanging.getLocalPort()),
                StaticCredentialsProvider.create(
                    AwsBasicCredentials.create("AKIDEXAMPLE", "not-a-secret")))) {
      long started = System.nanoTime();

      assertThatThrownBy(() -> secrets.secretString("arn:aws:secretsmanager:x:1:secret:db"))
          .isInstanceOf(SecretUnavailableException.class)
          .hasMessageNotContaining("not-a-secret");

      long tookMs = (System.nanoTime() - started) / 1_000_000;
      System.out.println("secret read from a hanging endpoint failed after " + tookMs + " ms");
      assertThat(tookMs).isLessThan(Secrets.API_CALL_TIMEOUT.toMillis() + 2_000);
    }
  }
}
