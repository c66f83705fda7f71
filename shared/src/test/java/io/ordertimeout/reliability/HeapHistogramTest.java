package io.ordertimeout.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The soak's heap histogram: parsed from jcmd's format, and growth ranked by bytes. */
@Tag("integration")
class HeapHistogramTest {

  /** A class only this test makes, so its growth is this test's own. */
  record Ballast(long[] payload) {}

  @Test
  void parsesJcmdRowsAddingUpAClassOfTwoLoadersAndReadsBackWhatItWrote(@TempDir Path dir)
      throws Exception {
    HeapHistogram h =
        HeapHistogram.parse(
            """
             num     #instances         #bytes  class name (module)
            -------------------------------------------------------
               1:         12345        1234567  [B (java.base@17.0.15)
               2:           100           2400  io.x.Foo
               3:            10            240  io.x.Foo
            Total         12455        1237207
            """);

    assertThat(h.row("[B")).isEqualTo(new HeapHistogram.Row("[B", 12345, 1234567));
    assertThat(h.row("io.x.Foo")).isEqualTo(new HeapHistogram.Row("io.x.Foo", 110, 2640));
    assertThat(h.totalBytes()).isEqualTo(1237207);
    Path file = Files.createTempFile(dir, "histogram", ".txt");
    h.writeTo(file);
    assertThat(HeapHistogram.read(file).row("io.x.Foo")).isEqualTo(h.row("io.x.Foo"));
    assertThat(HeapHistogram.read(file).totalBytes()).isEqualTo(1237207);
  }

  @Test
  void aLiveHistogramNamesWhatGrewFirst() {
    HeapHistogram before = HeapHistogram.take();
    List<Ballast> kept = new ArrayList<>();
    for (int i = 0; i < 1_000; i++) {
      kept.add(new Ballast(new long[8_192])); // 64 MB of long[] behind 1,000 Ballasts
    }
    HeapHistogram after = HeapHistogram.take();

    // Between the two histograms other threads of the JVM (an earlier test's stack winding down)
    // may let go of what they held: 8 MB of ballast once came out as 7.8 MB of total growth. The
    // ballast dwarfs that, and the bounds leave a tenth of it for such frees.
    long ballast = 1_000L * 8 * 8_192;
    List<HeapHistogram.Growth> top = after.growthSince(before, 3);
    assertThat(top.get(0).className()).isEqualTo("[J");
    assertThat(top.get(0).bytes()).isGreaterThanOrEqualTo(ballast * 9 / 10);
    assertThat(
            after.row(Ballast.class.getName()).instances()
                - before.row(Ballast.class.getName()).instances())
        .isEqualTo(1_000);
    assertThat(after.totalBytes() - before.totalBytes()).isGreaterThan(ballast * 9 / 10);
    assertThat(kept).hasSize(1_000); // reachable until both histograms are taken
  }
}
