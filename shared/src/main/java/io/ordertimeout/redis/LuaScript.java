package io.ordertimeout.redis;

import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * One Lua script from {@code src/main/resources/redis/}, run by SHA. A NOSCRIPT answer (a restarted
 * or new cluster node) falls back once to EVAL with the body, which also caches it on that node.
 */
public final class LuaScript {
  private final String name;
  private final String body;
  private final String sha;

  private LuaScript(String name, String body) {
    this.name = name;
    this.body = body;
    this.sha = sha1(body);
  }

  public static LuaScript load(String name) {
    String path = "/redis/" + name + ".lua";
    try (InputStream in = LuaScript.class.getResourceAsStream(path)) {
      if (in == null) {
        throw new IllegalStateException("Lua script " + path + " is not on the classpath");
      }
      return new LuaScript(name, new String(in.readAllBytes(), StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read Lua script " + path, e);
    }
  }

  public <T> T run(
      RedisClusterCommands<String, String> redis,
      ScriptOutputType type,
      String[] keys,
      String... args) {
    try {
      return redis.evalsha(sha, type, keys, args);
    } catch (RedisNoScriptException e) {
      return redis.eval(body, type, keys, args);
    }
  }

  public String name() {
    return name;
  }

  private static String sha1(String text) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 is required of every JVM", e);
    }
  }
}
