package io.ordertimeout.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class PrepayRequestsTest {

  private static PrepayRequests.PrepayRequest parse(String json) {
    return PrepayRequests.parse(json.getBytes(StandardCharsets.UTF_8));
  }

  private static void assertRefused(String json, String code) {
    assertThatThrownBy(() -> parse(json))
        .as(json)
        .isInstanceOfSatisfying(
            ApiError.class,
            e -> {
              assertThat(e.status()).isEqualTo(400);
              assertThat(e.code()).isEqualTo(code);
            });
  }

  @Test
  void anOpenIdAndAnOptionalDescriptionParse() {
    assertThat(parse("{\"openId\":\"oUpF8uMuAJO_M2pxb1Q9zNjWeS6o\",\"description\":\" 绿茶 x2 \"}"))
        .isEqualTo(new PrepayRequests.PrepayRequest("oUpF8uMuAJO_M2pxb1Q9zNjWeS6o", "绿茶 x2"));
    assertThat(parse("{\"openId\":\"o-1\"}"))
        .isEqualTo(new PrepayRequests.PrepayRequest("o-1", null));
    assertThat(parse("{\"openId\":\"o-1\",\"description\":null}").description()).isNull();
  }

  @Test
  void malformedBodiesAreRefusedWithTheirCode() {
    assertRefused("", "INVALID_BODY");
    assertRefused("x".repeat(4097), "INVALID_BODY");
    assertRefused("{\"openId\":", "INVALID_JSON");
    assertRefused("[1]", "INVALID_BODY");
    assertRefused("{\"openId\":\"o-1\",\"amount\":1}", "UNKNOWN_FIELD");
    assertRefused("{}", "INVALID_OPEN_ID");
    assertRefused("{\"openId\":7}", "INVALID_OPEN_ID");
    assertRefused("{\"openId\":\"o 1\"}", "INVALID_OPEN_ID");
    assertRefused("{\"openId\":\"" + "o".repeat(129) + "\"}", "INVALID_OPEN_ID");
    assertRefused("{\"openId\":\"o-1\",\"description\":\"  \"}", "INVALID_DESCRIPTION");
    assertRefused("{\"openId\":\"o-1\",\"description\":5}", "INVALID_DESCRIPTION");
    assertRefused("{\"openId\":\"o-1\",\"description\":\"a\\u0007b\"}", "INVALID_DESCRIPTION");
    assertRefused(
        "{\"openId\":\"o-1\",\"description\":\"" + "d".repeat(128) + "\"}", "INVALID_DESCRIPTION");
  }
}
