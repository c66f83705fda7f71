package io.ordertimeout.mysql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ordertimeout.aws.ConfigLoader;
import io.ordertimeout.aws.Secrets;
import io.ordertimeout.config.OtcConfig;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class JdbcTransportTest {
  private static final String FUNCTION = "otc-order-created";

  @Test
  void aUrlWithoutModeGetsFullVerification() {
    assertThat(JdbcTransport.requireVerified("jdbc:mysql://proxy:3306/otc", FUNCTION))
        .isEqualTo("jdbc:mysql://proxy:3306/otc?sslMode=VERIFY_IDENTITY");
    assertThat(
            JdbcTransport.requireVerified(
                "jdbc:mysql://proxy:3306/otc?connectTimeout=2000", FUNCTION))
        .isEqualTo("jdbc:mysql://proxy:3306/otc?connectTimeout=2000&sslMode=VERIFY_IDENTITY");
    assertThat(JdbcTransport.requireVerified("jdbc:mariadb://proxy:3306/otc", FUNCTION))
        .isEqualTo("jdbc:mariadb://proxy:3306/otc?sslMode=verify-full");
  }

  @Test
  void anExplicitFullVerificationIsKept() {
    String url = "jdbc:mysql://proxy:3306/otc?sslmode=verify_identity&useSSL=true";

    assertThat(JdbcTransport.requireVerified(url, FUNCTION)).isEqualTo(url);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "sslMode=PREFERRED",
        "sslMode=REQUIRED",
        "sslMode=VERIFY_CA",
        "sslMode=DISABLED",
        "useSSL=false",
        "sslMode=VERIFY_IDENTITY&verifyServerCertificate=false",
        "trustServerCertificate=true"
      })
  void aWeakerOptionIsRefusedNamingTheFunctionAndTheOption(String options) {
    String url = "jdbc:mysql://proxy:3306/otc?" + options;

    assertThatThrownBy(() -> JdbcTransport.requireVerified(url, FUNCTION))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("Lambda function " + FUNCTION)
        .hasMessageContaining("sslMode=VERIFY_IDENTITY")
        .hasMessageContaining(options.contains("&") ? "verifyServerCertificate=false" : options);
  }

  @Test
  void onLambdaTheLoadedConfigurationVerifiesTheServer() {
    OtcConfig config = ConfigLoader.load(env(FUNCTION, "jdbc:mysql://proxy:3306/otc"), noSecrets());

    assertThat(config.mysqlUrl()).isEqualTo("jdbc:mysql://proxy:3306/otc?sslMode=VERIFY_IDENTITY");
  }

  @Test
  void onLambdaAWeakUrlFailsInit() {
    Map<String, String> env = env(FUNCTION, "jdbc:mysql://proxy:3306/otc?sslMode=REQUIRED");

    assertThatThrownBy(() -> ConfigLoader.load(env, noSecrets()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("sets sslMode=REQUIRED");
  }

  @Test
  void offLambdaTheUrlIsLeftAsConfigured() {
    OtcConfig config = ConfigLoader.load(env(null, "jdbc:mysql://127.0.0.1:3306/otc"), noSecrets());

    assertThat(config.mysqlUrl()).isEqualTo("jdbc:mysql://127.0.0.1:3306/otc");
  }

  private static Map<String, String> env(String function, String url) {
    Map<String, String> env = new HashMap<>();
    if (function != null) {
      env.put("AWS_LAMBDA_FUNCTION_NAME", function);
    }
    env.put("OTC_MYSQL_URL", url);
    env.put("OTC_MYSQL_USER", "otc_app");
    env.put("OTC_REDIS_URI", "rediss://redis:6379");
    return env;
  }

  private static Supplier<Secrets> noSecrets() {
    return () -> {
      throw new AssertionError("no secret is named");
    };
  }
}
