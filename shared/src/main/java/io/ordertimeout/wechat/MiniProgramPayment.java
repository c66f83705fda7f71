package io.ordertimeout.wechat;

/**
 * The arguments of wx.requestPayment, signed with the merchant key over
 * "appId\ntimeStamp\nnonceStr\npackage\n".
 *
 * @param packageValue "prepay_id=wx..." (the field is named "package" in the mini-program API)
 */
public record MiniProgramPayment(
    String appId,
    String timeStamp,
    String nonceStr,
    String packageValue,
    String signType,
    String paySign) {

  public String prepayId() {
    return packageValue.substring(packageValue.indexOf('=') + 1);
  }
}
