package io.ordertimeout.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.wiring.Components;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * A function killed at a random point of its run (a Lambda timeout or OOM), many times over. Each
 * victim is a sweep or consumer invocation with its own execution environment (its own Redis
 * connection and MariaDB pool, as a Lambda's); at a random moment of its run its clients are closed
 * (Hikari aborts the connections, so MariaDB rolls back whatever was open; Lettuce cancels the
 * commands in flight) and its thread is stopped, so none of its own code runs after the kill, as
 * none of a killed process's does. The workload's ordinary workers run alongside, as the next
 * scheduled invocations would.
 *
 * <p>The default suite runs the faults without {@code @EnabledIfSystemProperty}; the others (about
 * 16 s each, more for the slow ones) run with {@code -Dotc.faults.all=true}, so the default suite
 * grows by about 2 minutes on a 2-core machine, not 6.
 */
@Tag("integration")
class KilledInvocationTest {
  /** {@code -Dotc.faults.kills} (default 20, the "many times over" above). */
  static final int KILLS = Integer.getInteger("otc.faults.kills", 20);

  static FaultHarness h;

  @BeforeAll
  static void start() {
    h = FaultHarness.start();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  @Test
  @EnabledIfSystemProperty(named = "otc.faults.all", matches = "true")
  void sweepsAndConsumersKilledAtRandomPointsTwentyTimesLoseNoOrder() {
    AtomicInteger killedMidRun = new AtomicInteger();
    Random random = new Random(21);
    FaultHarness.Outcome outcome =
        h.run(
            "sweep/consumer killed at random points x" + KILLS,
            false,
            env -> env,
            ctx -> {},
            (ctx, probe) -> {
              probe.faultStarts();
              for (int i = 0; i < KILLS; i++) {
                if (killOne(ctx.app(), i % 2 == 0, 50 + random.nextInt(1_500))) {
                  killedMidRun.incrementAndGet();
                }
              }
              probe.faultEnds();
            },
            10,
            "bound: the 10 s shard lease a killed sweep never released (ShardLeaseSet)");
    assertThat(killedMidRun.get())
        .as("victims killed while still running")
        .isGreaterThan(KILLS / 2);
    assertThat(outcome.lost()).as("orders lost (still UNPAID)").isEmpty();
    assertThat(outcome.wrongFinalStates()).as("orders in the wrong final state").isEmpty();
    assertThat(outcome.closedEarly()).as("orders closed before their deadline").isZero();
    assertThat(outcome.paidAfterClose()).as("paid-after-close cases").isZero();
    assertThat(outcome.invariantViolations()).as("invariant violations").isEmpty();
  }

  /** Runs one victim invocation and kills it after {@code afterMillis}; true if it was running. */
  @SuppressWarnings({"deprecation", "removal"}) // Thread.stop: the kill itself (JDK 17 runs it)
  private static boolean killOne(Components shared, boolean sweep, long afterMillis) {
    Components env = new Components(shared.config(), null, shared.gateway());
    Thread victim =
        new Thread(
            () -> {
              long end = System.currentTimeMillis() + 3_000;
              try {
                if (sweep) {
                  env.newSweeper().run(() -> end - System.currentTimeMillis());
                } else {
                  try (var consumer = env.newStreamConsumer()) {
                    consumer.run(() -> end - System.currentTimeMillis());
                  }
                }
              } catch (RuntimeException | ThreadDeath killed) {
                // the kill: nothing of the victim runs after it
              }
            },
            "victim-" + (sweep ? "sweep" : "consume"));
    victim.setDaemon(true);
    victim.start();
    // the random point of the run, not a wait for an outcome
    Workers.pause(afterMillis);
    boolean running = victim.isAlive();
    try {
      victim.stop();
    } catch (UnsupportedOperationException jdk20OrLater) {
      victim.interrupt();
    }
    try {
      env.close();
    } catch (RuntimeException closingDeadClients) {
      // the environment is gone either way
    }
    return running;
  }
}
