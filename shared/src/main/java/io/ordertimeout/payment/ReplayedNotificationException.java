package io.ordertimeout.payment;

/** A notification whose Wechatpay-Nonce an earlier request already used; nothing was written. */
public final class ReplayedNotificationException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public ReplayedNotificationException(String orderId, String nonce) {
    super("payment notification for order " + orderId + " replays nonce " + nonce);
  }
}
