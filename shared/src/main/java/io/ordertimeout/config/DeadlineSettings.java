package io.ordertimeout.config;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Objects;

/**
 * The deadlines of an order's life after payment (ISO-8601 durations: P10D, PT30S) and each other
 * deadline kind's claim budget. WeChat malls commonly confirm receipt 7 to 15 days after shipping,
 * let the user extend that once by about 3 days, and keep after-sale open 7 days after receipt; the
 * demo scales them to seconds.
 *
 * @param receiptPeriod OTC_RECEIPT_PERIOD, shipped until automatically received (P10D)
 * @param receiptExtension OTC_RECEIPT_EXTENSION, what the one extension adds (P3D)
 * @param afterSaleWindow OTC_AFTER_SALE_WINDOW, received until completed (P7D)
 * @param kindBatch OTC_DEADLINE_BATCH, claims of each other kind per shard and pass (200)
 */
public record DeadlineSettings(
    Duration receiptPeriod, Duration receiptExtension, Duration afterSaleWindow, int kindBatch) {
  public static final DeadlineSettings DEFAULTS =
      new DeadlineSettings(Duration.ofDays(10), Duration.ofDays(3), Duration.ofDays(7), 200);

  public DeadlineSettings {
    positive("OTC_RECEIPT_PERIOD", receiptPeriod);
    positive("OTC_RECEIPT_EXTENSION", receiptExtension);
    positive("OTC_AFTER_SALE_WINDOW", afterSaleWindow);
    OtcConfig.require(
        kindBatch >= 1 && kindBatch <= 5000,
        "OTC_DEADLINE_BATCH must be 1..5000, was " + kindBatch);
  }

  private static void positive(String name, Duration d) {
    Objects.requireNonNull(d, name);
    OtcConfig.require(!d.isNegative() && !d.isZero(), name + " must be positive, was " + d);
  }

  /** An ISO-8601 duration from the environment, with the variable's name in the error. */
  static Duration parse(String name, String value, Duration fallback) {
    if (value == null || value.isBlank()) {
      return fallback;
    }
    try {
      return Duration.parse(value.trim());
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException(
          "invalid configuration: "
              + name
              + " is not an ISO-8601 duration (P10D, PT12H, PT30S): '"
              + value
              + "'");
    }
  }

  @Override
  public String toString() {
    return "receiptPeriod="
        + receiptPeriod
        + ", receiptExtension="
        + receiptExtension
        + ", afterSaleWindow="
        + afterSaleWindow
        + ", deadlineBatch="
        + kindBatch;
  }
}
