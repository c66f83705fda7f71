package io.ordertimeout.loop;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class PollingLoopTest {
  private final PollingLoop loop = new PollingLoop();

  @Test
  void aFailedPassIsSurvivedAndTheLoopGoesOnUntilThePassSaysStop() {
    List<String> seen = new ArrayList<>();
    AtomicInteger passes = new AtomicInteger();

    loop.run(
        () -> true,
        new PollingLoop.Work() {
          @Override
          public long pass() {
            int n = passes.incrementAndGet();
            if (n == 2) {
              throw new IllegalStateException("pass 2 broke");
            }
            seen.add("pass " + n);
            return n == 4 ? PollingLoop.STOP : 0;
          }

          @Override
          public long failed(RuntimeException e) {
            seen.add("failed: " + e.getMessage());
            return 1;
          }
        });

    assertThat(seen).containsExactly("pass 1", "failed: pass 2 broke", "pass 3", "pass 4");
    assertThat(loop.done()).isFalse();
  }

  @Test
  void theLoopStopsStartingPassesOnceTheBudgetIsSpent() {
    AtomicLong remaining = new AtomicLong(1_000);
    TimeBudget budget = new TimeBudget(remaining::get, Duration.ofMillis(300));
    AtomicInteger passes = new AtomicInteger();
    assertThat(budget.cap(60_000)).as("a long wait is cut to what is left").isEqualTo(700);
    assertThat(budget.cap(50)).isEqualTo(50);

    loop.run(
        () -> budget.leftMillis() > 0,
        new PollingLoop.Work() {
          @Override
          public long pass() {
            passes.incrementAndGet();
            remaining.addAndGet(-200); // each pass uses 200 ms of the invocation
            return 0;
          }

          @Override
          public long failed(RuntimeException e) {
            return PollingLoop.STOP;
          }
        });

    // 700 ms before the margin: passes at 700, 500, 300, 100 left; none at -100
    assertThat(passes).hasValue(4);
    assertThat(budget.leftMillis()).isEqualTo(-100);
    assertThat(budget.cap(50)).as("inside the margin: no wait at all").isZero();
  }

  @Test
  void terminateWakesASleepingLoopAtOnceAndEndsIt() throws Exception {
    AtomicInteger passes = new AtomicInteger();
    CompletableFuture<Void> running =
        CompletableFuture.runAsync(
            () ->
                loop.run(
                    () -> true,
                    new PollingLoop.Work() {
                      @Override
                      public long pass() {
                        passes.incrementAndGet();
                        return 600_000; // a ten-minute wait
                      }

                      @Override
                      public long failed(RuntimeException e) {
                        return PollingLoop.STOP;
                      }
                    }));
    while (passes.get() == 0) {
      Thread.onSpinWait();
    }

    loop.terminate();

    running.get(5, TimeUnit.SECONDS);
    assertThat(passes).hasValue(1);
    assertThat(loop.done()).isTrue();
  }
}
