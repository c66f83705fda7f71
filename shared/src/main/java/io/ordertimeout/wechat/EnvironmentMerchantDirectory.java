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
 *
 * <p>With OTC_WECHAT_SUB_MCHID set the tenant is that sub-merchant of a service provider: the other
 * OTC_WECHAT_* values are then the provider's (OTC_WECHAT_MCHID its sp_mchid, OTC_WECHAT_APPID its
 * sp_appid), and OTC_WECHAT_SUB_APPID names the sub-merchant's own mini-program, if it has one.
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
            required(env, "OTC_WECHAT_NOTIFY_URL"),
            subMerchant(env));
    return Optional.of(new StaticMerchantDirectory(Map.of(DEFAULT_TENANT, credentials)));
  }

  private static SubMerchant subMerchant(Map<String, String> env) {
    String sub = env.get("OTC_WECHAT_SUB_MCHID");
    String subAppid = env.get("OTC_WECHAT_SUB_APPID");
    if (blank(sub)) {
      if (!blank(subAppid)) {
        throw new IllegalArgumentException(
            "invalid configuration: OTC_WECHAT_SUB_APPID is set but OTC_WECHAT_SUB_MCHID is not"
                + " (a sub_appid belongs to a sub-merchant)");
      }
      return null;
    }
    try {
      return new SubMerchant(sub.trim(), blank(subAppid) ? null : subAppid.trim());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "invalid configuration: OTC_WECHAT_SUB_MCHID: " + e.getMessage(), e);
    }
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
