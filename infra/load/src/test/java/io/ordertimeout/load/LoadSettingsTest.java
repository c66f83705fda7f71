package io.ordertimeout.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class LoadSettingsTest {

  @Test
  void survivesTheTripThroughSystemProperties() {
    LoadSettings settings =
        new LoadSettings("http://127.0.0.1:1", "http://127.0.0.1:2", "g123s01", 37.5, 30, 5, 4, 10);

    settings.toSystemProperties();

    assertThat(LoadSettings.fromSystemProperties()).isEqualTo(settings);
    assertThat(settings.payPercent()).isEqualTo(25.0);
    assertThat(settings.cancelPercent()).isEqualTo(10.0);
  }

  @Test
  void noneIsZeroPercent() {
    LoadSettings settings = new LoadSettings("a", "b", "p", 1, 1, 1, 0, 0);

    assertThat(settings.payPercent()).isZero();
    assertThat(settings.cancelPercent()).isZero();
  }

  @Test
  void refusesWhatCannotRun() {
    assertThatThrownBy(() -> new LoadSettings("a", "b", "p", 0, 1, 1, 4, 10))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("must be positive");
    assertThatThrownBy(() -> new LoadSettings("a", "b", "p", 1, 1, 1, -1, 10))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("payEvery");
    // the prefix goes into out_trade_no (6-32 letters and digits) with 10 digits after it
    assertThatThrownBy(() -> new LoadSettings("a", "b", "g-1", 1, 1, 1, 4, 10))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("idPrefix");
    assertThat(OrderMixSimulation.orderId("g123s01", 42)).isEqualTo("g123s010000000042");
  }
}
