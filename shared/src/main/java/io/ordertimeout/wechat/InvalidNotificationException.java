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
    /**
     * Headers missing, too long or given twice with two values, body empty or not the notification
     * JSON.
     */
    MALFORMED,
    /**
     * Wechatpay-Timestamp is not 1 to 12 ASCII digits: signed, blank, another script's digits, or
     * beyond every date a clock can hold.
     */
    INVALID_TIMESTAMP,
    /** The body is over NotificationLimits.MAX_BODY_BYTES; refused before any key is used. */
    BODY_TOO_LARGE,
    /**
     * Wechatpay-Serial is not the id of the tenant's WeChat Pay public key; refused before the SDK
     * sees it. Answered exactly like {@link #BAD_SIGNATURE}.
     */
    UNKNOWN_SERIAL,
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
   * What the webhook may tell the sender. A signature that does not verify, a serial that is not
   * the tenant's key and a tenant without keys read the same ("BAD_SIGNATURE", no detail): the
   * serial's detail names the tenant's key id and the directory's lists the tenants it knows, which
   * only the log may carry, and a prober must not tell a known tenant by a serial it made up. Other
   * reasons keep their detail, as they come after the tenant's keys verified the signature or
   * before any key is used.
   */
  public String publicMessage() {
    if (reason == Reason.BAD_SIGNATURE
        || reason == Reason.UNKNOWN_TENANT
        || reason == Reason.UNKNOWN_SERIAL) {
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
