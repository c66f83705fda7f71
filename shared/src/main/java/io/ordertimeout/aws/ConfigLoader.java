package io.ordertimeout.aws;

import io.lettuce.core.RedisCredentialsProvider;
import io.ordertimeout.config.OtcConfig;
import io.ordertimeout.mysql.DbLogin;
import io.ordertimeout.mysql.JdbcTransport;
import io.ordertimeout.mysql.LoginSource;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Builds {@link OtcConfig} with its secrets resolved first: when {@code OTC_DB_SECRET_ARN} names a
 * secret, the DB user and password (and, without {@code OTC_MYSQL_URL}, the endpoint) come from it.
 *
 * <p>Plain {@code OTC_MYSQL_PASSWORD}, {@code OTC_WECHAT_PRIVATE_KEY} and {@code
 * OTC_WECHAT_APIV3_KEY} are for local runs and tests only: on Lambda (where {@code
 * AWS_LAMBDA_FUNCTION_NAME} is set) any of them in the environment fails init, because every
 * principal who can read the function's configuration (lambda:GetFunctionConfiguration) could read
 * it, unaudited; the secrets go through Secrets Manager, whose every read CloudTrail records.
 */
public final class ConfigLoader {
  public static final String DB_SECRET_ARN = "OTC_DB_SECRET_ARN";
  public static final String WECHAT_SECRET_ARN = "OTC_WECHAT_SECRET_ARN";
  public static final String REDIS_SECRET_ARN = "OTC_REDIS_SECRET_ARN";

  private ConfigLoader() {}

  /**
   * Lambda's and the local runner's entry point; builds an SDK client only if a secret is named.
   */
  public static OtcConfig fromEnvironment(Map<String, String> env) {
    return load(env, () -> SharedSecrets.get(env));
  }

  /** Resolves the secrets through {@code secrets} (asked only when a secret ARN is set). */
  public static OtcConfig load(Map<String, String> env, Supplier<Secrets> secrets) {
    refusePlainSecretsOnLambda(env);
    String arn = blankToNull(env.get(DB_SECRET_ARN));
    Map<String, String> resolved = new HashMap<>(env);
    if (arn != null) {
      DbCredentials db = DbCredentials.parse(arn, secrets.get().json(arn));
      resolved.put("OTC_MYSQL_USER", db.username());
      resolved.put("OTC_MYSQL_PASSWORD", db.password());
      if (blankToNull(env.get("OTC_MYSQL_URL")) == null) {
        resolved.put("OTC_MYSQL_URL", db.jdbcUrl(arn));
      }
    }
    requireVerifiedTls(resolved);
    return OtcConfig.fromEnvironment(resolved);
  }

  /**
   * On Lambda the JDBC URL verifies the server's certificate ({@link JdbcTransport}); the local
   * stack and tests, not on Lambda, keep their URL (loopback MariaDB without TLS).
   */
  private static void requireVerifiedTls(Map<String, String> resolved) {
    String function = blankToNull(resolved.get("AWS_LAMBDA_FUNCTION_NAME"));
    String url = blankToNull(resolved.get("OTC_MYSQL_URL"));
    if (function != null && url != null) {
      resolved.put("OTC_MYSQL_URL", JdbcTransport.requireVerified(url, function));
    }
  }

  /**
   * Where the pool re-reads its login after a rotation: the DB secret, fetched anew on each call
   * ({@link Secrets#freshJson}); null when no secret is named (the configured login is fixed).
   */
  public static LoginSource dbLogins(Map<String, String> env, Supplier<Secrets> secrets) {
    String arn = blankToNull(env.get(DB_SECRET_ARN));
    if (arn == null) {
      return null;
    }
    return () -> {
      DbCredentials db = DbCredentials.parse(arn, secrets.get().freshJson(arn));
      return new DbLogin(db.username(), db.password());
    };
  }

  /** As above, through the environment's one Secrets client. */
  public static LoginSource dbLogins(Map<String, String> env) {
    return dbLogins(env, () -> SharedSecrets.get(env));
  }

  /**
   * Redis AUTH from the secret {@code OTC_REDIS_SECRET_ARN} names, re-read on a later handshake (a
   * rotation, {@link RedisSecretCredentials}); null when no secret is named (the URI's own).
   */
  public static RedisCredentialsProvider redisCredentials(
      Map<String, String> env, Supplier<Secrets> secrets) {
    String arn = blankToNull(env.get(REDIS_SECRET_ARN));
    if (arn == null) {
      return null;
    }
    return new RedisSecretCredentials(
        arn, id -> secrets.get().freshJson(id), System::currentTimeMillis);
  }

  /** As above, through the environment's one Secrets client. */
  public static RedisCredentialsProvider redisCredentials(Map<String, String> env) {
    return redisCredentials(env, () -> SharedSecrets.get(env));
  }

  /**
   * Fails on Lambda when a secret is a plain environment value (the message names the variable,
   * never its value); Components also calls it before it builds WeChat Pay from the environment.
   */
  public static void refusePlainSecretsOnLambda(Map<String, String> env) {
    String function = blankToNull(env.get("AWS_LAMBDA_FUNCTION_NAME"));
    if (function == null) {
      return;
    }
    if (blankToNull(env.get("OTC_MYSQL_PASSWORD")) != null) {
      throw new IllegalArgumentException(
          "invalid configuration: OTC_MYSQL_PASSWORD is set on Lambda function "
              + function
              + "; put the DB credentials in Secrets Manager and set "
              + DB_SECRET_ARN);
    }
    String redisUri = blankToNull(env.get("OTC_REDIS_URI"));
    if (redisUri != null && redisUri.matches("[a-z]+://[^/]*@.*")) {
      throw new IllegalArgumentException(
          "invalid configuration: OTC_REDIS_URI carries credentials on Lambda function "
              + function
              + "; put the Redis user and password in Secrets Manager and set "
              + REDIS_SECRET_ARN);
    }
    for (String name : List.of("OTC_WECHAT_PRIVATE_KEY", "OTC_WECHAT_APIV3_KEY")) {
      if (blankToNull(env.get(name)) != null) {
        throw new IllegalArgumentException(
            "invalid configuration: "
                + name
                + " is set on Lambda function "
                + function
                + "; put the merchant keys in Secrets Manager and set "
                + WECHAT_SECRET_ARN);
      }
    }
  }

  static String blankToNull(String value) {
    return value == null || value.isBlank() ? null : value.trim();
  }

  /** One Secrets client per execution environment, built on first use (never when unused). */
  static final class SharedSecrets {
    private static volatile Secrets instance;

    private SharedSecrets() {}

    static Secrets get(Map<String, String> env) {
      Secrets s = instance;
      if (s == null) {
        synchronized (SharedSecrets.class) {
          s = instance;
          if (s == null) {
            s = Secrets.fromEnvironment(env);
            instance = s;
          }
        }
      }
      return s;
    }
  }
}
