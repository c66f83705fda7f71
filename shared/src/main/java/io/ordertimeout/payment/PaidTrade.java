package io.ordertimeout.payment;

import java.time.Instant;
import java.util.Objects;

/**
 * A payment WeChat reports as done, from a verified notification or the close path's query.
 *
 * @param successTime WeChat's success_time; null when it gave none (paid_at is then the DB's now)
 */
public record PaidTrade(
    String tenantId,
    String orderId,
    String transactionId,
    long amountFen,
    Instant successTime,
    Source source) {

  /** Where the news of the payment came from; recorded with a paid-after-close case. */
  public enum Source {
    NOTIFY,
    CLOSE,
    /** The daily trade bill (reconcile.Reconciler): a payment every other path missed. */
    BILL
  }

  public PaidTrade {
    Objects.requireNonNull(tenantId, "tenantId");
    Objects.requireNonNull(orderId, "orderId");
    Objects.requireNonNull(source, "source");
    if (transactionId == null || transactionId.isBlank()) {
      throw new PaymentMismatchException(
          PaymentMismatchException.Kind.MALFORMED, orderId, "paid trade without transaction_id");
    }
  }
}
