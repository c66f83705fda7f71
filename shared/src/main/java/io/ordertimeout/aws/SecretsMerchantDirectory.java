package io.ordertimeout.aws;

import com.fasterxml.jackson.databind.JsonNode;
import io.ordertimeout.wechat.MerchantCredentials;
import io.ordertimeout.wechat.MerchantDirectory;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

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
 */
public final class SecretsMerchantDirectory implements MerchantDirectory {
  private final String secretId;
  private final MerchantCredentials single;
  private final Map<String, MerchantCredentials> byTenant;

  private SecretsMerchantDirectory(
      String secretId, MerchantCredentials single, Map<String, MerchantCredentials> byTenant) {
    this.secretId = secretId;
    this.single = single;
    this.byTenant = Map.copyOf(byTenant);
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

  private static MerchantCredentials merchant(String where, JsonNode json) {
    try {
      return new MerchantCredentials(
          Fields.required(where, json, "mchid"),
          Fields.required(where, json, "appid"),
          Fields.required(where, json, "merchantSerialNumber"),
          Fields.required(where, json, "privateKey"),
          Fields.required(where, json, "apiV3Key"),
          Fields.required(where, json, "wechatPayPublicKeyId"),
          Fields.required(where, json, "wechatPayPublicKey"),
          Fields.required(where, json, "notifyUrl"));
    } catch (IllegalArgumentException e) {
      throw new SecretUnavailableException("secret " + where + ": " + e.getMessage(), e);
    }
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
