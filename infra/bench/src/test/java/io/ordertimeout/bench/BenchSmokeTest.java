package io.ordertimeout.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every scenario against every system at 300 orders, after a warm-up cell of 150 per system, with
 * S1's minute and the cron periods scaled down to 2%, so the bench cannot rot. Asserts correctness
 * only (invariants, every order final, none closed early, the report written), never a timing.
 */
class BenchSmokeTest {
  @TempDir Path out;

  @Test
  void everyScenarioAndSystemClosesEveryOrderCorrectly() throws Exception {
    BenchSettings settings =
        BenchSettings.parse(
            new String[] {
              "--orders",
              "300",
              "--time-scale",
              "0.02",
              "--place-orders",
              "200",
              "--warmup-orders",
              "150",
              "--out",
              out.toString()
            });

    List<CellResult> results = Bench.run(settings, false);

    assertThat(results).hasSize(3 * BenchSettings.ALL_SYSTEMS.size());
    for (CellResult r : results) {
      String cell = r.scenario() + " x " + r.system() + ": " + r.notes();
      assertThat(r.invariants()).as(cell).isEqualTo("OK");
      assertThat(r.drained()).as(cell).isTrue();
      assertThat(r.unpaidLeft()).as(cell).isZero();
      assertThat(r.closedEarly()).as(cell).isZero();
      assertThat(r.closedTimeout() + r.paid()).as(cell).isEqualTo(300);
      assertThat(r.lagMicros().getTotalCount()).as(cell).isEqualTo(r.closedTimeout());
      // closing allocates: a meter reading zero would mean it counted no thread of the closer
      assertThat(r.allocatedBytesPerClose()).as(cell).isPositive();
      assertThat(r.jvm().gcCount()).as(cell).isNotNegative();
      // every tier's CPU is read from the server or the OS: zero would mean the reading is broken
      if (!r.system().equals("raw-sql")) {
        assertThat(r.redisCpuMicrosPerClose()).as(cell).isPositive();
      }
      if (System.getenv("OTC_MYSQL_URL") == null) {
        assertThat(r.dbCpuMicrosPerClose()).as(cell + " (the embedded MariaDB)").isPositive();
      }
    }
    assertThat(results.stream().filter(r -> r.scenario().equals("S1")).mapToLong(r -> r.paid()))
        .allMatch(paid -> paid > 0);
    assertThat(Files.readString(out.resolve("report.md")))
        .contains("| S3 | raw-sql |")
        .contains("warm-up 150 orders of S1 per system before the measured cells, not reported")
        .doesNotContain("| warm-up")
        .contains("| JIT s | CPU us/close w/o JIT | Redis CPU us/close | MariaDB CPU us/close |")
        .containsPattern("placement: [0-9.]+ KB allocated per placed order \\(200 placements");
    assertThat(Files.readString(out.resolve("lag.svg"))).contains("<polyline");
  }
}
