package io.ordertimeout.wechat;

/** A notification that must not be trusted; the webhook answers 4xx and changes nothing. */
public final class InvalidNotificationException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /** Why the notification was refused. */
  public enum Reason {
    /**
     * Signature does not verify with the WeChat Pay public key, or the serial is not that key's id.
     */
    BAD_SIGNATURE,
    /**
     * Wechatpay-Timestamp more than 5 minutes from our clock: a replay or a badly skewed sender.
     */
    STALE_TIMESTAMP,
    /** Headers missing, timestamp not a number, body not the notification JSON. */
    MALFORMED,
    /** AES-GCM authentication failed: wrong APIv3 key or tampered ciphertext. */
    DECRYPTION_FAILED,
    /** Decrypted fine but names another mchid or appid than the tenant's. */
    MERCHANT_MISMATCH
  }

  private final Reason reason;

  public InvalidNotificationException(
      Reason reason, String tenantId, String detail, Throwable cause) {
    super(
        "payment notification for tenant " + tenantId + " rejected: " + reason + ": " + detail,
        cause);
    this.reason = reason;
  }

  public Reason reason() {
    return reason;
  }
}
