package io.ordertimeout.http;

import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.payment.NotificationService;
import io.ordertimeout.payment.RefundNotificationService;

/**
 * What WeChat Pay's notification webhooks call: the payment and the refund notification use cases
 * (null without a payment gateway) and the metrics.
 */
public record PaymentWebhook(
    NotificationService notifications, Metrics metrics, RefundNotificationService refunds) {

  /** Without the refund webhook (its route then answers 503, as the payment's does). */
  public PaymentWebhook(NotificationService notifications, Metrics metrics) {
    this(notifications, metrics, null);
  }
}
