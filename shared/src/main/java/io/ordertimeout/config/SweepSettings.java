package io.ordertimeout.config;

import java.time.Duration;
import java.util.Objects;

/** The timeout sweep: orders per claim, the claim's lease, the idle poll between empty claims. */
public record SweepSettings(int batch, Duration claimLease, Duration poll) {
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
  }

  @Override
  public String toString() {
    return "sweepBatch=" + batch + ", claimLease=" + claimLease + ", sweepPoll=" + poll;
  }
}
