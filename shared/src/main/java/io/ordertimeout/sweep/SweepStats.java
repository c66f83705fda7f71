package io.ordertimeout.sweep;

/**
 * What one sweep invocation did; logged as JSON and returned by the handler. {@code claimCalls}
 * counts the claim script calls (one per pass where Redis is one node and no shard filled its share
 * of the pass; a call per shard on a cluster); {@code handedOff} counts orders handed to the stream
 * as close_due (over the time budget, or a failed close).
 */
public record SweepStats(
    long passes,
    long claimCalls,
    long claimed,
    long closed,
    long notDue,
    long alreadyFinal,
    long failedBatches,
    long handedOff,
    int shardsHeld,
    long durationMillis) {}
