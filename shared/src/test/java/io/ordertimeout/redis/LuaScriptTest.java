package io.ordertimeout.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.ScriptOutputType;
import io.ordertimeout.embedded.EmbeddedServers;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

// alone in its JVM while it runs (the fast tier runs classes in parallel): it flushes the server's
// script cache
@Isolated
class LuaScriptTest {
  private final EmbeddedServers servers = EmbeddedServers.get();
  private final RedisConnector redis = RedisConnector.connect(servers.redisUri(), false);
  private final String key = servers.newKeyPrefix("lua") + ":lease:{0}";

  @AfterEach
  void tearDown() {
    redis.sync().del(key);
    redis.close();
  }

  @Test
  void aServerThatLostItsScriptsGetsTheBodyOnceAndCachesIt() throws Exception {
    LuaScript acquire = LuaScript.load("acquireLease-1");
    // What a restarted or newly added node looks like: no script cached.
    redis.sync().scriptFlush();

    Long first =
        acquire.run(redis.sync(), ScriptOutputType.INTEGER, new String[] {key}, "tok", "10000");

    assertThat(first).isEqualTo(1L);
    assertThat(redis.sync().get(key)).isEqualTo("tok");
    assertThat(redis.sync().scriptExists(sha1(scriptBody()))).containsExactly(true);
    Long renewed =
        acquire.run(redis.sync(), ScriptOutputType.INTEGER, new String[] {key}, "tok", "10000");
    assertThat(renewed).isEqualTo(1L);
    assertThat(acquire.name()).isEqualTo("acquireLease-1");
  }

  @Test
  void aScriptMissingFromTheClasspathFailsWithItsPath() {
    assertThatThrownBy(() -> LuaScript.load("noSuchScript-0"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("Lua script /redis/noSuchScript-0.lua is not on the classpath");
  }

  private static String sha1(String text) throws Exception {
    return java.util.HexFormat.of()
        .formatHex(
            java.security.MessageDigest.getInstance("SHA-1")
                .digest(text.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
  }

  private static String scriptBody() {
    try (var in = LuaScriptTest.class.getResourceAsStream("/redis/acquireLease-1.lua")) {
      return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
