package io.ordertimeout.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.embedded.EmbeddedServers;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * FirstRequestBench with one child JVM per variant: each child's init, priming and four requests
 * against the embedded servers answer as the API must (the bench throws on any other status: 200
 * for the GETs, 201 for the placements), and the table has a row per variant. Never asserts a
 * timing.
 */
class FirstRequestBenchTest {

  @Test
  void aFreshEnvironmentWithAndWithoutPrimingServesItsFirstRequests() throws Exception {
    List<FirstRequestBench.Run> runs = FirstRequestBench.run(EmbeddedServers.get(), 1);

    assertThat(runs).extracting(FirstRequestBench.Run::prime).containsExactly(false, true);
    assertThat(runs)
        .allSatisfy(
            r ->
                assertThat(r.requests().values())
                    .extracting(v -> v[0])
                    .containsExactly(200L, 201L, 200L, 201L));
    assertThat(runs.get(0).primeMs()).isZero();
    String table = FirstRequestBench.table(runs);
    System.out.print(table);
    assertThat(table)
        .contains("| none | 1 |")
        .contains("| primed (beforeCheckpoint) | 1 |")
        .contains("first GET, primed / none:");
  }
}
