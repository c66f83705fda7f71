package io.ordertimeout.wechat;

import java.util.Objects;

/**
 * One tenant's WeChat Pay merchant account in public key mode. Comes from Secrets Manager in
 * production; {@link #toString()} never prints the keys.
 *
 * @param privateKeyPem the merchant API private key (PKCS#8 PEM) that signs requests and paySign
 * @param apiV3Key the 32-character key that decrypts notifications
 * @param wechatPayPublicKeyId e.g. PUB_KEY_ID_0114232134912410000000000000
 * @param wechatPayPublicKeyPem verifies WeChat's responses and notifications
 * @param notifyUrl where WeChat posts this merchant's payment notifications; see {@link
 *     #notifyUrlFor(String)} for how a tenant's own URL comes from it
 */
public record MerchantCredentials(
    String mchid,
    String appid,
    String merchantSerialNumber,
    String privateKeyPem,
    String apiV3Key,
    String wechatPayPublicKeyId,
    String wechatPayPublicKeyPem,
    String notifyUrl) {

  public MerchantCredentials {
    Objects.requireNonNull(mchid, "mchid");
    Objects.requireNonNull(appid, "appid");
    Objects.requireNonNull(merchantSerialNumber, "merchantSerialNumber");
    Objects.requireNonNull(privateKeyPem, "privateKeyPem");
    Objects.requireNonNull(wechatPayPublicKeyId, "wechatPayPublicKeyId");
    Objects.requireNonNull(wechatPayPublicKeyPem, "wechatPayPublicKeyPem");
    Objects.requireNonNull(notifyUrl, "notifyUrl");
    if (apiV3Key == null || apiV3Key.length() != 32) {
      // AEAD_AES_256_GCM needs exactly 32 bytes; fail at load, not at the first notification
      throw new IllegalArgumentException("apiV3Key of mchid " + mchid + " must be 32 characters");
    }
  }

  /** The webhook's path; the tenant's own route is this plus "/{tenantId}". */
  public static final String WEBHOOK_PATH = "/wechatpay/notify";

  /**
   * The notify_url a prepay of {@code tenantId} gives WeChat, which posts the payment's
   * notification there and nowhere else. The webhook verifies with the keys of the tenant its URL
   * names, so the URL must name the order's tenant: a configured URL ending in {@code
   * /wechatpay/notify} or {@code /wechatpay/notify/<any id>} is turned into {@code
   * .../wechatpay/notify/<tenantId>}, except that the default tenant keeps a configured {@code
   * .../wechatpay/notify} as it is (the route it has always used). Any other URL (a proxy of the
   * merchant's own) is sent unchanged: it must forward to the tenant's route itself.
   */
  public String notifyUrlFor(String tenantId) {
    String url = notifyUrl.trim();
    int at = url.lastIndexOf(WEBHOOK_PATH);
    if (at < 0) {
      return url;
    }
    String rest = url.substring(at + WEBHOOK_PATH.length());
    if (!rest.isEmpty() && (rest.charAt(0) != '/' || rest.indexOf('/', 1) >= 0)) {
      return url; // .../wechatpay/notify-something or a deeper path: not ours to rewrite
    }
    if (rest.isEmpty() && EnvironmentMerchantDirectory.DEFAULT_TENANT.equals(tenantId)) {
      return url;
    }
    return url.substring(0, at + WEBHOOK_PATH.length()) + "/" + tenantId;
  }

  @Override
  public String toString() {
    return "MerchantCredentials[mchid="
        + mchid
        + ", appid="
        + appid
        + ", serial="
        + merchantSerialNumber
        + ", publicKeyId="
        + wechatPayPublicKeyId
        + ", notifyUrl="
        + notifyUrl
        + "]";
  }
}
