package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The demo's reconciliation check passes only when the bill flagged nothing and applied the payment
 * whose notifications were lost; the report's other outcomes fail it, saying why.
 */
class DemoReconciliationTest {
  private static final String DAY = "2026-12-04";

  private static String report(long applied, long flags) {
    return "{\"billLines\":12,\"counts\":{\"MATCHED\":11,\"APPLIED\":"
        + applied
        + "},\"flags\":"
        + flags
        + ",\"flagged\":[]}";
  }

  @Test
  void aLostNotificationAppliedAndNoFlagPasses() {
    DemoReconciliation.Result r =
        DemoReconciliation.result(DAY, 200, report(1, 0), "d1lost", "PAID");

    assertThat(r.check().ok()).isTrue();
    assertThat(r.line()).contains("lost notification of d1lost: found by the bill, order PAID");
  }

  @Test
  void theLostNotificationsOrderStillUnpaidFails() {
    DemoReconciliation.Result r =
        DemoReconciliation.result(DAY, 200, report(0, 0), "d1lost", "UNPAID");

    assertThat(r.check().ok()).isFalse();
    assertThat(r.check().detail()).contains("order is UNPAID").contains("applied 0 lines");
  }

  @Test
  void aPaidOrderTheBillDidNotApplyFails() {
    // paid by another path (a notification or compensation's query): not the bill's find
    DemoReconciliation.Result r =
        DemoReconciliation.result(DAY, 200, report(0, 0), "d1lost", "PAID");

    assertThat(r.check().ok()).isFalse();
  }

  @Test
  void aFlagFailsEvenWithTheLostPaymentApplied() {
    DemoReconciliation.Result r =
        DemoReconciliation.result(DAY, 200, report(1, 2), "d1lost", "PAID");

    assertThat(r.check().ok()).isFalse();
    assertThat(r.check().detail()).startsWith("2 flagged lines");
  }

  @Test
  void anErrorAnswerFails() {
    DemoReconciliation.Result r =
        DemoReconciliation.result(DAY, 503, "{\"error\":{}}", "d1lost", "UNPAID");

    assertThat(r.check().ok()).isFalse();
    assertThat(r.line()).contains("answered 503");
  }
}
