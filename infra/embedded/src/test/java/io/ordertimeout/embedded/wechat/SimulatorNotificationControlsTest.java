package io.ordertimeout.embedded.wechat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** How the notification controls plan each payment's notifications, without the wire. */
class SimulatorNotificationControlsTest {

  private final NotificationControls controls = new NotificationControls();

  @Test
  void aTradesOwnLoseCountIsUsedUpBeforeTheGlobalOne() {
    controls.lose(1);
    controls.lose("T1", 1);
    controls.copies("T1", 3);

    NotificationControls.Plan t1 = controls.plan("T1", 0);
    NotificationControls.Plan t2 = controls.plan("T2", 0);

    assertThat(t1).isEqualTo(new NotificationControls.Plan(3, Duration.ZERO, 2));
    assertThat(t2).isEqualTo(new NotificationControls.Plan(1, Duration.ZERO, 0));
    assertThat(controls.counts("T1")).isEqualTo(new NotificationControls.Counts(1, 2));
    assertThat(controls.global().toLose()).isZero();
  }

  @Test
  void aTradesOwnCopiesAndDelayOverrideTheGlobalOnesForThatTradeOnly() {
    controls.copies(2);
    controls.delay(Duration.ofSeconds(5));
    controls.delay("T1", Duration.ofMillis(300));

    assertThat(controls.of("T1"))
        .isEqualTo(new NotificationControls.Settings(2, Duration.ofMillis(300), 0));
    assertThat(controls.of("T2"))
        .isEqualTo(new NotificationControls.Settings(2, Duration.ofSeconds(5), 0));
    assertThat(controls.plan("T1", 4).copies()).isEqualTo(4); // a resend's own count
  }

  @Test
  void outOfRangeSettingsAreRefusedAndChangeNothing() {
    assertThatThrownBy(() -> controls.copies(0)).hasMessage("copies must be 1..100, was 0");
    assertThatThrownBy(() -> controls.lose("T1", 1_001))
        .hasMessage("lose must be 0..1000, was 1001");
    assertThatThrownBy(() -> controls.delay(Duration.ofHours(25)))
        .hasMessage("delay must be 0..24h, was PT25H");

    assertThat(controls.global()).isEqualTo(new NotificationControls.Settings(1, Duration.ZERO, 0));
    assertThat(controls.of("T1")).isEqualTo(controls.global());
  }
}
