package io.ordertimeout.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.PlaceOrderCommand;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.util.Json;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.function.UnaryOperator;
import java.util.regex.Pattern;

/**
 * Parses and validates the body of {@code POST /orders}. Every rule names the field it refused;
 * nothing that fails here reaches the database.
 */
public final class PlaceOrderRequests {
  /**
   * API Gateway allows 10 MiB; an order is a few hundred bytes, so 64 KiB is generous and bounds
   * parsing.
   */
  public static final int MAX_BODY_BYTES = 64 * 1024;

  public static final int MAX_ITEMS = 50;
  public static final int MAX_QUANTITY = 999;

  /** WeChat Pay caps an order at int32 fen; we refuse anything larger before WeChat does. */
  public static final long MAX_AMOUNT_FEN = Integer.MAX_VALUE;

  /** WeChat Pay's out_trade_no: 6-32 characters of digits, letters, _ - | *. */
  static final Pattern ORDER_ID = Pattern.compile("[0-9A-Za-z_\\-|*]{6,32}");

  static final Pattern TENANT_ID = Pattern.compile("[0-9A-Za-z_-]{1,32}");
  static final Pattern PLAIN_ID = Pattern.compile("[0-9A-Za-z_.:-]{1,64}");
  private static final Set<String> FIELDS =
      Set.of("orderId", "tenantId", "userId", "items", "couponId", "amountFen", "timeoutSeconds");
  public static final String DEFAULT_TENANT = TenantIds.DEFAULT;

  private final int defaultTimeoutSeconds;
  private final int maxTimeoutSeconds;

  public PlaceOrderRequests(int defaultTimeoutSeconds, int maxTimeoutSeconds) {
    this.defaultTimeoutSeconds = defaultTimeoutSeconds;
    this.maxTimeoutSeconds = maxTimeoutSeconds;
  }

  /** Parses a body whose tenantId, when absent, is {@link #DEFAULT_TENANT}. */
  public PlaceOrderCommand parse(byte[] body) {
    return parse(body, named -> named == null ? DEFAULT_TENANT : named);
  }

  /**
   * Parses a body; {@code tenant} turns the body's tenantId (null when absent) into the tenant the
   * order is placed for, or refuses it (CallerTenants).
   */
  public PlaceOrderCommand parse(byte[] body, UnaryOperator<String> tenant) {
    JsonNode root = readObject(body);
    rejectUnknownFields(root);
    String orderId = id(root, "orderId", ORDER_ID, true);
    String named = id(root, "tenantId", TENANT_ID, false);
    String userId = id(root, "userId", PLAIN_ID, true);
    String couponId = id(root, "couponId", PLAIN_ID, false);
    long amount = integer(root, "amountFen", 1, MAX_AMOUNT_FEN, null);
    long timeout =
        integer(root, "timeoutSeconds", 1, maxTimeoutSeconds, (long) defaultTimeoutSeconds);
    return new PlaceOrderCommand(
        orderId, tenant.apply(named), userId, items(root), couponId, amount, (int) timeout);
  }

  /** Checks an id taken from a path, e.g. {@code GET /orders/{id}}. */
  public static String orderIdFromPath(String raw) {
    if (raw == null || !ORDER_ID.matcher(raw).matches()) {
      throw ApiError.badRequest(
          "INVALID_ORDER_ID", "orderId must be 6-32 characters of [0-9A-Za-z_-|*]");
    }
    return raw;
  }

  public static JsonNode readObject(byte[] body) {
    if (body == null || body.length == 0) {
      throw ApiError.badRequest("EMPTY_BODY", "request body is empty; expected a JSON object");
    }
    if (body.length > MAX_BODY_BYTES) {
      throw ApiError.badRequest(
          "BODY_TOO_LARGE",
          "request body is " + body.length + " bytes; the limit is " + MAX_BODY_BYTES);
    }
    JsonNode root;
    try {
      root = Json.MAPPER.readTree(body);
    } catch (JsonProcessingException e) {
      throw ApiError.badRequest(
          "INVALID_JSON", "request body is not valid JSON: " + e.getOriginalMessage());
    } catch (java.io.IOException e) {
      throw ApiError.badRequest(
          "INVALID_JSON", "request body could not be read: " + e.getMessage());
    }
    if (root == null || !root.isObject()) {
      throw ApiError.badRequest("INVALID_JSON", "request body must be a JSON object");
    }
    return root;
  }

  private static void rejectUnknownFields(JsonNode root) {
    for (Iterator<String> names = root.fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!FIELDS.contains(name)) {
        throw ApiError.badRequest("UNKNOWN_FIELD", "unknown field '" + truncate(name) + "'");
      }
    }
  }

  private static String id(JsonNode root, String field, Pattern pattern, boolean required) {
    JsonNode node = root.get(field);
    if (node == null || node.isNull()) {
      if (required) {
        throw ApiError.badRequest("MISSING_FIELD", field + " is required");
      }
      return null;
    }
    if (!node.isTextual() || !pattern.matcher(node.textValue()).matches()) {
      throw ApiError.badRequest(
          "INVALID_FIELD", field + " must be a string matching " + pattern.pattern());
    }
    return node.textValue();
  }

  private static long integer(JsonNode root, String field, long min, long max, Long fallback) {
    JsonNode node = root.get(field);
    if (node == null || node.isNull()) {
      if (fallback == null) {
        throw ApiError.badRequest("MISSING_FIELD", field + " is required");
      }
      return fallback;
    }
    if (!node.isIntegralNumber()
        || !node.canConvertToLong()
        || node.longValue() < min
        || node.longValue() > max) {
      throw ApiError.badRequest(
          "INVALID_FIELD", field + " must be an integer from " + min + " to " + max);
    }
    return node.longValue();
  }

  private static List<OrderItem> items(JsonNode root) {
    JsonNode items = root.get("items");
    if (items == null || items.isNull()) {
      throw ApiError.badRequest("MISSING_FIELD", "items is required");
    }
    if (!items.isArray() || items.isEmpty() || items.size() > MAX_ITEMS) {
      throw ApiError.badRequest(
          "INVALID_FIELD", "items must be an array of 1 to " + MAX_ITEMS + " items");
    }
    List<OrderItem> result = new ArrayList<>(items.size());
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < items.size(); i++) {
      OrderItem item = item(items.get(i), i);
      if (!seen.add(item.skuId())) {
        throw ApiError.badRequest(
            "DUPLICATE_SKU",
            "items[" + i + "].skuId '" + item.skuId() + "' appears twice; send one line per SKU");
      }
      result.add(item);
    }
    return result;
  }

  private static OrderItem item(JsonNode node, int index) {
    if (!node.isObject()) {
      throw ApiError.badRequest("INVALID_FIELD", "items[" + index + "] must be an object");
    }
    for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!name.equals("skuId") && !name.equals("quantity")) {
        throw ApiError.badRequest(
            "UNKNOWN_FIELD", "unknown field 'items[" + index + "]." + truncate(name) + "'");
      }
    }
    String sku = id(node, "skuId", PLAIN_ID, true);
    long quantity = integer(node, "quantity", 1, MAX_QUANTITY, null);
    return new OrderItem(sku, (int) quantity);
  }

  private static String truncate(String s) {
    return s.length() <= 40 ? s : s.substring(0, 40) + "...";
  }
}
