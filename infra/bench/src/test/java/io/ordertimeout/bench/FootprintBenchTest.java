package io.ordertimeout.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.embedded.EmbeddedServers;
import org.junit.jupiter.api.Test;

/**
 * FootprintBench at a small size, so the memory figures of docs/operations/cost.md cannot rot: the
 * production sweep handler in a child JVM of 192 MB (163 MB heap, Serial GC) closes 300 orders due
 * over 2 s, each exactly once. Asserts correctness and that the child reported its figures, never a
 * timing.
 */
class FootprintBenchTest {
  @Test
  void childJvmSweepAtASmallHeapClosesEveryOrderOnce() throws Exception {
    FootprintBench.Result r = FootprintBench.run(EmbeddedServers.get(), "sweep", 192, 150, 2, 1);

    String cell = r.row() + " child " + r.child() + " log " + r.log();
    assertThat(r.exitCode()).as(cell).isZero();
    assertThat(r.invariants()).as(cell).isEqualTo("OK");
    assertThat(r.closed()).as(cell).isEqualTo(300);
    // one RELEASE ledger row per closed order: none closed twice
    assertThat(r.releases()).as(cell).isEqualTo(300);
    assertThat(r.lagMicros().getTotalCount()).as(cell).isEqualTo(300);
    // the figures came from the child (its /proc and its MXBeans), within its 192 MB heap view
    assertThat(r.child().get("peakRssKb")).as(cell).isPositive();
    assertThat(r.child().get("heapMaxKb")).as(cell).isLessThanOrEqualTo(192 * 1024);
    assertThat(r.child().get("invocations")).as(cell).isPositive();
    assertThat(r.ok()).as(cell).isTrue();
  }
}
