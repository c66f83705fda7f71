package io.ordertimeout.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CapacityTest {

  private static final List<Double> RATES = List.of(100.0, 200.0, 300.0, 400.0);

  @Test
  void theCapacityIsTheHighestRateBeforeP99PassesTheTarget() {
    Capacity c = Capacity.from(RATES, Map.of(100.0, 12L, 200.0, 40L, 300.0, 180L), 100);

    assertThat(c.rate()).isEqualTo(200.0);
    assertThat(c.firstOver()).isEqualTo(300.0);
    assertThat(c.p99AtRate()).isEqualTo(40);
    assertThat(c.p99AtFirstOver()).isEqualTo(180);
    assertThat(c.describe(100))
        .isEqualTo("capacity: 200/s (placement p99 40 ms); at 300/s p99 passed 100 ms (180 ms)");
  }

  @Test
  void aTargetNeverPassedGivesALowerBound() {
    Capacity c = Capacity.from(RATES, Map.of(100.0, 5L, 200.0, 6L, 300.0, 9L, 400.0, 100L), 100);

    assertThat(c.rate()).isEqualTo(400.0);
    assertThat(c.firstOver()).isZero();
    assertThat(c.describe(100)).startsWith("capacity: at least 400/s");
  }

  @Test
  void aLowestRateOverTheTargetFindsNoCapacity() {
    Capacity c = Capacity.from(RATES, Map.of(100.0, 250L), 100);

    assertThat(c.rate()).isZero();
    assertThat(c.firstOver()).isEqualTo(100.0);
    assertThat(c.describe(100)).startsWith("capacity: none found: placement p99 was 250 ms");
  }

  @Test
  void aRateNotTriedEndsTheSearchWhereItStopped() {
    // the search stops at a step with unexpected answers even within the target: 300 was not tried
    Capacity c = Capacity.from(RATES, Map.of(100.0, 12L, 200.0, 40L), 100);

    assertThat(c.rate()).isEqualTo(200.0);
    assertThat(c.firstOver()).isZero();
  }
}
