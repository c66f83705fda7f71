package io.ordertimeout.aws;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.util.Jitter;
import io.ordertimeout.wiring.Priming;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * beforeCheckpoint primes the hot paths without touching data, and every copy restored from one
 * snapshot draws its own jitter.
 */
class SnapStartPrimingTest {
  private TestStack stack;

  @BeforeEach
  void setUp() {
    stack = TestStack.create("snap-prime");
    stack.seedSku("a", 5);
    stack.place("ord_prime1", "u1", 600, null, new OrderItem("a", 1));
  }

  @AfterEach
  void tearDown() {
    stack.close();
  }

  private List<String> everything() {
    List<String> state = new ArrayList<>(stack.databaseState());
    state.addAll(stack.dump("SELECT seq, order_id, event_type FROM outbox ORDER BY seq"));
    state.addAll(stack.redisState());
    return state;
  }

  @Test
  void primingBeforeTheCheckpointRunsTheHotPathsAndWritesNothing() {
    List<String> before = everything();
    AtomicInteger primed = new AtomicInteger();
    SnapStartHooks hooks =
        new SnapStartHooks(
            stack.app().dataSource(),
            stack.app().redis(),
            () -> {
              Priming.prime(stack.app());
              primed.incrementAndGet();
            },
            SnapStartHooks.RESTORE_BUDGET);

    hooks.beforeCheckpoint(null);
    hooks.afterRestore(null);

    assertThat(primed).hasValue(1);
    assertThat(everything()).isEqualTo(before);
    stack.assertInvariants();
  }

  /**
   * Two environments restored from one snapshot start from the same random state (here: seed 42).
   * Without a re-seed they draw the same waits and backoffs; afterRestore re-seeds, so they do not.
   */
  @Test
  void twoCopiesRestoredFromOneSnapshotDrawDifferentJitter() {
    SnapStartHooks hooks =
        new SnapStartHooks(
            stack.app().dataSource(), stack.app().redis(), () -> {}, SnapStartHooks.RESTORE_BUDGET);
    Jitter.seed(42);
    long[] copyA = draws();
    Jitter.seed(42);
    long[] copyB = draws();
    assertThat(copyA).as("the same snapshot state, not re-seeded").isEqualTo(copyB);

    Jitter.seed(42);
    hooks.afterRestore(null);
    long[] restoredA = draws();
    Jitter.seed(42);
    hooks.afterRestore(null);
    long[] restoredB = draws();

    assertThat(restoredA).isNotEqualTo(restoredB).isNotEqualTo(copyA);
  }

  private static long[] draws() {
    return LongStream.range(0, 8).map(i -> Jitter.nextLong(1_000_000)).toArray();
  }
}
