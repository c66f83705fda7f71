package io.ordertimeout.consume;

/**
 * What one consumer invocation did; logged as JSON and returned by the handler.
 *
 * @param consumer the consumer name it leased, or null when every slot was taken
 * @param read entries delivered by XREADGROUP (new and the name's own pending ones)
 * @param claimed idle entries taken over from other consumers (XAUTOCLAIM)
 * @param closed orders this consumer moved to CLOSED
 * @param acked entries acknowledged (closed, no-op, not due, informational or dead-lettered)
 * @param failed entry deliveries that failed and were left pending for a retry
 * @param deferred entry deliveries left pending, uncounted, because the payer was paying at WeChat
 * @param deadLettered entries moved to the dead-letter store
 * @param groupsCreated times the consumer group (and stream) had to be (re)created
 * @param errors passes that failed (Redis or DB unavailable) and were retried
 */
public record ConsumerStats(
    String consumer,
    long passes,
    long read,
    long claimed,
    long closed,
    long acked,
    long failed,
    long deferred,
    long deadLettered,
    long groupsCreated,
    long errors,
    long durationMillis) {}
