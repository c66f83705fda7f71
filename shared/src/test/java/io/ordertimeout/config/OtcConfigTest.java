package io.ordertimeout.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class OtcConfigTest {
  private static Map<String, String> minimal() {
    Map<String, String> env = new HashMap<>();
    env.put("OTC_MYSQL_URL", "jdbc:mysql://db.internal:3306/otc");
    env.put("OTC_REDIS_URI", "redis://user:s3cret@cache.internal:6379");
    return env;
  }

  private static Map<String, String> with(String name, String value) {
    Map<String, String> env = minimal();
    env.put(name, value);
    return env;
  }

  @Test
  void defaultsApplyWhenOnlyTheTwoRequiredVariablesAreSet() {
    OtcConfig c = OtcConfig.fromEnvironment(minimal());

    assertThat(c.mysqlUser()).isEqualTo("root");
    assertThat(c.mysqlPassword()).isEmpty();
    assertThat(c.dbPoolSize()).isEqualTo(2);
    assertThat(c.redisCluster()).isFalse();
    assertThat(c.keyPrefix()).isEqualTo("otc");
    assertThat(c.timerShards()).isEqualTo(16);
    assertThat(c.defaultOrderTimeout()).isEqualTo(Duration.ofMinutes(15));
    assertThat(c.maxOrderTimeout()).isEqualTo(Duration.ofDays(1));
    assertThat(c.sweepBatch()).isEqualTo(500);
    assertThat(c.claimLease()).isEqualTo(Duration.ofSeconds(30));
    assertThat(c.sweepPoll()).isEqualTo(Duration.ofMillis(50));
    assertThat(c.invocationMargin()).isEqualTo(Duration.ofSeconds(19));
    assertThat(c.migrateOnStart()).isFalse();
    Waits w = c.waits();
    assertThat(w.functionTimeout()).isEqualTo(Duration.ofSeconds(10));
    assertThat(w.lockWaitSeconds()).isEqualTo(2);
    assertThat(w.socketTimeout()).isEqualTo(Duration.ofSeconds(3));
    assertThat(w.transaction()).isEqualTo(Duration.ofSeconds(9));
    assertThat(w.setLockWait()).isTrue();
    assertThat(w.weChatCall()).isEqualTo(Duration.ofSeconds(5));
    assertThat(w.weChatStep()).isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void eachWaitsDefaultDerivesFromTheOneItMustOutlastOrFitIn() {
    Map<String, String> env = with("OTC_DB_LOCK_WAIT_SECONDS", "1");
    env.put("OTC_WECHAT_CONNECT_TIMEOUT_MS", "500");
    env.put("OTC_WECHAT_READ_TIMEOUT_MS", "1000");

    OtcConfig c = OtcConfig.fromEnvironment(env);

    // socket = lock wait + 1 s; margin = both transactions of a close (2 x 3 x 2 s) + 1 s
    assertThat(c.waits().socketTimeout()).isEqualTo(Duration.ofSeconds(2));
    assertThat(c.invocationMargin()).isEqualTo(Duration.ofSeconds(13));
    // step = two calls of connect + read
    assertThat(c.waits().weChatStep()).isEqualTo(Duration.ofSeconds(3));
  }

  @Test
  void valuesAreTrimmedAndBlankOnesFallBackToTheDefault() {
    Map<String, String> env = minimal();
    env.put("OTC_TIMER_SHARDS", " 64 ");
    env.put("OTC_KEY_PREFIX", "   ");
    env.put("OTC_REDIS_CLUSTER", "true");
    env.put("OTC_MIGRATE_ON_START", "TRUE");

    OtcConfig c = OtcConfig.fromEnvironment(env);

    assertThat(c.timerShards()).isEqualTo(64);
    assertThat(c.keyPrefix()).isEqualTo("otc");
    assertThat(c.redisCluster()).isTrue();
    assertThat(c.migrateOnStart()).isTrue();
  }

  @Test
  void aMissingRequiredVariableIsNamed() {
    Map<String, String> env = minimal();
    env.remove("OTC_REDIS_URI");

    assertThatThrownBy(() -> OtcConfig.fromEnvironment(env))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("invalid configuration: OTC_REDIS_URI is not set");
  }

  @Test
  void aNonNumberIsNamedWithItsValue() {
    assertThatThrownBy(() -> OtcConfig.fromEnvironment(with("OTC_SWEEP_BATCH", "lots")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("invalid configuration: OTC_SWEEP_BATCH is not a number: 'lots'");
  }

  @Test
  void everyOutOfRangeValueFailsWithTheVariableName() {
    Map<String, String> bad = new HashMap<>();
    bad.put("OTC_DB_POOL_SIZE", "65");
    bad.put("OTC_KEY_PREFIX", "a{b}");
    bad.put("OTC_TIMER_SHARDS", "0");
    bad.put("OTC_SWEEP_BATCH", "5001");
    bad.put("OTC_DEFAULT_TIMEOUT_SECONDS", "0");
    bad.put("OTC_CLAIM_LEASE_MS", "999");
    bad.put("OTC_SWEEP_POLL_MS", "5001");
    bad.put("OTC_FUNCTION_TIMEOUT_MS", "999");
    bad.put("OTC_DB_LOCK_WAIT_SECONDS", "0");
    bad.put("OTC_WECHAT_CONNECT_TIMEOUT_MS", "0");
    bad.put("OTC_WECHAT_READ_TIMEOUT_MS", "-1");
    bad.put("OTC_WECHAT_STEP_TIMEOUT_MS", "0");
    bad.put("OTC_INVOCATION_MARGIN_MS", "-1");

    bad.forEach(
        (name, value) ->
            assertThatThrownBy(() -> OtcConfig.fromEnvironment(with(name, value)))
                .as(name + "=" + value)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(name));
  }

  @Test
  void aDefaultTimeoutAboveTheMaximumIsAContradiction() {
    Map<String, String> env = with("OTC_DEFAULT_TIMEOUT_SECONDS", "7200");
    env.put("OTC_MAX_TIMEOUT_SECONDS", "3600");

    assertThatThrownBy(() -> OtcConfig.fromEnvironment(env))
        .hasMessage(
            "invalid configuration: OTC_DEFAULT_TIMEOUT_SECONDS 7200 exceeds"
                + " OTC_MAX_TIMEOUT_SECONDS 3600");
  }

  @Test
  void theBuilderChangesOneFieldAndStillValidates() {
    OtcConfig base = OtcConfig.fromEnvironment(minimal());

    assertThat(base.toBuilder().keyPrefix("t1").build().keyPrefix()).isEqualTo("t1");
    assertThat(base.toBuilder().claimLease(Duration.ofSeconds(12)).build().claimLease())
        .isEqualTo(Duration.ofSeconds(12));
    OtcConfig quickWeChat =
        base.toBuilder().waits(base.waits().withWeChatStep(Duration.ofSeconds(2))).build();
    assertThat(quickWeChat.toBuilder().claimLease(Duration.ofSeconds(2)).build().claimLease())
        .isEqualTo(Duration.ofSeconds(2));
    assertThat(base.toBuilder().timerShards(3).build().timerShards()).isEqualTo(3);
    OtcConfig batched = base.toBuilder().sweepBatch(7).build();
    assertThat(batched.sweepBatch()).isEqualTo(7);
    assertThat(batched.toBuilder().sweepBatch(500).build()).isEqualTo(base);
    assertThatThrownBy(() -> base.toBuilder().keyPrefix("has:colon").build())
        .hasMessageContaining("OTC_KEY_PREFIX");
    assertThatThrownBy(() -> base.toBuilder().claimLease(Duration.ofMillis(10)).build())
        .hasMessageContaining("OTC_CLAIM_LEASE_MS");
    assertThatThrownBy(() -> base.toBuilder().claimLease(Duration.ofSeconds(2)).build())
        .hasMessageContaining("OTC_CLAIM_LEASE_MS (2000)")
        .hasMessageContaining("OTC_WECHAT_STEP_TIMEOUT_MS (10000)");
  }

  @Test
  void toStringHidesThePasswordAndRedisCredentials() {
    OtcConfig c = OtcConfig.fromEnvironment(with("OTC_MYSQL_PASSWORD", "hunter2"));

    assertThat(c.toString())
        .contains("redisUri=redis://***@cache.internal:6379", "mysqlUrl=jdbc:mysql://db.internal")
        .contains("mysqlPassword=***")
        .doesNotContain("hunter2", "s3cret");
  }

  @Test
  void toStringListsEveryProperty() {
    String text = OtcConfig.fromEnvironment(minimal()).toString();

    // HikariCP-style: one init line an operator can read the whole deployment's settings from
    assertThat(text)
        .contains(
            "mysqlUser=",
            "dbPoolSize=",
            "migrateOnStart=",
            "redisCluster=",
            "keyPrefix=",
            "timerShards=",
            "sweepBatch=",
            "claimLease=",
            "sweepPoll=",
            "sweepRuns=",
            "defaultOrderTimeout=",
            "maxOrderTimeout=",
            "invocationMargin=",
            "maxLen=",
            "consumerSlots=",
            "runs=",
            "functionTimeout=",
            "weChatStep=");
  }

  @Test
  void oneSweepRunAndOneConsumerRunAreExpectedAtOnceUnlessConfigured() {
    OtcConfig defaults = OtcConfig.fromEnvironment(minimal());
    Map<String, String> env = new HashMap<>(minimal());
    env.put("OTC_SWEEP_RUNS", "3");
    env.put("OTC_STREAM_RUNS", "2");
    OtcConfig set = OtcConfig.fromEnvironment(env);

    assertThat(defaults.sweep().runs()).isEqualTo(1);
    assertThat(defaults.stream().runs()).isEqualTo(1);
    assertThat(set.sweep().runs()).isEqualTo(3);
    assertThat(set.stream().runs()).isEqualTo(2);
    assertThat(set.toBuilder().build().sweep().runs()).isEqualTo(3);
    assertThatThrownBy(() -> OtcConfig.fromEnvironment(with("OTC_SWEEP_RUNS", "0")))
        .hasMessageContaining("OTC_SWEEP_RUNS");
    assertThatThrownBy(() -> OtcConfig.fromEnvironment(with("OTC_STREAM_RUNS", "33")))
        .hasMessageContaining("OTC_STREAM_RUNS");
  }
}
