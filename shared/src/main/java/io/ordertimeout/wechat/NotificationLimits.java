package io.ordertimeout.wechat;

import io.ordertimeout.wechat.InvalidNotificationException.Reason;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.HexFormat;

/**
 * What the webhook accepts from a caller it has not authenticated yet, checked before any key is
 * used: the body's size, the timestamp's form, the length of each Wechatpay-* header. Also how a
 * refused body is named in the log: by its length and SHA-256, never by its content.
 */
public final class NotificationLimits {
  /**
   * 16 KiB. A payment notification is about 1 KiB (its encrypted transaction, with promotion
   * details, stays under 4 KiB); API Gateway would hand the function up to 10 MB, each byte of
   * which the RSA check hashes and the SDK's failure message copied into a log line.
   */
  public static final int MAX_BODY_BYTES = 16 * 1024;

  /**
   * Seconds since the epoch in at most 12 ASCII digits: up to the year 33658, so every value fits
   * {@link Instant} and {@link java.time.Duration} arithmetic. Today's is 10 digits.
   */
  static final int MAX_TIMESTAMP_DIGITS = 12;

  /**
   * Wechatpay-Nonce is 32 characters, a SHA256-RSA2048 signature 344 in base64, a serial about 40;
   * 1 KiB leaves room for a 4096-bit key and bounds what goes into the signed message.
   */
  static final int MAX_HEADER_CHARS = 1024;

  private NotificationLimits() {}

  /** Refuses a body over {@link #MAX_BODY_BYTES}, by its byte count. */
  public static void checkBodySize(String tenantId, long bytes) {
    if (bytes > MAX_BODY_BYTES) {
      throw new InvalidNotificationException(
          Reason.BODY_TOO_LARGE,
          tenantId,
          "body is " + bytes + " bytes; the limit is " + MAX_BODY_BYTES,
          null);
    }
  }

  /** UTF-8 bytes of {@code body}, counted without encoding it when it is plainly too large. */
  static long utf8Length(String body) {
    if (body.length() > MAX_BODY_BYTES) {
      return body.length(); // each char is at least one byte: too large whatever its exact size
    }
    return body.getBytes(StandardCharsets.UTF_8).length;
  }

  /**
   * Wechatpay-Timestamp as an instant, after checking it is 1 to {@link #MAX_TIMESTAMP_DIGITS}
   * ASCII digits and nothing else: no sign, no blank, no digits of other scripts (which {@link
   * Long#parseLong} would accept), no value out of {@link Instant}'s range.
   */
  static Instant timestamp(String tenantId, String value) {
    boolean digits = !value.isEmpty() && value.length() <= MAX_TIMESTAMP_DIGITS;
    for (int i = 0; digits && i < value.length(); i++) {
      char c = value.charAt(i);
      digits = c >= '0' && c <= '9';
    }
    if (!digits) {
      throw new InvalidNotificationException(
          Reason.INVALID_TIMESTAMP,
          tenantId,
          "Wechatpay-Timestamp must be 1 to "
              + MAX_TIMESTAMP_DIGITS
              + " ASCII digits (seconds since the epoch); got "
              + value.length()
              + " characters",
          null);
    }
    return Instant.ofEpochSecond(Long.parseLong(value));
  }

  /** Refuses a Wechatpay-* header over {@link #MAX_HEADER_CHARS}. */
  static void checkHeaderLength(String tenantId, String name, String value) {
    if (value.length() > MAX_HEADER_CHARS) {
      throw new InvalidNotificationException(
          Reason.MALFORMED,
          tenantId,
          "header "
              + name
              + " is "
              + value.length()
              + " characters; the limit is "
              + MAX_HEADER_CHARS,
          null);
    }
  }

  /** How a log line names a body: {@code body 914 bytes, sha256 <hex>}. */
  public static String fingerprint(byte[] body) {
    return "body " + body.length + " bytes, sha256 " + sha256Hex(body);
  }

  static String sha256Hex(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JRE has SHA-256", e);
    }
  }

  /**
   * A caller's value fit for a log line: at most {@code max} characters of {@code [0-9A-Za-z_-]},
   * anything else as '?'. For a serial, whose value an operator needs when WeChat rotates its key.
   */
  static String printable(String value, int max) {
    StringBuilder out = new StringBuilder(Math.min(value.length(), max) + 3);
    for (int i = 0; i < value.length() && i < max; i++) {
      char c = value.charAt(i);
      boolean plain =
          (c >= '0' && c <= '9')
              || (c >= 'A' && c <= 'Z')
              || (c >= 'a' && c <= 'z')
              || c == '_'
              || c == '-';
      out.append(plain ? c : '?');
    }
    return value.length() > max ? out.append("...").toString() : out.toString();
  }
}
