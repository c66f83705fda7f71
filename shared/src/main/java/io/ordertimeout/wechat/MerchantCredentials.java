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
