package io.ordertimeout.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.embedded.EmbeddedServers;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * TriggerBench at 2,000 timers on the embedded Redis, every engine: each seeded timer delivered
 * exactly once, none before its due time, and no key left behind. Never asserts a timing.
 */
class TriggerBenchTest {
  @Test
  void everyEngineDeliversEveryDueTimerExactlyOnceAndLeavesNoKey() throws Exception {
    List<TriggerResult> results = run("0");

    assertExactlyOnce(results);
  }

  @Test
  void timersDueOverTimeAreDeliveredExactlyOnceAndNeverEarly() throws Exception {
    List<TriggerResult> results = run("2");

    // with due times 1 ms apart, early == 0 in assertExactlyOnce is the never-early check
    assertExactlyOnce(results);
  }

  private static List<TriggerResult> run(String spreadSeconds) throws Exception {
    TriggerBench.Settings settings =
        TriggerBench.Settings.parse(
            new String[] {
              "--timers", "2000",
              "--workers", "2",
              "--batch", "300",
              "--spread-seconds", spreadSeconds,
              "--redisson-queues", "4",
              "--warmup", "0",
              "--max-drain-seconds", "60"
            });
    List<TriggerResult> results = TriggerBench.run(settings, EmbeddedServers.get());
    assertThat(results)
        .extracting(TriggerResult::engine)
        .containsExactly("otc", "otc-pipelined", "redisson-4q");
    assertThat(TriggerBench.table(results)).contains("| otc | 2000 | 2 | 300 |");
    return results;
  }

  private static void assertExactlyOnce(List<TriggerResult> results) {
    for (TriggerResult r : results) {
      TriggerTally t = r.tally();
      assertThat(t.delivered).as(r.engine()).isEqualTo(2000);
      // 2,000 distinct indexes below 2,000, none foreign: the delivered set is the seeded set
      assertThat(r.distinct()).as(r.engine()).isEqualTo(2000);
      assertThat(t.seen.nextClearBit(0)).as(r.engine()).isEqualTo(2000);
      assertThat(t.foreign).as(r.engine()).isZero();
      assertThat(t.duplicates).as(r.engine()).isZero();
      assertThat(t.early).as(r.engine()).isZero();
      assertThat(t.lagMillis.getTotalCount()).as(r.engine()).isEqualTo(2000);
      assertThat(r.keysLeft()).as(r.engine()).isZero();
      assertThat(r.exactlyOnce()).as(r.engine()).isTrue();
    }
  }
}
