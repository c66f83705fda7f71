package io.ordertimeout.lifecycle;

import java.time.Duration;

/**
 * The periods of an order's life after payment. WeChat malls commonly confirm receipt 7 to 15 days
 * after shipping and let the user extend that once by a few days; the after-sale window is commonly
 * 7 days after receipt. The demo scales them to seconds.
 *
 * @param receiptPeriod shipped -> automatically received (OTC_RECEIPT_PERIOD, default P10D)
 * @param receiptExtension how much the user's one extension adds (OTC_RECEIPT_EXTENSION, P3D)
 * @param afterSaleWindow received -> completed unless an after-sale request is open
 *     (OTC_AFTER_SALE_WINDOW, P7D)
 */
public record LifecycleSettings(
    Duration receiptPeriod, Duration receiptExtension, Duration afterSaleWindow) {
  public static final LifecycleSettings DEFAULTS =
      new LifecycleSettings(Duration.ofDays(10), Duration.ofDays(3), Duration.ofDays(7));

  public LifecycleSettings {
    positive("receipt period", receiptPeriod);
    positive("receipt extension", receiptExtension);
    positive("after-sale window", afterSaleWindow);
  }

  private static void positive(String what, Duration d) {
    if (d == null || d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(what + " must be a positive duration, was " + d);
    }
  }

  /** Microseconds, as SQL's {@code INTERVAL ? MICROSECOND} takes them. */
  static long micros(Duration d) {
    return d.toNanos() / 1_000;
  }
}
