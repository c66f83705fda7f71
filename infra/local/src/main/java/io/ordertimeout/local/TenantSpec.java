package io.ordertimeout.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ordertimeout.domain.TenantIds;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * What {@code ./local tenant add} asks for: a tenant and the stock of its SKUs. Checked whole
 * before anything is written, by the command (so bad input never reaches the stack) and again by
 * the stack (whatever else posts to it).
 *
 * @param stock SKU id to the units it starts with, in the order given
 */
record TenantSpec(String tenantId, Map<String, Long> stock) {

  /** As the order API checks a line's skuId (PlaceOrderRequests.PLAIN_ID); no '=' in it. */
  static final Pattern SKU_ID = Pattern.compile("[0-9A-Za-z_.:-]{1,64}");

  /**
   * A typo guard, not a business limit: a million times the demo's 10,000 per SKU, and far inside
   * stock.available's BIGINT even after every restock.
   */
  static final long MAX_QUANTITY = 10_000_000_000L;

  TenantSpec {
    stock = Collections.unmodifiableMap(new LinkedHashMap<>(stock));
  }

  /** The words after {@code tenant add}: {@code <tenantId> [--sku SKU=QTY ...]}. */
  static TenantSpec fromWords(List<String> words) {
    String tenantId = null;
    Map<String, Long> stock = new LinkedHashMap<>();
    for (int i = 0; i < words.size(); i++) {
      String word = words.get(i);
      if (word.equals("--sku")) {
        if (i + 1 >= words.size()) {
          throw new IllegalArgumentException("--sku needs a value SKU=QTY, e.g. --sku sku-1=100");
        }
        String pair = words.get(++i);
        int eq = pair.indexOf('=');
        if (eq < 0) {
          throw new IllegalArgumentException(
              "--sku " + pair + ": expected SKU=QTY, e.g. --sku sku-1=100");
        }
        put(stock, pair.substring(0, eq), quantity(pair.substring(0, eq), pair.substring(eq + 1)));
      } else if (word.startsWith("--")) {
        throw new IllegalArgumentException("unknown flag " + word + " (tenant add takes --sku)");
      } else if (tenantId == null) {
        tenantId = word;
      } else {
        throw new IllegalArgumentException(
            "one tenant per command: got '" + tenantId + "' and '" + word + "'");
      }
    }
    if (tenantId == null) {
      throw new IllegalArgumentException("tenant add needs a tenant id");
    }
    return checked(tenantId, stock);
  }

  /** The body the stack's {@code POST /_local/tenants} takes. */
  static TenantSpec fromJson(JsonNode body) {
    if (body == null || !body.isObject() || !body.path("tenantId").isTextual()) {
      throw new IllegalArgumentException(
          "body must be {\"tenantId\":\"...\",\"stock\":{\"<sku>\":<units>}}");
    }
    Map<String, Long> stock = new LinkedHashMap<>();
    JsonNode skus = body.path("stock");
    if (!skus.isMissingNode() && !skus.isObject()) {
      throw new IllegalArgumentException("stock must be an object of SKU id to units");
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = skus.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      if (!e.getValue().canConvertToLong() || !e.getValue().isIntegralNumber()) {
        throw new IllegalArgumentException(
            "stock of SKU " + e.getKey() + " must be a whole number, was " + e.getValue());
      }
      put(stock, e.getKey(), range(e.getKey(), e.getValue().longValue()));
    }
    return checked(body.path("tenantId").textValue(), stock);
  }

  ObjectNode toJson() {
    ObjectNode body = JsonNodeFactory.instance.objectNode().put("tenantId", tenantId);
    ObjectNode skus = body.putObject("stock");
    stock.forEach(skus::put);
    return body;
  }

  private static TenantSpec checked(String tenantId, Map<String, Long> stock) {
    if (!TenantIds.valid(tenantId)) {
      throw new IllegalArgumentException(
          "invalid tenant id '"
              + tenantId
              + "': 1 to 32 of [a-z0-9_-] (the tenant_id column, the webhook's URL segment)");
    }
    if (TenantIds.reserved(tenantId)) {
      throw new IllegalArgumentException(
          "tenant id '" + tenantId + "' is reserved for the pre-traffic hook's samples");
    }
    return new TenantSpec(tenantId, stock);
  }

  private static void put(Map<String, Long> stock, String sku, long quantity) {
    if (!SKU_ID.matcher(sku).matches()) {
      throw new IllegalArgumentException(
          "invalid SKU id '" + sku + "': 1 to 64 of [0-9A-Za-z_.:-], as the order API takes it");
    }
    if (stock.putIfAbsent(sku, quantity) != null) {
      throw new IllegalArgumentException("SKU " + sku + " is given twice");
    }
  }

  private static long quantity(String sku, String text) {
    try {
      return range(sku, Long.parseLong(text));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "--sku "
              + sku
              + "="
              + text
              + ": the quantity must be a whole number, e.g. "
              + sku
              + "=100");
    }
  }

  private static long range(String sku, long quantity) {
    if (quantity < 0 || quantity > MAX_QUANTITY) {
      throw new IllegalArgumentException(
          "stock of SKU " + sku + " must be 0.." + MAX_QUANTITY + ", was " + quantity);
    }
    return quantity;
  }
}
