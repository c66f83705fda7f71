package io.ordertimeout.wechat;

import java.util.regex.Pattern;

/**
 * A tenant that is a sub-merchant (特约商户) of a service provider (服务商): its trades are created by the
 * provider through the partner APIs ({@code /v3/pay/partner/...}) and carry the provider's sp_mchid
 * next to this sub_mchid. The provider's keys sign the requests and the paySign, and decrypt the
 * notifications; see {@link MerchantCredentials#subMerchant()}.
 *
 * @param subMchid the sub-merchant's mchid; WeChat's out_trade_no is unique per sub-merchant, so
 *     this is the mchid of the tenant's trade bindings
 * @param subAppid the sub-merchant's own mini-program appid, or null when the mini-program is the
 *     provider's (sp_appid): the appid wx.requestPayment runs under and the payer's openid belongs
 *     to
 */
public record SubMerchant(String subMchid, String subAppid) {
  /** WeChat mchids are digits (10 today); the bound keeps a typo out of request paths. */
  static final Pattern MCHID = Pattern.compile("[0-9]{1,32}");

  public SubMerchant {
    if (subMchid == null || !MCHID.matcher(subMchid).matches()) {
      throw new IllegalArgumentException("subMchid must be 1-32 digits, was '" + subMchid + "'");
    }
    if (subAppid != null && subAppid.isBlank()) {
      subAppid = null;
    }
  }
}
