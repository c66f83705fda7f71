package io.ordertimeout.lifecycle;

import io.ordertimeout.domain.DeadlineKind;

/**
 * The MySQL column each deadline kind's timer is derived from: MySQL is the truth, Redis a copy.
 */
public final class DueColumns {
  private DueColumns() {}

  /**
   * {@code orders.expire_at}, {@code orders.receive_due_at}, ... or {@code coupons.valid_until}.
   */
  public static String of(DeadlineKind kind) {
    return switch (kind) {
      case PAYMENT_TIMEOUT -> "expire_at";
      case AUTO_RECEIPT -> "receive_due_at";
      case AUTO_COMPLETE -> "complete_due_at";
      case COUPON_EXPIRY -> "valid_until";
    };
  }
}
