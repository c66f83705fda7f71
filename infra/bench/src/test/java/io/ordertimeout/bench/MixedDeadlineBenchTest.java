package io.ordertimeout.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.embedded.EmbeddedServers;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * MixedDeadlineBench at 200 payment timeouts, 200 receipts and 1,000 coupons due within 2 s, both
 * runs, through the real sweep: every seeded subject moved on exactly once (rows in MariaDB, one
 * outbox event each), none before its due time, no timer of its kind left, one completion timer per
 * receipt. Never asserts a timing.
 */
class MixedDeadlineBenchTest {

  @Test
  void everySubjectOfEveryKindTransitionsExactlyOnceAndLeavesNoTimer() throws Exception {
    MixedDeadlineBench.Settings settings =
        MixedDeadlineBench.Settings.parse(
            new String[] {
              "--payments", "200",
              "--receipts", "200",
              "--coupons", "1000",
              "--window-seconds", "2",
              "--max-drain-seconds", "120"
            });

    List<MixedDeadlineBench.RunResult> results =
        MixedDeadlineBench.run(settings, EmbeddedServers.get());

    assertThat(results).extracting(MixedDeadlineBench.RunResult::name).containsExactly("A", "B");
    MixedDeadlineBench.RunResult a = results.get(0);
    MixedDeadlineBench.RunResult b = results.get(1);
    assertThat(a.drained()).isTrue();
    assertThat(b.drained()).isTrue();
    assertKind(a.kind("payment"), 200, true);
    assertThat(a.kind("receipt").seeded()).isZero();
    assertThat(a.kind("receipt").transitioned()).isZero();
    assertThat(a.kind("coupon").transitioned()).isZero();
    assertThat(a.completeTimers()).isZero();
    assertKind(b.kind("payment"), 200, true);
    assertKind(b.kind("receipt"), 200, true);
    assertKind(b.kind("coupon"), 1000, false);
    // AUTO_RECEIVE schedules the after-sale window's deadline: one completion timer per receipt
    assertThat(b.completeTimers()).isEqualTo(200);
    // every payment timeout is due within the 2 s window, so within the first 5 s
    assertKind(b.kind("payment, due in first 5 s"), 200, false);
    assertThat(results).allMatch(MixedDeadlineBench.RunResult::exactlyOnce);
    assertThat(MixedDeadlineBench.table(results))
        .contains("| A | payment | 200 | 200 | 200 | 0 | 0 |")
        .contains("| B | coupon | 1000 | 1000 | - | 0 | 0 |")
        .doesNotContain("| A | coupon |");
  }

  private static void assertKind(MixedDeadlineBench.KindResult k, int seeded, boolean withEvents) {
    assertThat(k.seeded()).as(k.kind()).isEqualTo(seeded);
    assertThat(k.transitioned()).as(k.kind()).isEqualTo(seeded);
    assertThat(k.lagMillis().getTotalCount()).as(k.kind()).isEqualTo(seeded);
    assertThat(k.early()).as(k.kind()).isZero();
    assertThat(k.timersLeft()).as(k.kind()).isZero();
    if (withEvents) {
      assertThat(k.events()).as(k.kind()).isEqualTo(seeded);
      assertThat(k.distinctEvents()).as(k.kind()).isEqualTo(seeded);
    }
  }
}
