package io.ordertimeout.load;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.load.OpenLoopBench.Options;
import io.ordertimeout.load.OpenLoopBench.Step;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReportTest {

  @TempDir Path dir;

  private static Histogram of(long... values) {
    Histogram h = new Histogram(3_600_000L, 3);
    for (long v : values) {
      h.recordValue(v);
    }
    return h;
  }

  private static Step step(
      String label, double rate, Histogram place, Histogram lag, List<String> v) {
    return new Step(
        label, rate, 60, place, 0, lag, 100, 25, 75, v, new StackCpu(30, 20, 2), "1.00 / 2.00");
  }

  private static final Options OPTIONS =
      Options.parse(new String[] {"--api", "a", "--sim", "s", "--jdbc", "j", "--user", "u"});

  @Test
  void theTablesAndTargetsSayWhatWasMeasured() {
    Step first = step("first minute", 100, of(5, 300), of(3, 90), List.of());
    Step steady = step("steady state", 100, of(4, 20), of(2, 30), List.of());
    Step at75 = step("75% of capacity", 150, of(6, 40), of(5, 70), List.of());
    Step at90 = step("90% of capacity", 180, of(7, 80), of(9, 95), List.of("g1s05 ended UNPAID"));
    Capacity capacity =
        Capacity.from(
            List.of(100.0, 200.0, 300.0), Map.of(100.0, 30L, 200.0, 60L, 300.0, 400L), 100);

    String md =
        Report.markdown(
            OPTIONS,
            first,
            steady,
            capacity,
            List.of(at75, at90),
            List.of(first, at75, at90, steady));

    assertThat(md)
        .contains("capacity: 200/s (placement p99 60 ms); at 300/s p99 passed 100 ms (400 ms)")
        .contains(
            "| 75 | 150 | 6 / 40 / 40 / 40 | 5 / 70 / 70 / 70 | 100 (25, 75) | 300 / 200 / 20 | OK | 1.00 / 2.00 |")
        .contains(
            "| 90 | 180 | 7 / 80 / 80 / 80 | 9 / 95 / 95 / 95 | 100 (25, 75) | 300 / 200 / 20 | FAILED |")
        .contains("FAILED: g1s05 ended UNPAID")
        .contains("- close lag p99 at most 50 ms at 75% of capacity: missed (70 ms at 150/s)")
        .contains(
            "- the first minute after start no worse than twice the steady state (100/s): missed"
                + " (placement p99 300 against 20 ms, close lag p99 90 against 30 ms)");
  }

  @Test
  void anEmptyHistogramIsADash() {
    assertThat(Report.percentiles(new Histogram(1000, 3))).isEqualTo("-");
    assertThat(Report.percentiles(of(1, 2, 3, 1000))).isEqualTo("2 / 1000 / 1000 / 1000");
  }

  @Test
  void thePlotIsAnImage() throws Exception {
    Step a = step("25% of capacity", 50, of(3, 10), of(2, 8), List.of());
    Step b = step("50% of capacity", 100, of(4, 20), of(0), List.of());
    Path png = dir.resolve("plot.png");

    Report.plot(
        new Capacity(200, 300, 60, 400), List.of(Report.Point.of(a), Report.Point.of(b)), png);

    assertThat(Files.size(png)).isPositive();
    var image = ImageIO.read(png.toFile());
    assertThat(image.getWidth()).isEqualTo(800);
    assertThat(image.getHeight()).isEqualTo(450);
  }

  @Test
  void theStepsOfAReportAreReadBackAsPoints() {
    Step search = step("search 150/s", 150, of(9, 33), of(11, 76), List.of());
    Step at50 = step("50% of capacity", 75, of(3, 12), of(4, 18), List.of());
    Step first = step("first minute", 100, of(36, 243), of(42, 562), List.of());
    Capacity capacity = Capacity.from(List.of(150.0), Map.of(150.0, 33L), 100);
    String md =
        Report.markdown(
            OPTIONS, first, first, capacity, List.of(at50), List.of(first, search, at50));

    assertThat(Report.points(md))
        .containsExactly(
            new Report.Point(150, 9, 33, 11, 76),
            // the fractions' own table (rows "| 50 | 75 | ...") is not read twice
            new Report.Point(75, 3, 12, 4, 18));
  }
}
