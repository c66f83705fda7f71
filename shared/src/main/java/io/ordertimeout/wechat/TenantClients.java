package io.ordertimeout.wechat;

import com.wechat.pay.java.core.RSAPublicKeyConfig;
import com.wechat.pay.java.core.http.DefaultHttpClientBuilder;
import com.wechat.pay.java.core.http.HttpClient;
import com.wechat.pay.java.core.notification.NotificationParser;
import com.wechat.pay.java.service.billdownload.BillDownloadServiceExtension;
import com.wechat.pay.java.service.payments.jsapi.JsapiServiceExtension;
import com.wechat.pay.java.service.refund.RefundService;
import okhttp3.OkHttpClient;

/**
 * One tenant's SDK objects, built once (Lambda init or first use) and reused: parsing PEM keys and
 * building clients costs milliseconds we do not want on every close. Public key mode makes no
 * network call here, unlike RSAAutoCertificateConfig, which downloads platform certificates at
 * build time.
 *
 * @param partnerJsapi the partner JSAPI service ({@code /v3/pay/partner/...}) a sub-merchant's
 *     trades go through; null for a direct merchant
 */
record TenantClients(
    MerchantCredentials credentials,
    JsapiServiceExtension jsapi,
    RefundService refunds,
    NotificationParser notifications,
    com.wechat.pay.java.service.partnerpayments.jsapi.JsapiServiceExtension partnerJsapi,
    BillDownloadServiceExtension bills) {

  /** A direct merchant's clients, without the trade bill (tests of the other calls). */
  TenantClients(
      MerchantCredentials credentials,
      JsapiServiceExtension jsapi,
      RefundService refunds,
      NotificationParser notifications) {
    this(credentials, jsapi, refunds, notifications, null, null);
  }

  static TenantClients build(MerchantCredentials c, OkHttpClient okHttp, GatewaySettings settings) {
    RSAPublicKeyConfig config =
        new RSAPublicKeyConfig.Builder()
            .merchantId(c.mchid())
            .privateKey(c.privateKeyPem())
            .merchantSerialNumber(c.merchantSerialNumber())
            .publicKeyId(c.wechatPayPublicKeyId())
            .publicKey(c.wechatPayPublicKeyPem())
            .apiV3Key(c.apiV3Key())
            .build();
    HttpClient http =
        new DefaultHttpClientBuilder()
            .config(config)
            .okHttpClient(okHttp)
            .connectTimeoutMs((int) settings.connectTimeout().toMillis())
            .readTimeoutMs((int) settings.readTimeout().toMillis())
            .writeTimeoutMs((int) settings.readTimeout().toMillis())
            .build();
    JsapiServiceExtension jsapi =
        new JsapiServiceExtension.Builder().config(config).httpClient(http).signType("RSA").build();
    RefundService refunds = new RefundService.Builder().httpClient(http).build();
    com.wechat.pay.java.service.partnerpayments.jsapi.JsapiServiceExtension partnerJsapi =
        c.partner()
            ? new com.wechat.pay.java.service.partnerpayments.jsapi.JsapiServiceExtension.Builder()
                .config(config)
                .httpClient(http)
                .signType("RSA")
                .build()
            : null;
    BillDownloadServiceExtension bills =
        new BillDownloadServiceExtension.Builder()
            .httpClient(http)
            .decryptor(config.createDecryptor())
            .build();
    return new TenantClients(
        c, jsapi, refunds, new NotificationParser(config), partnerJsapi, bills);
  }
}
