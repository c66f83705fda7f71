package io.ordertimeout.aws;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lettuce.core.KillArgs;
import io.lettuce.core.RedisCredentials;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.redis.RedisConnector;
import io.ordertimeout.redis.RedisSecurity;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * Redis AUTH from a secret: read at the first handshake, read again at a handshake 5 s after the
 * last read, so a rotated password reaches reconnecting connections without a deploy.
 */
// alone in its JVM while it runs (the fast tier runs classes in parallel): it changes the server's
// ACL users and kills their clients
@Isolated
class RedisSecretCredentialsTest {
  private static final String ARN =
      "arn:aws:secretsmanager:us-east-1:123456789012:secret:otc-redis-AbCdEf";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final EmbeddedServers servers = EmbeddedServers.get();
  private final String user = servers.newKeyPrefix("redisuser").replace(':', '-');
  private final AtomicReference<String> secret = new AtomicReference<>();
  private final AtomicInteger reads = new AtomicInteger();
  private final AtomicLong clock = new AtomicLong(1_000_000);
  private final RedisSecretCredentials credentials =
      new RedisSecretCredentials(ARN, this::read, clock::get);

  @AfterEach
  void dropUser() {
    try (RedisConnector admin = RedisConnector.connect(servers.redisUri(), false)) {
      admin
          .sync()
          .dispatch(
              CommandType.ACL,
              new IntegerOutput<>(StringCodec.UTF8),
              new CommandArgs<>(StringCodec.UTF8).add("DELUSER").add(user));
    }
  }

  @Test
  void aHandshakeWithinFiveSecondsOfTheLastReadUsesTheCachedSecret() {
    secret.set(login("otc-app", "first"));

    RedisCredentials first = credentials.current();
    clock.addAndGet(RedisSecretCredentials.REREAD_AFTER_MS - 1);
    secret.set(login("otc-app", "second"));
    RedisCredentials cached = credentials.current();
    clock.addAndGet(1);
    RedisCredentials reread = credentials.current();

    assertThat(new String(first.getPassword())).isEqualTo("first");
    assertThat(new String(cached.getPassword())).isEqualTo("first");
    assertThat(new String(reread.getPassword())).isEqualTo("second");
    assertThat(first.getUsername()).isEqualTo("otc-app");
    assertThat(reads).hasValue(2);
  }

  @Test
  void noUsernameIsTheDefaultUserAndNoPasswordIsRefusedWithoutTheValue() throws Exception {
    JsonNode noUser = JSON.readTree("{\"password\":\"s3cret\"}");
    JsonNode noPassword = JSON.readTree("{\"username\":\"otc-app\"}");

    assertThat(RedisLogin.parse(ARN, noUser).username()).isNull();
    assertThatThrownBy(() -> RedisLogin.parse(ARN, noPassword))
        .isInstanceOf(SecretUnavailableException.class)
        .hasMessage("secret " + ARN + " has no 'password'");
  }

  @Test
  void aRotatedPasswordReachesAReconnectingConnectionWithoutARestart() {
    acl("SETUSER", user, "on", ">first", "~*", "+@all");
    secret.set(login(user, "first"));
    try (RedisConnector redis =
        RedisConnector.connect(servers.redisUri(), false, new RedisSecurity(credentials, null))) {
      assertThat(redis.sync().ping()).isEqualTo("PONG");
      int readsAtConnect = reads.get();

      // Arrange: the rotation. Redis accepts only the new password, the secret holds it, and
      // every connection of the user is dropped (a failover, or the Lambda thawing later).
      acl("SETUSER", user, "resetpass", ">second");
      secret.set(login(user, "second"));
      clock.addAndGet(RedisSecretCredentials.REREAD_AFTER_MS);
      killConnectionsOf(user);

      // Act + Assert: the reconnect reads the secret again and authenticates with the new one.
      assertThat(redis.sync().set("{rot}:" + user, "v")).isEqualTo("OK");
      assertThat(reads.get()).isGreaterThan(readsAtConnect);
    }
  }

  @Test
  void aPasswordInTheRedisUriOnLambdaFailsInitWithoutTheValue() {
    Map<String, String> env =
        Map.of(
            "AWS_LAMBDA_FUNCTION_NAME", "otc-timeout-sweep",
            "OTC_MYSQL_URL", "jdbc:mysql://db:3306/otc",
            "OTC_REDIS_URI", "rediss://otc-app:plain@clustercfg.otc.abc.cache.amazonaws.com:6379");

    assertThatThrownBy(
            () ->
                ConfigLoader.load(
                    env,
                    () -> {
                      throw new AssertionError("no secret is named");
                    }))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(
            "OTC_REDIS_URI carries credentials on Lambda function otc-timeout-sweep")
        .hasMessageContaining("OTC_REDIS_SECRET_ARN")
        .hasMessageNotContaining("plain");
  }

  @Test
  void theEnvironmentNamesTheRedisSecretOrLeavesTheUrisOwn() {
    Map<String, String> named = Map.of(ConfigLoader.REDIS_SECRET_ARN, ARN);

    assertThat(ConfigLoader.redisCredentials(Map.of(), () -> null)).isNull();
    assertThat(ConfigLoader.redisCredentials(named, () -> null))
        .isInstanceOf(RedisSecretCredentials.class)
        .hasToString("RedisSecretCredentials[" + ARN + "]");
  }

  private JsonNode read(String id) {
    assertThat(id).isEqualTo(ARN);
    reads.incrementAndGet();
    try {
      return JSON.readTree(secret.get());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static String login(String username, String password) {
    try {
      return JSON.writeValueAsString(Map.of("username", username, "password", password));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private void acl(String... words) {
    try (RedisConnector admin = RedisConnector.connect(servers.redisUri(), false)) {
      CommandArgs<String, String> args = new CommandArgs<>(StringCodec.UTF8);
      for (String w : words) {
        args.add(w);
      }
      admin.sync().dispatch(CommandType.ACL, new StatusOutput<>(StringCodec.UTF8), args);
    }
  }

  private void killConnectionsOf(String username) {
    try (RedisConnector admin = RedisConnector.connect(servers.redisUri(), false)) {
      admin.sync().clientKill(KillArgs.Builder.user(username));
    }
  }
}
