package io.ordertimeout.config;

import java.time.Duration;
import java.util.Objects;

/**
 * The timeout sweep: orders per claim, the claim's lease, the idle poll between empty claims, how
 * many sweep runs are expected live at once ({@code runs}: they share the shards, an older run
 * hands over to them), and how long after a pass that claimed orders the next one starts at the
 * earliest ({@code gather}: fewer, larger passes for a later claim, the sweep's trade between close
 * lag and CPU per close).
 */
public record SweepSettings(
    int batch, Duration claimLease, Duration poll, int runs, Duration gather) {
  /** A quarter of the default poll: a deadline is claimed at most 12 ms later. */
  public static final Duration DEFAULT_GATHER = Duration.ofMillis(12);

  public SweepSettings {
    Objects.requireNonNull(claimLease, "OTC_CLAIM_LEASE_MS");
    Objects.requireNonNull(poll, "OTC_SWEEP_POLL_MS");
    Objects.requireNonNull(gather, "OTC_SWEEP_GATHER_MS");
    OtcConfig.require(
        !gather.isNegative() && gather.toMillis() <= 5_000,
        "OTC_SWEEP_GATHER_MS must be 0..5000, was " + gather.toMillis());
    OtcConfig.require(batch >= 1 && batch <= 5000, "OTC_SWEEP_BATCH must be 1..5000, was " + batch);
    OtcConfig.require(
        claimLease.toMillis() >= 1_000,
        "OTC_CLAIM_LEASE_MS must be at least 1000 (a close batch must finish inside its lease), was "
            + claimLease.toMillis());
    OtcConfig.require(
        !poll.isNegative() && poll.toMillis() <= 5_000, "OTC_SWEEP_POLL_MS must be 0..5000");
    OtcConfig.require(runs >= 1 && runs <= 64, "OTC_SWEEP_RUNS must be 1..64, was " + runs);
  }

  /** One run at a time. */
  public SweepSettings(int batch, Duration claimLease, Duration poll) {
    this(batch, claimLease, poll, 1, DEFAULT_GATHER);
  }

  @Override
  public String toString() {
    return "sweepBatch="
        + batch
        + ", claimLease="
        + claimLease
        + ", sweepPoll="
        + poll
        + ", sweepRuns="
        + runs
        + ", sweepGather="
        + gather;
  }
}
