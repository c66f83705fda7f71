package io.ordertimeout.sweep;

/** What one sweep invocation did; logged as JSON and returned by the handler. */
public record SweepStats(
    long passes,
    long claimed,
    long closed,
    long notDue,
    long alreadyFinal,
    long failedBatches,
    int shardsHeld,
    long durationMillis) {}
