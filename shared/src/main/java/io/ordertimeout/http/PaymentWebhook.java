package io.ordertimeout.http;

import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.payment.NotificationService;

/** What WeChat Pay's notification webhook calls: the notification use case and the metrics. */
public record PaymentWebhook(NotificationService notifications, Metrics metrics) {}
