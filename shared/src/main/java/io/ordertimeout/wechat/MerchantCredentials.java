package io.ordertimeout.wechat;

import java.util.Objects;

/**
 * One tenant's WeChat Pay merchant account in public key mode. Comes from Secrets Manager in
 * production; {@link #toString()} never prints the keys.
 *
 * <p>Two modes. A direct merchant (普通商户) has its own mchid, appid and keys. A sub-merchant of a
 * service provider ({@link #subMerchant()} set) has the provider's: {@code mchid} is then the
 * sp_mchid, {@code appid} the sp_appid and every key the provider's, and its trades are named by
 * {@link #tradeMchid()}, the sub_mchid.
 *
 * @param privateKeyPem the merchant API private key (PKCS#8 PEM) that signs requests and paySign
 * @param apiV3Key the 32-character key that decrypts notifications
 * @param wechatPayPublicKeyId e.g. PUB_KEY_ID_0114232134912410000000000000
 * @param wechatPayPublicKeyPem verifies WeChat's responses and notifications
 * @param notifyUrl where WeChat posts this merchant's payment notifications; see {@link
 *     #notifyUrlFor(String)} for how a tenant's own URL comes from it
 * @param subMerchant null for a direct merchant; else the tenant is this sub-merchant of the
 *     provider {@code mchid}
 */
public record MerchantCredentials(
    String mchid,
    String appid,
    String merchantSerialNumber,
    String privateKeyPem,
    String apiV3Key,
    String wechatPayPublicKeyId,
    String wechatPayPublicKeyPem,
    String notifyUrl,
    SubMerchant subMerchant) {

  /** A direct merchant's account. */
  public MerchantCredentials(
      String mchid,
      String appid,
      String merchantSerialNumber,
      String privateKeyPem,
      String apiV3Key,
      String wechatPayPublicKeyId,
      String wechatPayPublicKeyPem,
      String notifyUrl) {
    this(
        mchid,
        appid,
        merchantSerialNumber,
        privateKeyPem,
        apiV3Key,
        wechatPayPublicKeyId,
        wechatPayPublicKeyPem,
        notifyUrl,
        null);
  }

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
    if (subMerchant != null && subMerchant.subMchid().equals(mchid)) {
      throw new IllegalArgumentException(
          "subMchid " + mchid + " is the provider's own spMchid: a sub-merchant has its own mchid");
    }
  }

  /** True for a sub-merchant of a service provider (the partner APIs), false for a direct one. */
  public boolean partner() {
    return subMerchant != null;
  }

  /**
   * The mchid WeChat keys this tenant's trades by, with out_trade_no: the sub_mchid of a
   * sub-merchant (out_trade_no is unique per sub-merchant), else the merchant's mchid. Trade
   * bindings record this one.
   */
  public String tradeMchid() {
    return partner() ? subMerchant.subMchid() : mchid;
  }

  /**
   * The appid the mini-program runs under: the one wx.requestPayment's paySign covers and the
   * payer's openid belongs to. A sub-merchant's own mini-program (sub_appid) or else the merchant's
   * (the provider's sp_appid for a sub-merchant).
   */
  public String payerAppid() {
    return partner() && subMerchant.subAppid() != null ? subMerchant.subAppid() : appid;
  }

  /** The webhook's path of a provider's notifications: this plus "/{spMchid}". */
  public static final String PROVIDER_WEBHOOK_PATH = "/wechatpay/notify/provider";

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
    if (partner()) {
      return providerNotifyUrl();
    }
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

  /**
   * A sub-merchant's notify_url: one URL for all sub-merchants of the provider, which routes each
   * notification by the sub_mchid inside its verified resource. A configured URL ending in {@code
   * /wechatpay/notify} or {@code /wechatpay/notify/<any id>} becomes {@code
   * .../wechatpay/notify/provider/<spMchid>}; one already naming a provider route, or any other URL
   * (a proxy of the provider's own), is sent unchanged.
   */
  private String providerNotifyUrl() {
    String url = notifyUrl.trim();
    if (url.contains(PROVIDER_WEBHOOK_PATH + "/")) {
      return url;
    }
    int at = url.lastIndexOf(WEBHOOK_PATH);
    if (at < 0) {
      return url;
    }
    String rest = url.substring(at + WEBHOOK_PATH.length());
    if (!rest.isEmpty() && (rest.charAt(0) != '/' || rest.indexOf('/', 1) >= 0)) {
      return url;
    }
    return url.substring(0, at) + PROVIDER_WEBHOOK_PATH + "/" + mchid;
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
        + (partner()
            ? ", subMchid=" + subMerchant.subMchid() + ", subAppid=" + subMerchant.subAppid()
            : "")
        + "]";
  }
}
