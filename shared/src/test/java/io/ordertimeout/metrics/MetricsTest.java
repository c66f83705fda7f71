package io.ordertimeout.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class MetricsTest {
  @Test
  void countersAddUpAndListSortedByName() {
    Metrics m = new Metrics();
    m.count("orders_closed", 3);
    m.count("claims", 1);
    m.count("orders_closed", 2);

    assertThat(m.counter("orders_closed")).isEqualTo(5);
    assertThat(m.counter("never_counted")).isZero();
    assertThat(m.counters())
        .containsExactly(
            java.util.Map.entry("claims", 1L), java.util.Map.entry("orders_closed", 5L));
  }

  @Test
  void latenciesAccumulateAcrossReadsAndAreClampedToZeroAndOneDay() {
    Metrics m = new Metrics();
    m.recordMillis("close_lag", 120);
    m.recordMillis("close_lag", -5);
    Histogram first = m.histograms().get("close_lag");
    assertThat(first.getTotalCount()).isEqualTo(2);
    assertThat(first.getMinValue()).isZero();

    m.recordMillis("close_lag", Long.MAX_VALUE);
    Histogram total = m.histograms().get("close_lag");

    assertThat(total.getTotalCount()).isEqualTo(3);
    assertThat(total.getMaxValue()).isBetween(86_000_000L, 86_500_000L);
    assertThat(m.histograms()).containsOnlyKeys("close_lag");
  }
}
