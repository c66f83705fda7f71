package io.ordertimeout.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ordertimeout.domain.Order;
import io.ordertimeout.util.Json;
import java.time.Instant;

/** The JSON an API caller sees of an order. */
public final class OrderViews {
  private OrderViews() {}

  public static ObjectNode of(Order order) {
    ObjectNode root =
        Json.object()
            .put("orderId", order.orderId())
            .put("tenantId", order.tenantId())
            .put("userId", order.userId())
            .put("status", order.status().name())
            .put("amountFen", order.amountFen())
            .put("couponId", order.couponId())
            .put("prepaid", order.prepaid())
            .put("createdAt", iso(order.createdAt()))
            .put("expireAt", iso(order.expireAt()))
            .put("paidAt", iso(order.paidAt()))
            .put("closedAt", iso(order.closedAt()))
            .put("closeReason", order.closeReason());
    var items = root.putArray("items");
    order
        .items()
        .forEach(i -> items.addObject().put("skuId", i.skuId()).put("quantity", i.quantity()));
    return root;
  }

  private static String iso(Instant instant) {
    return instant == null ? null : instant.toString();
  }
}
