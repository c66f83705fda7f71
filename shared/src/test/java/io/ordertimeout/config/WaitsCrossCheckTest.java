package io.ordertimeout.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Waits that contradict each other fail at init, naming every variable involved: a configuration in
 * which a wait outlives what encloses it never starts.
 */
class WaitsCrossCheckTest {
  private static Map<String, String> env(String... pairs) {
    Map<String, String> env = new HashMap<>();
    env.put("OTC_MYSQL_URL", "jdbc:mysql://db.internal:3306/otc");
    env.put("OTC_REDIS_URI", "redis://cache.internal:6379");
    for (int i = 0; i < pairs.length; i += 2) {
      env.put(pairs[i], pairs[i + 1]);
    }
    return env;
  }

  @Test
  void aClaimLeaseShorterThanTheWeChatStepIsRefused() {
    assertThatThrownBy(() -> OtcConfig.fromEnvironment(env("OTC_CLAIM_LEASE_MS", "1000")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("invalid configuration: OTC_CLAIM_LEASE_MS (1000)")
        .hasMessageContaining("OTC_WECHAT_STEP_TIMEOUT_MS (10000)");

    // the same lease with a step it covers is fine
    assertThat(
            OtcConfig.fromEnvironment(
                    env("OTC_CLAIM_LEASE_MS", "1000", "OTC_WECHAT_STEP_TIMEOUT_MS", "1000"))
                .claimLease())
        .hasMillis(1000);
  }

  @Test
  void lockWaitsTimesRetriesLongerThanTheFunctionAreRefused() {
    // 5 s lock wait -> 6 s socket timeout -> 3 attempts = 18 s, in a 10 s function
    assertThatThrownBy(() -> OtcConfig.fromEnvironment(env("OTC_DB_LOCK_WAIT_SECONDS", "5")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("OTC_DB_SOCKET_TIMEOUT_MS (6000")
        .hasMessageContaining("OTC_DB_LOCK_WAIT_SECONDS 5")
        .hasMessageContaining("18000 ms")
        .hasMessageContaining("OTC_FUNCTION_TIMEOUT_MS (10000)");

    // the same lock wait fits the sweep's 90 s
    assertThat(
            OtcConfig.fromEnvironment(
                env("OTC_DB_LOCK_WAIT_SECONDS", "5", "OTC_FUNCTION_TIMEOUT_MS", "90000")))
        .isNotNull();
  }

  @Test
  void aSocketTimeoutThatEndsALockWaitBeforeMySqlDoesIsRefused() {
    assertThatThrownBy(
            () ->
                OtcConfig.fromEnvironment(
                    env("OTC_DB_LOCK_WAIT_SECONDS", "2", "OTC_DB_SOCKET_TIMEOUT_MS", "2000")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("OTC_DB_SOCKET_TIMEOUT_MS (2000)")
        .hasMessageContaining("OTC_DB_LOCK_WAIT_SECONDS (2 s)");
  }

  @Test
  void aWeChatCallLongerThanTheFunctionIsRefused() {
    assertThatThrownBy(() -> OtcConfig.fromEnvironment(env("OTC_WECHAT_READ_TIMEOUT_MS", "9000")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("OTC_WECHAT_CONNECT_TIMEOUT_MS (2000)")
        .hasMessageContaining("OTC_WECHAT_READ_TIMEOUT_MS (9000)")
        .hasMessageContaining("OTC_FUNCTION_TIMEOUT_MS (10000)");
  }
}
