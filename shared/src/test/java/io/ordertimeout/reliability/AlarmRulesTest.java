package io.ordertimeout.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The fault tests' alarm rules come from the templates as deployed: the paging alarms from the
 * monitoring template that template.yaml nests, their thresholds from template.yaml's parameter
 * defaults, the API's 5xx rate from template.yaml itself.
 */
class AlarmRulesTest {
  private static final AlarmRules RULES = AlarmRules.fromTemplate();

  @Test
  void theMonitoringTemplatesAlarmsWithThresholdsFromTheParentsDefaults() {
    AlarmRules.Rule lag = RULES.rule("CloseLagP99Alarm");
    assertThat(lag.metric()).isEqualTo("close_lag_ms");
    assertThat(lag.threshold()).isEqualTo(1000);
    assertThat(lag.evaluationSeconds()).isEqualTo(300);
    assertThat(lag.missingBreaches()).isFalse();

    AlarmRules.Rule backlog = RULES.rule("TimerBacklogAlarm");
    assertThat(backlog.threshold()).isEqualTo(5000);
    assertThat(backlog.evaluationSeconds()).isEqualTo(180);
    assertThat(backlog.missingBreaches()).isTrue();

    assertThat(RULES.rule("TimeoutSweepErrorsAlarm").metric()).isEqualTo("Errors");
    assertThat(RULES.rule("TimeoutSweepNewVersionErrorsAlarm").evaluationSeconds()).isEqualTo(60);
    assertThat(RULES.rule("ApiServerErrorsAlarm").threshold()).isEqualTo(1);
  }
}
