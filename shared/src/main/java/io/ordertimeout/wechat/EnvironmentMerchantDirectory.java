package io.ordertimeout.wechat;

import io.ordertimeout.domain.TenantIds;
import java.net.URI;
import java.util.Map;
import java.util.Optional;

/**
 * The default tenant's merchant account from OTC_WECHAT_* environment variables. This is the one
 * seam where credentials are loaded: a Secrets Manager loader replaces it without touching the
 * gateway or the use cases.
 *
 * <p>PEM values may carry their line breaks as literal {@code \n} (a single-line env value).
 */
public final class EnvironmentMerchantDirectory {
  /** The tenant the env-configured merchant serves; orders default to it too. */
  public static final String DEFAULT_TENANT = TenantIds.DEFAULT;

  private EnvironmentMerchantDirectory() {}

  /** Empty when OTC_WECHAT_MCHID is unset: payments are off in this deployment. */
  public static Optional<MerchantDirectory> fromEnvironment(Map<String, String> env) {
    if (blank(env.get("OTC_WECHAT_MCHID"))) {
      return Optional.empty();
    }
    MerchantCredentials credentials =
        new MerchantCredentials(
            required(env, "OTC_WECHAT_MCHID"),
            required(env, "OTC_WECHAT_APPID"),
            required(env, "OTC_WECHAT_MERCHANT_SERIAL"),
            pem(required(env, "OTC_WECHAT_PRIVATE_KEY")),
            required(env, "OTC_WECHAT_APIV3_KEY"),
            required(env, "OTC_WECHAT_PUBLIC_KEY_ID"),
            pem(required(env, "OTC_WECHAT_PUBLIC_KEY")),
            required(env, "OTC_WECHAT_NOTIFY_URL"));
    return Optional.of(new StaticMerchantDirectory(Map.of(DEFAULT_TENANT, credentials)));
  }

  /** OTC_WECHAT_BASE_URL: another WeChat Pay endpoint (the simulator in local runs); else none. */
  public static GatewaySettings settings(Map<String, String> env) {
    String base = env.get("OTC_WECHAT_BASE_URL");
    return blank(base)
        ? GatewaySettings.production()
        : GatewaySettings.production().withBaseUrl(URI.create(base.trim()));
  }

  private static String pem(String value) {
    return value.replace("\\n", "\n");
  }

  private static String required(Map<String, String> env, String name) {
    String v = env.get(name);
    if (blank(v)) {
      throw new IllegalArgumentException(
          "invalid configuration: " + name + " is not set but OTC_WECHAT_MCHID is");
    }
    return v.trim();
  }

  private static boolean blank(String v) {
    return v == null || v.isBlank();
  }
}
