package io.ordertimeout.aws;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ordertimeout.wiring.Components;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * On Lambda the merchant keys come from Secrets Manager only, as the DB password does: a plain key
 * in the function's environment fails init, naming the variable and never its value.
 */
class PlainSecretsOnLambdaTest {
  private static final String KEY = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n-----END";

  @Test
  void aPlainMerchantKeyOnLambdaFailsInit() {
    for (String name : new String[] {"OTC_WECHAT_PRIVATE_KEY", "OTC_WECHAT_APIV3_KEY"}) {
      Map<String, String> env = lambdaEnvironment();
      env.put(name, KEY);

      assertThatThrownBy(() -> ConfigLoader.load(env, PlainSecretsOnLambdaTest::noSecrets))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining(name + " is set on Lambda function otc-payment-notify")
          .hasMessageContaining("OTC_WECHAT_SECRET_ARN")
          .hasMessageNotContaining("BEGIN");
      // and where WeChat Pay is built from the environment
      assertThatThrownBy(() -> Components.gatewayFromEnvironment(env))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining(name + " is set on Lambda function");
    }
  }

  @Test
  void locallyThePlainKeysAreStillTaken() {
    Map<String, String> env = lambdaEnvironment();
    env.remove("AWS_LAMBDA_FUNCTION_NAME");
    env.put("OTC_WECHAT_APIV3_KEY", "0123456789abcdef0123456789abcdef");

    ConfigLoader.load(env, PlainSecretsOnLambdaTest::noSecrets);
  }

  private static Map<String, String> lambdaEnvironment() {
    Map<String, String> env = new HashMap<>();
    env.put("AWS_LAMBDA_FUNCTION_NAME", "otc-payment-notify");
    env.put("OTC_MYSQL_URL", "jdbc:mysql://db:3306/otc");
    env.put("OTC_REDIS_URI", "rediss://redis:6379");
    return env;
  }

  private static Secrets noSecrets() {
    throw new AssertionError("no secret is named");
  }
}
