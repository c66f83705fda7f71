package io.ordertimeout.sweep;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** How a pass's claimed orders are cut into closing transactions. */
class ChunkRunnerSplitTest {
  private static List<String> ids(int count) {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      ids.add(String.format("wx%010d", i));
    }
    return ids;
  }

  @Test
  void aBacklogsClaimsAreCutIntoRangesOfTheIdsInOrder() {
    List<String> sorted = ids(2_000);
    List<String> claimed = new ArrayList<>(sorted);
    // claims come shard by shard, and shards are hashes of the ids
    Collections.shuffle(claimed, new Random(7));

    List<List<String>> chunks = ChunkRunner.split(claimed, 500, 4, 50);

    assertThat(chunks).hasSize(4);
    for (int i = 0; i < 4; i++) {
      assertThat(chunks.get(i)).containsExactlyElementsOf(sorted.subList(500 * i, 500 * (i + 1)));
    }
    assertThat(claimed)
        .as("the claimed list is left as it was")
        .isNotEqualTo(sorted)
        .hasSize(2_000);
  }

  @Test
  void chunksAreAtMostTheBatchAndNoneBelowTheSmallestWorthASecondTransaction() {
    List<String> claimed = ids(120);
    Collections.reverse(claimed);

    List<List<String>> two = ChunkRunner.split(claimed, 500, 4, 50);
    assertThat(two).extracting(List::size).containsExactly(60, 60);
    assertThat(two.get(0)).first().isEqualTo("wx0000000000");

    List<List<String>> one = ChunkRunner.split(claimed.subList(0, 30), 500, 4, 50);
    assertThat(one).hasSize(1);
    assertThat(one.get(0)).hasSize(30);

    List<List<String>> byBatch = ChunkRunner.split(ids(2_400), 500, 4, 50);
    assertThat(byBatch).extracting(List::size).containsExactly(480, 480, 480, 480, 480);
  }
}
