package io.ordertimeout.domain;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;

/**
 * A validated request to place an order. Items are sorted by SKU, which is also the order in which
 * stock rows are locked, so that two placements never deadlock on each other.
 */
public record PlaceOrderCommand(
    String orderId,
    String tenantId,
    String userId,
    List<OrderItem> items,
    String couponId,
    long amountFen,
    int timeoutSeconds) {

  public PlaceOrderCommand {
    items = items.stream().sorted(Comparator.comparing(OrderItem::skuId)).toList();
  }

  /**
   * SHA-256 over the canonical form of everything the caller sent. An identical retry has the same
   * hash and is answered with the existing order; a different request under the same order id is a
   * conflict.
   */
  public String requestHash() {
    StringBuilder canonical =
        new StringBuilder()
            .append(orderId)
            .append('\n')
            .append(tenantId)
            .append('\n')
            .append(userId)
            .append('\n')
            .append(couponId == null ? "" : couponId)
            .append('\n')
            .append(amountFen)
            .append('\n')
            .append(timeoutSeconds)
            .append('\n');
    for (OrderItem item : items) {
      canonical.append(item.skuId()).append('=').append(item.quantity()).append('\n');
    }
    return sha256(canonical.toString());
  }

  public static String sha256(String text) {
    try {
      MessageDigest digest = MessageDigest.getInstance("SHA-256");
      return HexFormat.of().formatHex(digest.digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JVM", e);
    }
  }
}
