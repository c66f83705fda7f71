package io.ordertimeout.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** {@code ./ops smoke}'s signing region and its refusals, without a stack to call. */
class SmokeRegionTest {

  @Test
  void theRegionComesFromTheExecuteApiHostAndAContradictingFlagIsRefused() {
    URI api = URI.create("https://a1b2c3d4e5.execute-api.cn-north-1.amazonaws.com.cn");

    assertThat(Smoke.region(api, Optional.empty(), Optional.empty())).isEqualTo("cn-north-1");
    assertThat(Smoke.region(api, Optional.of("cn-north-1"), Optional.empty()))
        .isEqualTo("cn-north-1");
    assertThatThrownBy(() -> Smoke.region(api, Optional.of("us-east-1"), Optional.empty()))
        .hasMessage(
            "--region us-east-1 but a1b2c3d4e5.execute-api.cn-north-1.amazonaws.com.cn is in"
                + " cn-north-1");
  }
}
