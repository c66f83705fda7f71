package io.ordertimeout.aws;

import io.ordertimeout.config.OtcConfig;
import io.ordertimeout.mysql.DbLogin;
import io.ordertimeout.mysql.LoginSource;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Builds {@link OtcConfig} with its secrets resolved first: when {@code OTC_DB_SECRET_ARN} names a
 * secret, the DB user and password (and, without {@code OTC_MYSQL_URL}, the endpoint) come from it.
 *
 * <p>Plain {@code OTC_MYSQL_PASSWORD} is for local runs and tests only: on Lambda (where {@code
 * AWS_LAMBDA_FUNCTION_NAME} is set) a password in the environment fails init, because every console
 * user who can read the function's configuration could read it.
 */
public final class ConfigLoader {
  public static final String DB_SECRET_ARN = "OTC_DB_SECRET_ARN";
  public static final String WECHAT_SECRET_ARN = "OTC_WECHAT_SECRET_ARN";

  private ConfigLoader() {}

  /**
   * Lambda's and the local runner's entry point; builds an SDK client only if a secret is named.
   */
  public static OtcConfig fromEnvironment(Map<String, String> env) {
    return load(env, () -> SharedSecrets.get(env));
  }

  /** Resolves the secrets through {@code secrets} (asked only when a secret ARN is set). */
  public static OtcConfig load(Map<String, String> env, Supplier<Secrets> secrets) {
    refusePlainPasswordOnLambda(env);
    String arn = blankToNull(env.get(DB_SECRET_ARN));
    if (arn == null) {
      return OtcConfig.fromEnvironment(env);
    }
    DbCredentials db = DbCredentials.parse(arn, secrets.get().json(arn));
    Map<String, String> resolved = new HashMap<>(env);
    resolved.put("OTC_MYSQL_USER", db.username());
    resolved.put("OTC_MYSQL_PASSWORD", db.password());
    if (blankToNull(env.get("OTC_MYSQL_URL")) == null) {
      resolved.put("OTC_MYSQL_URL", db.jdbcUrl(arn));
    }
    return OtcConfig.fromEnvironment(resolved);
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

  private static void refusePlainPasswordOnLambda(Map<String, String> env) {
    if (blankToNull(env.get("AWS_LAMBDA_FUNCTION_NAME")) != null
        && blankToNull(env.get("OTC_MYSQL_PASSWORD")) != null) {
      throw new IllegalArgumentException(
          "invalid configuration: OTC_MYSQL_PASSWORD is set on Lambda function "
              + env.get("AWS_LAMBDA_FUNCTION_NAME")
              + "; put the DB credentials in Secrets Manager and set "
              + DB_SECRET_ARN);
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
