package io.ordertimeout.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.embedded.EmbeddedServers;
import org.junit.jupiter.api.Test;

/**
 * FairnessBench at 1,000 flash-sale orders of tenant A and 20 a second of tenant B for 2 s, through
 * the scheduled sweep invocations: every order of both tenants closed exactly once (rows in
 * MariaDB, one closed event each in the outbox, per tenant), none before its due time, no timer
 * left, invariants hold, and the table shows both tenants' rows. Never asserts a timing.
 */
class FairnessBenchTest {

  @Test
  void bothTenantsOrdersCloseExactlyOnceUnderTheScheduledSweep() throws Exception {
    FairnessBench.Settings settings =
        FairnessBench.Settings.parse(
            new String[] {
              "--flash", "10000", "--scale", "0.1", "--steady-seconds", "20", "--label", "test"
            });
    assertThat(settings.flash()).isEqualTo(1_000);
    assertThat(settings.steady()).isEqualTo(40);

    FairnessBench.Result r = FairnessBench.run(settings, EmbeddedServers.get());

    assertThat(r.drained()).isTrue();
    assertThat(r.flash().closed()).isEqualTo(1_000);
    assertThat(r.flash().lagMillis().getTotalCount()).isEqualTo(1_000);
    assertThat(r.steadyAll().closed()).isEqualTo(40);
    assertThat(r.steadyDuring().closed() + r.steadyAfter().closed()).isEqualTo(40);
    assertThat(r.flash().early() + r.steadyAll().early()).isZero();
    assertThat(r.events())
        .containsEntry(FairnessBench.TENANT_A, 1_000L)
        .containsEntry(FairnessBench.TENANT_B, 40L);
    assertThat(r.timersLeft()).isZero();
    assertThat(r.violations()).isEmpty();
    // the first scheduled invocation, started before t0, closed them all
    assertThat(r.invocations()).isNotEmpty();
    assertThat(r.invocations().get(0).stats().closed()).isEqualTo(1_040);
    assertThat(r.exactlyOnce()).isTrue();
    assertThat(FairnessBench.table(r))
        .contains("| test | A, flash sale | 1000 | 1000 | 0 |")
        .contains("| test | B, all | 40 | 40 | 0 |");
  }
}
