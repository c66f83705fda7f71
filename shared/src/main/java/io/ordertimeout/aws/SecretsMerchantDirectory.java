package io.ordertimeout.aws;

import com.fasterxml.jackson.databind.JsonNode;
import io.ordertimeout.wechat.EnvironmentMerchantDirectory;
import io.ordertimeout.wechat.MerchantCredentials;
import io.ordertimeout.wechat.MerchantDirectory;
import io.ordertimeout.wechat.SubMerchant;
import io.ordertimeout.wechat.SubMerchantIndex;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * WeChat Pay merchant accounts from one Secrets Manager secret, read once at init.
 *
 * <p>The secret is either one merchant, used for every tenant (a single-merchant mall):
 *
 * <pre>{@code
 * {"mchid":"1900000001","appid":"wx8888888888888888","merchantSerialNumber":"5157F09EFDC096DE...",
 *  "privateKey":"-----BEGIN PRIVATE KEY-----\n...","apiV3Key":"<32 characters>",
 *  "wechatPayPublicKeyId":"PUB_KEY_ID_0119...","wechatPayPublicKey":"-----BEGIN PUBLIC KEY-----\n...",
 *  "notifyUrl":"https://<api>/wechatpay/notify"}
 * }</pre>
 *
 * or one merchant per tenant: {@code {"tenants":{"<tenantId>":{...same fields...}}}}. A secret
 * holds up to 64 KB, about 15 merchants with their PEM keys.
 *
 * <p>A tenant that is a sub-merchant of a service provider says {@code "mode":"partner"} and names
 * the provider in {@code spMchid} and {@code spAppid} instead of {@code mchid} and {@code appid},
 * itself in {@code subMchid} (and {@code subAppid} when the mini-program is its own), with the
 * provider's keys in the key fields:
 *
 * <pre>{@code
 * {"mode":"partner","spMchid":"1900000100","spAppid":"wx8888888888888888","subMchid":"1900000201",
 *  "subAppid":"wx9999999999999999","merchantSerialNumber":"<provider's>","privateKey":"<provider's>",
 *  "apiV3Key":"<provider's>","wechatPayPublicKeyId":"...","wechatPayPublicKey":"...",
 *  "notifyUrl":"https://<api>/wechatpay/notify"}
 * }</pre>
 *
 * A contradiction fails the load with the tenant named: an unknown mode, a direct merchant with
 * partner fields or a sub-merchant with mchid/appid, two tenants as one sub-merchant, one provider
 * with two sets of keys ({@link SubMerchantIndex}).
 */
public final class SecretsMerchantDirectory implements MerchantDirectory {
  private final String secretId;
  private final MerchantCredentials single;
  private final Map<String, MerchantCredentials> byTenant;
  private final SubMerchantIndex subMerchants;

  private SecretsMerchantDirectory(
      String secretId, MerchantCredentials single, Map<String, MerchantCredentials> byTenant) {
    this.secretId = secretId;
    this.single = single;
    this.byTenant = Map.copyOf(byTenant);
    try {
      // a single sub-merchant's notifications are the default tenant's, as its route's are
      this.subMerchants =
          SubMerchantIndex.of(
              single == null
                  ? this.byTenant
                  : Map.of(EnvironmentMerchantDirectory.DEFAULT_TENANT, single));
    } catch (IllegalArgumentException e) {
      throw new SecretUnavailableException("secret " + secretId + ": " + e.getMessage(), e);
    }
  }

  /** Reads and validates the secret now (Lambda init), so a bad key fails the deploy, not a pay. */
  public static SecretsMerchantDirectory load(Secrets secrets, String secretId) {
    return parse(secretId, secrets.json(secretId));
  }

  /** The directory named by {@code OTC_WECHAT_SECRET_ARN}, through the environment's client. */
  public static SecretsMerchantDirectory fromEnvironment(Map<String, String> env) {
    String arn = ConfigLoader.blankToNull(env.get(ConfigLoader.WECHAT_SECRET_ARN));
    if (arn == null) {
      throw new IllegalArgumentException(
          "invalid configuration: " + ConfigLoader.WECHAT_SECRET_ARN + " is not set");
    }
    return load(ConfigLoader.SharedSecrets.get(env), arn);
  }

  static SecretsMerchantDirectory parse(String secretId, JsonNode json) {
    JsonNode tenants = json.get("tenants");
    if (tenants == null) {
      return new SecretsMerchantDirectory(secretId, merchant(secretId, json), Map.of());
    }
    if (!tenants.isObject() || tenants.isEmpty()) {
      throw new SecretUnavailableException(
          "secret " + secretId + ": 'tenants' must be a non-empty object");
    }
    Map<String, MerchantCredentials> byTenant = new LinkedHashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = tenants.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      byTenant.put(e.getKey(), merchant(secretId + " tenant " + e.getKey(), e.getValue()));
    }
    return new SecretsMerchantDirectory(secretId, null, byTenant);
  }

  /** Fields that only one of the two modes has; the other mode refuses them. */
  private static final List<String> DIRECT_ONLY = List.of("mchid", "appid");

  private static final List<String> PARTNER_ONLY =
      List.of("spMchid", "spAppid", "subMchid", "subAppid");

  private static MerchantCredentials merchant(String where, JsonNode json) {
    String mode = Optional.ofNullable(Fields.optional(json, "mode")).orElse("direct");
    boolean partner =
        switch (mode) {
          case "direct" -> false;
          case "partner" -> true;
          default ->
              throw new SecretUnavailableException(
                  "secret " + where + ": mode must be 'direct' or 'partner', was '" + mode + "'");
        };
    for (String field : partner ? DIRECT_ONLY : PARTNER_ONLY) {
      if (json.has(field)) {
        throw new SecretUnavailableException(
            "secret "
                + where
                + ": '"
                + field
                + "' contradicts mode "
                + mode
                + (partner
                    ? " (a sub-merchant names its provider in spMchid and spAppid)"
                    : " (set \"mode\":\"partner\" for a sub-merchant of a service provider)"));
      }
    }
    try {
      return new MerchantCredentials(
          Fields.required(where, json, partner ? "spMchid" : "mchid"),
          Fields.required(where, json, partner ? "spAppid" : "appid"),
          Fields.required(where, json, "merchantSerialNumber"),
          Fields.required(where, json, "privateKey"),
          Fields.required(where, json, "apiV3Key"),
          Fields.required(where, json, "wechatPayPublicKeyId"),
          Fields.required(where, json, "wechatPayPublicKey"),
          Fields.required(where, json, "notifyUrl"),
          partner
              ? new SubMerchant(
                  Fields.required(where, json, "subMchid"), Fields.optional(json, "subAppid"))
              : null);
    } catch (IllegalArgumentException e) {
      throw new SecretUnavailableException("secret " + where + ": " + e.getMessage(), e);
    }
  }

  @Override
  public Optional<String> tenantOfSubMerchant(String spMchid, String subMchid) {
    return subMerchants.tenantOf(spMchid, subMchid);
  }

  @Override
  public Optional<MerchantCredentials> provider(String spMchid) {
    return subMerchants.provider(spMchid);
  }

  @Override
  public MerchantCredentials forTenant(String tenantId) {
    if (single != null) {
      return single;
    }
    MerchantCredentials credentials = byTenant.get(tenantId);
    if (credentials == null) {
      throw new IllegalArgumentException(
          "no WeChat Pay merchant for tenant "
              + tenantId
              + " in secret "
              + secretId
              + "; known tenants "
              + byTenant.keySet());
    }
    return credentials;
  }
}
