package io.ordertimeout.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ordertimeout.lifecycle.Coupons;
import io.ordertimeout.lifecycle.OrderLifecycle;
import io.ordertimeout.lifecycle.Transition;
import io.ordertimeout.lifecycle.Transitions;
import io.ordertimeout.mysql.Tx;
import io.ordertimeout.redis.TimeSource;
import io.ordertimeout.util.Json;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * The mall backend's routes for an order's life after payment (ship, confirm receipt, extend it,
 * open and resolve an after-sale request) and for coupons with a validity. Each order route is one
 * {@link Transition} run by {@link Transitions#applyRoute}: 200 with the order's lifecycle view and
 * {@code changed}, 404, 409 ILLEGAL_TRANSITION with the current state, 409
 * RECEIPT_ALREADY_EXTENDED, 409 DEADLINE_PASSED (extend or confirm receipt after the receipt
 * deadline, open an after-sale after the completion deadline, by the database clock); the bodies
 * are checked before anything is read or written.
 */
public final class LifecycleRoutes {
  /** An answer: HTTP status and JSON body. */
  public record Answer(int status, String body) {}

  private final Transitions transitions;
  private final Coupons coupons;
  private final Tx tx;
  private final TimeSource time;

  public LifecycleRoutes(Transitions transitions, Coupons coupons, Tx tx, TimeSource time) {
    this.transitions = transitions;
    this.coupons = coupons;
    this.tx = tx;
    this.time = time;
  }

  /** {@code POST /orders/{id}/ship}: PAID -> SHIPPED; the receipt deadline starts. */
  public Answer ship(String tenantId, String orderId, byte[] body) {
    LifecycleRequests.Shipment shipment = LifecycleRequests.ship(body);
    return apply(
        Transition.SHIP,
        tenantId,
        orderId,
        Map.of(
            Transition.Param.CARRIER,
            shipment.carrier(),
            Transition.Param.TRACKING_NO,
            shipment.trackingNo()));
  }

  /** {@code POST /orders/{id}/receipt}: SHIPPED -> RECEIVED for the user. */
  public Answer confirmReceipt(String tenantId, String orderId, byte[] body) {
    LifecycleRequests.noInput(body);
    return apply(Transition.CONFIRM_RECEIPT, tenantId, orderId, Map.of());
  }

  /**
   * {@code POST /orders/{id}/receipt/extend}: the one extension; 409 RECEIPT_ALREADY_EXTENDED for a
   * second one, 409 ILLEGAL_TRANSITION for an order that is not SHIPPED.
   */
  public Answer extendReceipt(String tenantId, String orderId, byte[] body) {
    LifecycleRequests.noInput(body);
    return apply(Transition.EXTEND_RECEIPT, tenantId, orderId, Map.of());
  }

  /** {@code POST /orders/{id}/after-sale}: RECEIVED -> AFTER_SALE; completion is suspended. */
  public Answer openAfterSale(String tenantId, String orderId, byte[] body) {
    LifecycleRequests.noInput(body);
    return apply(Transition.OPEN_AFTER_SALE, tenantId, orderId, Map.of());
  }

  /**
   * {@code POST /orders/{id}/after-sale/resolve}: AFTER_SALE -> RECEIVED; completion resumes. A
   * RECEIVED order that never had a request open is 409 ILLEGAL_TRANSITION, not a retry.
   */
  public Answer resolveAfterSale(String tenantId, String orderId, byte[] body) {
    LifecycleRequests.noInput(body);
    return apply(Transition.RESOLVE_AFTER_SALE, tenantId, orderId, Map.of());
  }

  /**
   * {@code POST /coupons}: 201 issued, 200 the identical coupon again, 409 COUPON_CONFLICT. {@code
   * validUntil} must be later than the timer clock (Redis TIME, what decides when the expiry
   * fires): a coupon born expired is a mistake. An identical retry after that time is still 200, so
   * a retry never turns into a 400.
   */
  public Answer issueCoupon(byte[] body, UnaryOperator<String> tenant) {
    LifecycleRequests.CouponRequest request = LifecycleRequests.coupon(body, tenant);
    long now = time.nowMillis();
    if (request.validUntil().toEpochMilli() <= now) {
      Optional<Coupons.Coupon> existing = coupons.find(request.tenantId(), request.couponId());
      if (existing.isPresent() && identical(existing.get(), request)) {
        return new Answer(200, Json.write(couponView(existing.get()).put("created", false)));
      }
      throw ApiError.badRequest(
          "VALID_UNTIL_PASSED",
          "validUntil "
              + request.validUntil()
              + " is not after now ("
              + Instant.ofEpochMilli(now)
              + "); coupon "
              + request.couponId()
              + " was not issued");
    }
    Coupons.Issued issued =
        coupons.issue(
            request.couponId(), request.tenantId(), request.userId(), request.validUntil());
    return new Answer(
        issued.created() ? 201 : 200,
        Json.write(couponView(issued.coupon()).put("created", issued.created())));
  }

  /** {@code GET /coupons/{id}}: 200 the coupon, 404 (also for another tenant's coupon). */
  public Answer coupon(String tenantId, String couponId) {
    Coupons.Coupon coupon =
        coupons
            .find(tenantId, couponId)
            .orElseThrow(() -> ApiError.notFound("coupon " + couponId + " does not exist"));
    return new Answer(200, Json.write(couponView(coupon)));
  }

  /** The order's life after payment as MySQL holds it now, for {@code GET /orders/{id}}. */
  public Optional<OrderLifecycle> lifecycle(String tenantId, String orderId) {
    return tx.read("read order life " + orderId, c -> OrderLifecycle.find(c, tenantId, orderId));
  }

  /**
   * The lifecycle fields of an order, as ISO instants (null while unset), added to {@code view}.
   */
  public static ObjectNode putLifecycle(ObjectNode view, OrderLifecycle o) {
    return view.put("shippedAt", iso(o.shippedAt()))
        .put("carrier", o.carrier())
        .put("trackingNo", o.trackingNo())
        .put("receiveDueAt", iso(o.receiveDueAt()))
        .put("receiptExtendedAt", iso(o.receiptExtendedAt()))
        .put("receivedAt", iso(o.receivedAt()))
        .put("receivedBy", o.receivedBy())
        .put("completeDueAt", iso(o.completeDueAt()))
        .put("afterSaleOpenedAt", iso(o.afterSaleOpenedAt()))
        .put("afterSales", o.afterSales())
        .put("completedAt", iso(o.completedAt()));
  }

  private Answer apply(
      Transition t, String tenantId, String orderId, Map<Transition.Param, String> inputs) {
    return answer(transitions.applyRoute(t, tenantId, orderId, inputs));
  }

  private static Answer answer(Transitions.Outcome outcome) {
    OrderLifecycle o = outcome.order();
    ObjectNode view =
        Json.object()
            .put("orderId", o.orderId())
            .put("tenantId", o.tenantId())
            .put("status", o.status().name())
            .put("changed", outcome.changed())
            .put("paidAt", iso(o.paidAt()));
    return new Answer(200, Json.write(putLifecycle(view, o)));
  }

  private static boolean identical(Coupons.Coupon c, LifecycleRequests.CouponRequest r) {
    return c.tenantId().equals(r.tenantId())
        && c.ownerUserId().equals(r.userId())
        && Objects.equals(c.validUntil(), r.validUntil());
  }

  private static ObjectNode couponView(Coupons.Coupon c) {
    return Json.object()
        .put("couponId", c.couponId())
        .put("tenantId", c.tenantId())
        .put("userId", c.ownerUserId())
        .put("status", c.status())
        .put("lockedByOrder", c.lockedByOrder())
        .put("validUntil", iso(c.validUntil()))
        .put("expiredAt", iso(c.expiredAt()));
  }

  private static String iso(Instant instant) {
    return instant == null ? null : instant.toString();
  }
}
