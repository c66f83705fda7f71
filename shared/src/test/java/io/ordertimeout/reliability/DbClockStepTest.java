package io.ordertimeout.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The clock step on the database's side. The stack reaches MariaDB through a {@link FaultProxy}
 * whose {@link DbClockStep} makes NOW() answer 10 s behind the real time for 5 s while the mixed
 * workload's 4 s deadlines pass (ServerFaultTest steps the Redis TIME side).
 *
 * <p>What it exercises: the sweep claims by Redis TIME, the closing UPDATE re-checks {@code
 * expire_at <= NOW(3)} by the database's clock, which now says the claimed orders are not due; the
 * closer moves each one's timer to the deadline as the stepped database sees it ({@code now +
 * dueIn}, OrderCloser), up to 10 s later than the real deadline, and orders placed during the step
 * get an {@code expire_at} 10 s early. The test asserts the step reached the stack's connections
 * (NOW() read through its pool ~10 s behind), that the guard refused claimed orders ({@code
 * close_not_due}), no order lost, none closed before its {@code expire_at}, invariants held.
 *
 * <p>Behind {@code -Dotc.faults.all=true} (about 20 s).
 */
@EnabledIfSystemProperty(named = "otc.faults.all", matches = "true")
@Tag("integration")
class DbClockStepTest {
  static final long STEP_MS = -10_000;

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
  void databaseNowSteppedTenSecondsBehindClosesNoOrderEarlyAndLosesNone() {
    DbClockStep clock = new DbClockStep();
    AtomicLong skewMillis = new AtomicLong();
    AtomicLong notDue = new AtomicLong();
    try (FaultProxy proxy = FaultProxy.toMySql(NetworkFaultTest.mariaDbPort(), clock)) {
      FaultHarness.Outcome outcome =
          h.run(
              "MariaDB NOW() -10 s step, 5 s",
              false,
              NetworkFaultTest.mariaDbThrough(proxy),
              null,
              ctx -> {},
              (stack, probe) -> {
                probe.faultStarts();
                clock.step(STEP_MS);
                long before = System.currentTimeMillis();
                String now = stack.dump("SELECT ROUND(UNIX_TIMESTAMP(NOW(3)) * 1000)").get(0);
                skewMillis.set(Long.parseLong(now.substring(0, now.length() - 1)) - before);
                // the stepped window, not a wait for an outcome
                Workers.pause(5_000);
                clock.step(0);
                probe.faultEnds();
                notDue.set(stack.app().metrics().counter("close_not_due"));
              },
              10 + FaultHarness.CLAIM_LEASE_MS / 1000.0,
              "bound: the step's 10 s (claimed orders the stepped database called not due were"
                  + " moved to its deadline, up to 10 s late, OrderCloser) + the 1 s claim lease the"
                  + " close itself may take");
      h.table.get("MariaDB NOW() -10 s step, 5 s").put("injected", clock.rewritten() + " stepped");
      ReliabilityTable.appendNote(
          "MariaDB NOW() -10 s step, 5 s",
          clock.rewritten()
              + " statements ran with NOW() "
              + skewMillis.get()
              + " ms off; "
              + notDue.get()
              + " claimed orders refused as not due by the database");
      assertThat(skewMillis.get())
          .as("NOW() through the stack's pool during the step, ms from real time")
          .isBetween(STEP_MS - 2_000, STEP_MS + 2_000);
      assertThat(notDue.get())
          .as("claims the database's clock refused (close_not_due)")
          .isPositive();
      assertThat(outcome.lost()).as("orders lost (still UNPAID)").isEmpty();
      assertThat(outcome.wrongFinalStates()).as("orders in the wrong final state").isEmpty();
      assertThat(outcome.closedEarly()).as("orders closed before their deadline").isZero();
      assertThat(outcome.paidAfterClose()).as("paid-after-close cases").isZero();
      assertThat(outcome.invariantViolations()).as("invariant violations").isEmpty();
    }
  }
}
