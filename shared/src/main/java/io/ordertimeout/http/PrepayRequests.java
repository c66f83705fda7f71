package io.ordertimeout.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ordertimeout.util.Json;
import io.ordertimeout.wechat.MiniProgramPayment;
import java.io.IOException;
import java.util.Iterator;
import java.util.Set;
import java.util.regex.Pattern;

/** Parses the body of {@code POST /orders/{id}/prepay} and renders its answer. */
public final class PrepayRequests {
  /** An openid is 28 characters today; 128 leaves room and bounds what we send to WeChat. */
  static final Pattern OPEN_ID = Pattern.compile("[0-9A-Za-z_-]{1,128}");

  /** WeChat's description is string[1,127]. */
  static final int MAX_DESCRIPTION = 127;

  private static final int MAX_BODY_BYTES = 4 * 1024;
  private static final Set<String> FIELDS = Set.of("openId", "description");

  private PrepayRequests() {}

  /**
   * @param description null: the prepay use case names the order
   */
  public record PrepayRequest(String openId, String description) {}

  public static PrepayRequest parse(byte[] body) {
    if (body.length == 0 || body.length > MAX_BODY_BYTES) {
      throw ApiError.badRequest(
          "INVALID_BODY", "body must be a JSON object of 1.." + MAX_BODY_BYTES + " bytes");
    }
    JsonNode root;
    try {
      root = Json.MAPPER.readTree(body);
    } catch (IOException e) {
      throw ApiError.badRequest(
          "INVALID_JSON", "body is not JSON: " + e.getMessage().lines().findFirst().orElse(""));
    }
    if (root == null || !root.isObject()) {
      throw ApiError.badRequest("INVALID_BODY", "body must be a JSON object");
    }
    for (Iterator<String> names = root.fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!FIELDS.contains(name)) {
        throw ApiError.badRequest("UNKNOWN_FIELD", "unknown field " + name);
      }
    }
    return new PrepayRequest(openId(root.get("openId")), description(root.get("description")));
  }

  private static String openId(JsonNode node) {
    if (node == null || !node.isTextual() || !OPEN_ID.matcher(node.asText()).matches()) {
      throw ApiError.badRequest("INVALID_OPEN_ID", "openId must be 1-128 of [0-9A-Za-z_-]");
    }
    return node.asText();
  }

  private static String description(JsonNode node) {
    if (node == null || node.isNull()) {
      return null;
    }
    String text = node.isTextual() ? node.asText().strip() : "";
    if (text.isEmpty()
        || text.length() > MAX_DESCRIPTION
        || text.chars().anyMatch(Character::isISOControl)) {
      throw ApiError.badRequest(
          "INVALID_DESCRIPTION",
          "description must be 1-" + MAX_DESCRIPTION + " printable characters");
    }
    return text;
  }

  /** The arguments of wx.requestPayment, named as the mini-program API names them. */
  public static ObjectNode view(String orderId, MiniProgramPayment payment) {
    return Json.object()
        .put("orderId", orderId)
        .put("prepayId", payment.prepayId())
        .put("appId", payment.appId())
        .put("timeStamp", payment.timeStamp())
        .put("nonceStr", payment.nonceStr())
        .put("package", payment.packageValue())
        .put("signType", payment.signType())
        .put("paySign", payment.paySign());
  }
}
