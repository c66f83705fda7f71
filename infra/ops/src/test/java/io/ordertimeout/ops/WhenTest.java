package io.ordertimeout.ops;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class WhenTest {
  private static final Instant DEADLINE = Instant.parse("2026-12-04T02:00:00Z");

  @Test
  void spansReadInTheirTwoLargestUnitsTruncated() {
    assertThat(When.span(Duration.ofMillis(450))).isEqualTo("450ms");
    assertThat(When.span(Duration.ofMillis(9_870))).isEqualTo("9.8s");
    assertThat(When.span(Duration.ofMillis(-53_999))).isEqualTo("53s");
    assertThat(When.span(Duration.ofSeconds(593))).isEqualTo("9m 53s");
    assertThat(When.span(Duration.ofMinutes(125))).isEqualTo("2h 5m");
    assertThat(When.span(Duration.ofHours(239).plusMinutes(59))).isEqualTo("9d 23h");
  }

  @Test
  void distancesSayBeforeAfterOrAtTheDeadlineAndInOrAgoFromNow() {
    assertThat(When.toDeadline(DEADLINE.minusSeconds(90), DEADLINE, "payment"))
        .isEqualTo("1m 30s before the payment deadline");
    assertThat(When.toDeadline(DEADLINE.plusMillis(400), DEADLINE, "payment"))
        .isEqualTo("400ms after the payment deadline");
    assertThat(When.toDeadline(DEADLINE, DEADLINE, "receipt")).isEqualTo("at the receipt deadline");
    assertThat(When.fromNow(DEADLINE.plusSeconds(30), DEADLINE)).isEqualTo("in 30s");
    assertThat(When.fromNow(DEADLINE.minusSeconds(30), DEADLINE)).isEqualTo("30s ago");
    assertThat(When.fromNow(DEADLINE, DEADLINE)).isEqualTo("now");
    assertThat(When.at(DEADLINE.plusMillis(999))).isEqualTo("2026-12-04 02:00:00Z");
    assertThat(When.at(null)).isEqualTo("-");
  }
}
