package io.ordertimeout.domain;

import java.util.Arrays;
import java.util.Optional;

/**
 * The kinds of deadline the timer index holds. Each kind has its own sorted set in every shard (so
 * a burst of one kind, thousands of coupons valid until midnight, cannot delay another's claims),
 * its own claim budget per pass, and a one-letter code that names it in the timer member: {@code
 * <code>:<id>}.
 *
 * <p>The payment timeout keeps the member it had before other kinds existed, the bare order id (an
 * order id never contains ':'), so timers written by earlier versions stay valid through an upgrade
 * without a migration, and the hottest path writes no extra bytes.
 */
public enum DeadlineKind {
  /** UNPAID -> CLOSED at {@code orders.expire_at}. Subject: the order. */
  PAYMENT_TIMEOUT("", "payment"),
  /** SHIPPED -> RECEIVED (by AUTO) at {@code orders.receive_due_at}. Subject: the order. */
  AUTO_RECEIPT("r", "receipt"),
  /** RECEIVED -> COMPLETED at {@code orders.complete_due_at}. Subject: the order. */
  AUTO_COMPLETE("c", "complete"),
  /** AVAILABLE -> EXPIRED at {@code coupons.valid_until}. Subject: the coupon. */
  COUPON_EXPIRY("k", "coupon");

  private final String code;
  private final String label;

  DeadlineKind(String code, String label) {
    this.code = code;
    this.label = label;
  }

  /** The member's prefix letter; empty for the payment timeout (bare order id). */
  public String code() {
    return code;
  }

  /** The kind's name in metrics, logs, keys and configuration ("payment", "receipt", ...). */
  public String label() {
    return label;
  }

  /** The timer member of {@code subjectId} for this kind. */
  public String member(String subjectId) {
    return code.isEmpty() ? subjectId : code + ":" + subjectId;
  }

  /** The kind a member names: its prefix letter, or the payment timeout for a bare id. */
  public static DeadlineKind ofMember(String member) {
    int colon = member.indexOf(':');
    if (colon < 0) {
      return PAYMENT_TIMEOUT;
    }
    String prefix = member.substring(0, colon);
    return Arrays.stream(values())
        .filter(k -> !k.code.isEmpty() && k.code.equals(prefix))
        .findFirst()
        .orElseThrow(
            () -> new IllegalArgumentException("timer member '" + member + "' names no kind"));
  }

  /** The subject id a member carries (order or coupon id). */
  public static String subjectOf(String member) {
    int colon = member.indexOf(':');
    return colon < 0 ? member : member.substring(colon + 1);
  }

  public static Optional<DeadlineKind> ofLabel(String label) {
    return Arrays.stream(values()).filter(k -> k.label.equals(label)).findFirst();
  }
}
