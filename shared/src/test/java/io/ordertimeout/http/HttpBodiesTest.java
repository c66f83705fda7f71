package io.ordertimeout.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HttpBodiesTest {
  @Test
  void plainBodiesAreUtf8AndAMissingBodyIsEmpty() {
    assertThat(HttpBodies.bytes("{\"a\":\"é\"}", false))
        .isEqualTo("{\"a\":\"é\"}".getBytes(StandardCharsets.UTF_8));
    assertThat(HttpBodies.bytes(null, true)).isEmpty();
  }

  @Test
  void base64BodiesAreDecodedAndUndecodableOnesAre400() {
    String encoded = Base64.getEncoder().encodeToString(new byte[] {0, 1, (byte) 0xff});

    assertThat(HttpBodies.bytes(encoded, true)).containsExactly(0, 1, 0xff);
    assertThatThrownBy(() -> HttpBodies.bytes("not base64!", true))
        .isInstanceOfSatisfying(
            ApiError.class,
            e -> {
              assertThat(e.status()).isEqualTo(400);
              assertThat(e.code()).isEqualTo("INVALID_BODY");
            });
  }

  @Test
  void headersAreFoundWhateverTheirCase() {
    Map<String, String> lower = Map.of("wechatpay-serial", "S1");
    Map<String, String> mixed = Map.of("Wechatpay-Serial", "S2");

    assertThat(HttpBodies.header(lower, "Wechatpay-Serial")).isEqualTo("S1");
    assertThat(HttpBodies.header(mixed, "WECHATPAY-SERIAL")).isEqualTo("S2");
    assertThat(HttpBodies.header(mixed, "content-type")).isNull();
    assertThat(HttpBodies.header(null, "content-type")).isNull();
  }
}
