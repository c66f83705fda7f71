package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.config.OtcConfig;
import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import io.ordertimeout.wiring.Components;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * The template's functions configured as a deployed stack configures them: Globals' and the
 * function's environment with every parameter and resource attribute it names replaced by a value a
 * production deploy passes, the tenant and admin mappings among them (never a variable removed),
 * each function on a wiring of its own over the embedded servers.
 *
 * <p>A reference with no value here fails the test that asks for it: a new parameter in a
 * function's environment must be given one, so the pre-traffic hook's samples keep running against
 * what production runs.
 */
final class ProductionFunctions implements AutoCloseable {
  static final String ACCOUNT = "123456789012";

  /** The ARN CloudFormation gives PreTrafficHookRole (a generated name). */
  static final String HOOK_ROLE =
      "arn:aws:iam::" + ACCOUNT + ":role/otc-PreTrafficHookRole-1Q2W3E4R5T6Y";

  /** TenantPrincipals and AdminPrincipals as an onboarded stack has them. */
  static final String TENANT_PRINCIPALS =
      "{\"arn:aws:iam::" + ACCOUNT + ":role/mall-backend\":[\"shop-a\",\"shop-b\"]}";

  static final String ADMIN_PRINCIPALS =
      "{\"arn:aws:iam::"
          + ACCOUNT
          + ":role/oncall\":[\"*\"],\"arn:aws:iam::"
          + ACCOUNT
          + ":role/shop-a-support\":[\"shop-a\"]}";

  /** A resource attribute as SamTemplate reads {@code !GetAtt X.Y}. */
  private static final Pattern ATTRIBUTE = Pattern.compile("[A-Z][A-Za-z0-9]*\\.[A-Za-z]+");

  private final Map<String, Components> wirings = new LinkedHashMap<>();
  private final Map<String, LocalFunction> functions = new LinkedHashMap<>();

  /**
   * Every template function with routes or schedules, on {@code servers} (a schema of its own) and
   * WeChat Pay {@code simulator} in place of the merchant secret.
   */
  ProductionFunctions(SamTemplate template, EmbeddedServers servers, WeChatPaySimulator simulator) {
    String schema = servers.createSchema("prod");
    String prefix = servers.newKeyPrefix("prod");
    LocalMerchants merchants = new LocalMerchants(simulator);
    for (SamTemplate.Function f : template.functions()) {
      Map<String, String> env =
          environment(
              template,
              f,
              values(servers.jdbcUrl(schema), servers.redisUri(), "false"),
              TemplateProductionTest.parameterNames());
      // what the DB secret (OTC_DB_SECRET_ARN) gives a deployed function, and this test's own keys
      env.put("OTC_MYSQL_USER", servers.mysqlUser());
      env.put("OTC_MYSQL_PASSWORD", servers.mysqlPassword());
      env.put("OTC_KEY_PREFIX", prefix);
      env.put("OTC_MIGRATE_ON_START", "true");
      env.put("OTC_DB_POOL_SIZE", "2");
      Components wiring =
          new Components(
              OtcConfig.fromEnvironment(env), null, LocalStack.gatewayFor(simulator, merchants));
      wirings.put(f.logicalId(), wiring);
      LocalFunction.load(f, wiring).ifPresent(fn -> functions.put(f.logicalId(), fn));
    }
  }

  /**
   * What a deployed stack passes for each reference a function's environment may hold, keyed as
   * SamTemplate reads it (a parameter's name, {@code Resource.Attribute}, an intrinsic's JSON).
   */
  static Map<String, String> values(String mysqlUrl, String redisUri, String redisCluster) {
    Map<String, String> v = new LinkedHashMap<>();
    v.put("RedisUri", redisUri);
    v.put("RedisCluster", redisCluster);
    v.put("MysqlUrl", mysqlUrl);
    v.put("DbSetLockWait", "true");
    v.put(
        "DbSecretArn",
        "arn:aws:secretsmanager:ap-southeast-1:" + ACCOUNT + ":secret:otc/db-AbCdEf");
    v.put(
        "WeChatPaySecretArn",
        "arn:aws:secretsmanager:ap-southeast-1:" + ACCOUNT + ":secret:otc/wechatpay-AbCdEf");
    // no Redis AUTH, the parameter's default (the embedded Redis has none)
    v.put("RedisSecretArn", "");
    v.put("TenantPrincipals", TENANT_PRINCIPALS);
    v.put("AdminPrincipals", ADMIN_PRINCIPALS);
    v.put("PreTrafficHookRole.Arn", HOOK_ROLE);
    v.put("[\"CreateEventBus\",\"OrderEventBus\",\"EventBusName\"]", "otc-orders");
    return v;
  }

  /**
   * Globals' and {@code f}'s environment with each reference replaced from {@code values}; a
   * reference {@code values} lacks fails with its name.
   */
  static Map<String, String> environment(
      SamTemplate template,
      SamTemplate.Function f,
      Map<String, String> values,
      Set<String> parameters) {
    Map<String, String> env = new LinkedHashMap<>(template.globalEnvironment());
    env.putAll(f.environment());
    Set<String> missing = new TreeSet<>();
    env.replaceAll(
        (name, value) -> {
          if (values.containsKey(value)) {
            return values.get(value);
          }
          if (parameters.contains(value)
              || ATTRIBUTE.matcher(value).matches()
              || value.startsWith("[")
              || value.startsWith("{")) {
            missing.add(name + " = " + value);
          }
          return value;
        });
    assertThat(missing)
        .as("references in %s's environment with no production value here", f.logicalId())
        .isEmpty();
    return env;
  }

  /** The function of {@code logicalId} on its production wiring; null when not in this checkout. */
  LocalFunction function(String logicalId) {
    return functions.get(logicalId);
  }

  @Override
  public void close() {
    wirings.values().forEach(Components::close);
  }
}
