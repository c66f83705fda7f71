package io.ordertimeout.sweep;

/**
 * What one sweep invocation did; logged as JSON and returned by the handler. {@code handedOff}
 * counts orders handed to the stream as close_due (over the time budget, or a failed close).
 */
public record SweepStats(
    long passes,
    long claimed,
    long closed,
    long notDue,
    long alreadyFinal,
    long failedBatches,
    long handedOff,
    int shardsHeld,
    long durationMillis) {}
