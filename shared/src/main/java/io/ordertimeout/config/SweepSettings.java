package io.ordertimeout.config;

import java.time.Duration;
import java.util.Objects;

/**
 * The timeout sweep: orders per claim, the claim's lease, the idle poll between empty claims, and
 * how many sweep runs are expected live at once ({@code runs}: they share the shards, an older run
 * hands over to them).
 */
public record SweepSettings(int batch, Duration claimLease, Duration poll, int runs) {
  public SweepSettings {
    Objects.requireNonNull(claimLease, "OTC_CLAIM_LEASE_MS");
    Objects.requireNonNull(poll, "OTC_SWEEP_POLL_MS");
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
    this(batch, claimLease, poll, 1);
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
        + runs;
  }
}
