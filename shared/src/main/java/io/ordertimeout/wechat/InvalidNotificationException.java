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
    MERCHANT_MISMATCH,
    /**
     * The URL names a tenant without a merchant account here, so nothing can verify the signature.
     * Answered exactly like {@link #BAD_SIGNATURE} (see {@link #publicMessage()}): the answer must
     * not tell a prober which tenant ids exist.
     */
    UNKNOWN_TENANT
  }

  private final Reason reason;
  private final String tenantId;

  public InvalidNotificationException(
      Reason reason, String tenantId, String detail, Throwable cause) {
    super(
        "payment notification for tenant " + tenantId + " rejected: " + reason + ": " + detail,
        cause);
    this.reason = reason;
    this.tenantId = tenantId;
  }

  /**
   * What the webhook may tell the sender. A signature that does not verify and a tenant without
   * keys read the same ("BAD_SIGNATURE", no detail): the SDK's detail echoes serials and the
   * directory's lists the tenants it knows, which only the log may carry. Other reasons keep their
   * detail, as they come after the tenant's keys verified the signature or before any key is used.
   */
  public String publicMessage() {
    if (reason == Reason.BAD_SIGNATURE || reason == Reason.UNKNOWN_TENANT) {
      return "payment notification for tenant "
          + tenantId
          + " rejected: BAD_SIGNATURE: not signed by the tenant's WeChat Pay platform key";
    }
    return getMessage();
  }

  public Reason reason() {
    return reason;
  }
}
