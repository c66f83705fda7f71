package io.ordertimeout.http;

import io.ordertimeout.cancel.CancelOrderService;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.mysql.OrderStore;
import io.ordertimeout.payment.PrepayService;
import io.ordertimeout.place.PlaceOrderService;

/**
 * Everything the order HTTP API (place, get, cancel, prepay, events, the order's life after payment
 * and coupons) calls, and the caller -> tenants mapping it scopes them with, and nothing else: the
 * handler receives this instead of the whole wiring, so what it can reach is visible in one type.
 */
public record OrderApi(
    PlaceOrderRequests requests,
    PlaceOrderService places,
    CancelOrderService cancels,
    PrepayService prepays,
    OrderStore orders,
    Metrics metrics,
    OrderTimeline timeline,
    LifecycleRoutes lifecycle,
    CallerTenants tenants) {}
