package io.ordertimeout.embedded.wechat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** One simulated API answer before it is signed: HTTP status and body ("" for 204). */
record ApiAnswer(int status, String body) {

  private static final ObjectMapper JSON = new ObjectMapper();

  static ApiAnswer ok(ObjectNode body) {
    return new ApiAnswer(200, body.toString());
  }

  static ApiAnswer noContent() {
    return new ApiAnswer(204, "");
  }

  /** WeChat's error body: {"code":"ORDER_NOT_EXIST","message":"订单不存在"}. */
  static ApiAnswer error(int status, String code, String message) {
    ObjectNode node = JSON.createObjectNode().put("code", code).put("message", message);
    return new ApiAnswer(status, node.toString());
  }
}
