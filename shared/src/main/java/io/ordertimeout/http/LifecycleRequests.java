package io.ordertimeout.http;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.temporal.ChronoUnit;
import java.util.Iterator;
import java.util.Set;
import java.util.function.UnaryOperator;
import java.util.regex.Pattern;

/**
 * Parses the bodies of the order-life routes (ship, receipt, after-sale) and of {@code POST
 * /coupons}. Every rule names the field it refused; nothing that fails here reaches the database.
 */
public final class LifecycleRequests {
  /** orders.carrier is VARCHAR(32) in utf8mb4: 32 characters, e.g. "顺丰速运" or "SF Express". */
  public static final int MAX_CARRIER = 32;

  /**
   * orders.tracking_no is VARCHAR(64); carriers' numbers are letters, digits and dashes (SF's are
   * 15 characters, JD's 15-20).
   */
  static final Pattern TRACKING_NO = Pattern.compile("[0-9A-Za-z_-]{1,64}");

  /**
   * DATETIME(3) ends at 9999-12-31; a coupon's validity must fit in coupons.valid_until. Anything
   * later is refused, not clipped.
   */
  static final Instant LATEST_VALID_UNTIL = Instant.parse("9999-12-31T23:59:59.999Z");

  /** A shipment is two short strings; 4 KiB bounds parsing like prepay's body. */
  private static final int MAX_BODY_BYTES = 4 * 1024;

  private static final Set<String> SHIP_FIELDS = Set.of("carrier", "trackingNo");
  private static final Set<String> COUPON_FIELDS =
      Set.of("couponId", "tenantId", "userId", "validUntil");

  private LifecycleRequests() {}

  /** The body of {@code POST /orders/{id}/ship}. */
  public record Shipment(String carrier, String trackingNo) {}

  /**
   * The body of {@code POST /coupons}.
   *
   * @param validUntil truncated to the millisecond, as coupons.valid_until stores it (so a retry
   *     compares equal to the stored value)
   */
  public record CouponRequest(
      String couponId, String tenantId, String userId, Instant validUntil) {}

  public static Shipment ship(byte[] body) {
    JsonNode root = object(body);
    onlyFields(root, SHIP_FIELDS);
    return new Shipment(carrier(root.get("carrier")), trackingNo(root.get("trackingNo")));
  }

  /**
   * The body of a route that takes no input (receipt, extend, after-sale open and resolve): empty
   * or {@code {}}. A field is refused (400 UNKNOWN_FIELD) rather than ignored: nothing would store
   * it.
   */
  public static void noInput(byte[] body) {
    if (body.length == 0) {
      return;
    }
    onlyFields(object(body), Set.of());
  }

  /**
   * A coupon body; {@code tenant} turns its tenantId (null when absent) into the coupon's tenant or
   * refuses it (CallerTenants).
   */
  public static CouponRequest coupon(byte[] body, UnaryOperator<String> tenant) {
    JsonNode root = object(body);
    onlyFields(root, COUPON_FIELDS);
    String couponId = plain(root, "couponId", "INVALID_COUPON_ID", PlaceOrderRequests.PLAIN_ID);
    String userId = plain(root, "userId", "INVALID_USER_ID", PlaceOrderRequests.PLAIN_ID);
    JsonNode named = root.get("tenantId");
    String tenantId =
        tenant.apply(
            named == null || named.isNull()
                ? null
                : plain(root, "tenantId", "INVALID_TENANT_ID", PlaceOrderRequests.TENANT_ID));
    return new CouponRequest(couponId, tenantId, userId, validUntil(root.get("validUntil")));
  }

  /** A coupon id taken from a path ({@code GET /coupons/{id}}). */
  public static String couponIdFromPath(String raw) {
    if (raw == null || !PlaceOrderRequests.PLAIN_ID.matcher(raw).matches()) {
      throw ApiError.badRequest(
          "INVALID_COUPON_ID", "couponId must be 1-64 characters of [0-9A-Za-z_.:-]");
    }
    return raw;
  }

  private static JsonNode object(byte[] body) {
    if (body.length > MAX_BODY_BYTES) {
      throw ApiError.badRequest(
          "BODY_TOO_LARGE",
          "request body is " + body.length + " bytes; the limit is " + MAX_BODY_BYTES);
    }
    return PlaceOrderRequests.readObject(body);
  }

  private static void onlyFields(JsonNode root, Set<String> allowed) {
    for (Iterator<String> names = root.fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!allowed.contains(name)) {
        String shown = name.length() <= 40 ? name : name.substring(0, 40) + "...";
        throw ApiError.badRequest("UNKNOWN_FIELD", "unknown field '" + shown + "'");
      }
    }
  }

  private static String carrier(JsonNode node) {
    if (node == null || node.isNull()) {
      throw ApiError.badRequest("MISSING_FIELD", "carrier is required");
    }
    String text = node.isTextual() ? node.textValue().strip() : "";
    int length = text.codePointCount(0, text.length());
    if (length == 0 || length > MAX_CARRIER || text.chars().anyMatch(Character::isISOControl)) {
      throw ApiError.badRequest(
          "INVALID_CARRIER", "carrier must be 1-" + MAX_CARRIER + " printable characters");
    }
    return text;
  }

  private static String trackingNo(JsonNode node) {
    if (node == null || node.isNull()) {
      throw ApiError.badRequest("MISSING_FIELD", "trackingNo is required");
    }
    if (!node.isTextual() || !TRACKING_NO.matcher(node.textValue()).matches()) {
      throw ApiError.badRequest(
          "INVALID_TRACKING_NO", "trackingNo must be 1-64 characters of [0-9A-Za-z_-]");
    }
    return node.textValue();
  }

  private static String plain(JsonNode root, String field, String code, Pattern pattern) {
    JsonNode node = root.get(field);
    if (node == null || node.isNull()) {
      throw ApiError.badRequest("MISSING_FIELD", field + " is required");
    }
    if (!node.isTextual() || !pattern.matcher(node.textValue()).matches()) {
      throw ApiError.badRequest(code, field + " must be a string matching " + pattern.pattern());
    }
    return node.textValue();
  }

  /**
   * An ISO-8601 instant with its offset ("2026-12-31T16:00:00Z", "2027-01-01T00:00:00+08:00"); a
   * time without an offset is refused: the mall's zone (Asia/Shanghai) and the servers' (UTC) would
   * read it 8 hours apart.
   */
  private static Instant validUntil(JsonNode node) {
    if (node == null || node.isNull()) {
      throw ApiError.badRequest("MISSING_FIELD", "validUntil is required");
    }
    Instant at;
    try {
      at = OffsetDateTime.parse(node.isTextual() ? node.textValue() : "").toInstant();
    } catch (DateTimeException e) {
      throw ApiError.badRequest(
          "INVALID_VALID_UNTIL",
          "validUntil must be an ISO-8601 instant with an offset, e.g. 2026-12-31T16:00:00Z");
    }
    if (at.isAfter(LATEST_VALID_UNTIL)) {
      throw ApiError.badRequest(
          "INVALID_VALID_UNTIL", "validUntil must be no later than " + LATEST_VALID_UNTIL);
    }
    return at.truncatedTo(ChronoUnit.MILLIS);
  }
}
